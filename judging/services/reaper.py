"""Reaping judge jobs whose worker died (scheduled every minute)."""

from __future__ import annotations

from .. import lifecycle
from .jobs import JUDGE_JOBS


def reap_stale_jobs() -> int:
    """Hand jobs whose worker stopped beating back to the queue (or fail them once they were
    picked up too often), and re-queue jobs that have waited too long for a worker. Returns
    how many were touched. Scheduled every minute."""
    return lifecycle.reap(JUDGE_JOBS)
