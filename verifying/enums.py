"""The states of a re-run job and of its items, with the moves a job may make (data its one
writer, `verifying.services.set_rerun_status`, checks)."""

from __future__ import annotations

from django.db import models


class RerunStatus(models.TextChoices):
    """queued -> running -> done; running -> queued when a worker's time slice ends or a
    stalled worker's job is handed out again; failed or cancelled end a job."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"

    @property
    def allowed_next(self) -> frozenset[RerunStatus]:
        return RERUN_TRANSITIONS[self]

    @property
    def is_terminal(self) -> bool:
        return not RERUN_TRANSITIONS[self]


R = RerunStatus
RERUN_TRANSITIONS: dict[RerunStatus, frozenset[RerunStatus]] = {
    R.QUEUED: frozenset({R.RUNNING, R.FAILED, R.CANCELLED}),
    R.RUNNING: frozenset({R.QUEUED, R.DONE, R.FAILED, R.CANCELLED}),
    R.DONE: frozenset(),
    R.FAILED: frozenset(),
    R.CANCELLED: frozenset(),
}
ACTIVE_RERUN_STATES = frozenset({R.QUEUED, R.RUNNING})


class ItemState(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Answered"
    FAILED = "failed", "Failed after every attempt"
