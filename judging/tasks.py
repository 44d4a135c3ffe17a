"""django-q2 entry points: take a primary key, call one service."""

from __future__ import annotations

from inference.settings import JUDGE

from . import services


def task_run_judge_job(job_id: int) -> str:
    """Work on a judge job for one time slice (well inside the cluster's timeout); the job
    queues itself again if items are left."""
    job = services.run_job(job_id, time_budget=JUDGE.slice_seconds())
    return job.status if job is not None else "not claimed"


def task_reap_judge_jobs() -> int:
    return services.reap_stale_jobs(as_task=True)
