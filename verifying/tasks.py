"""django-q2 entry points: take a primary key, call one service."""

from __future__ import annotations

from . import services
from .config import slice_seconds


def task_run_rerun_job(job_id: int) -> str:
    """Work on a re-run for one time slice (well inside the cluster's timeout); the job queues
    itself again if items are left."""
    job = services.run_job(job_id, time_budget=slice_seconds())
    return job.status if job is not None else "not claimed"


def task_reap_rerun_jobs() -> int:
    return services.reap_stale_reruns(as_task=True)
