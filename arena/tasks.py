"""django-q2 entry points: take a primary key, call one service."""

from __future__ import annotations

from benchmark.models import Benchmark

from . import services


def task_run_battle_job(job_id: int) -> str:
    """Work on a battle job for one time slice (well inside the cluster's timeout); the job
    queues itself again if judge calls are left."""
    job = services.run_job(job_id, time_budget=services.ARENA.slice_seconds())
    return job.status if job is not None else "not claimed"


def task_reap_battle_jobs() -> int:
    return services.reap_stale_jobs(as_task=True)


def task_rate_category(benchmark_id: int, category: str) -> str:
    """Rate a category again (the retry of a rating that failed where it was asked for)."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return "no such benchmark"
    return services.rate_category(benchmark, category).status
