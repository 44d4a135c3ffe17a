"""Reaping judge jobs whose worker died (every worker process every few seconds) and queueing
again those whose task was lost (the minute's Schedule)."""

from __future__ import annotations

from inference import lifecycle

from .jobs import JUDGE_JOBS


def reap_stale_jobs(*, as_task: bool = False) -> int:
    """Hand jobs whose worker stopped beating back to the queue (or fail them once they were
    picked up too often), and re-queue jobs that have waited too long for a worker. Returns
    how many were touched. Scheduled every minute."""
    return lifecycle.reap(JUDGE_JOBS, as_task=as_task)


def reap_dead_workers_jobs() -> int:
    """Only the stale half of `reap_stale_jobs`, for the workers' few-second watchdog."""
    return lifecycle.reap_stale(JUDGE_JOBS)
