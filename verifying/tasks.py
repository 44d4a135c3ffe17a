"""django-q2 entry points: take a primary key, call one service."""

from __future__ import annotations

from django.conf import settings

from . import services


def task_run_rerun_job(job_id: int) -> str:
    """Work on a re-run for one time slice (well inside the cluster's timeout); the job queues
    itself again if items are left."""
    budget = getattr(settings, "PODIUM_RERUN_SLICE_SECONDS", None)
    if budget is None:
        budget = getattr(
            settings, "PODIUM_JUDGE_SLICE_SECONDS", settings.Q_CLUSTER["timeout"] * 0.75
        )
    job = services.run_job(job_id, time_budget=budget)
    return job.status if job is not None else "not claimed"


def task_reap_rerun_jobs() -> int:
    return services.reap_stale_reruns()
