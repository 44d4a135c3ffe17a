"""The states of a re-run job and of its items. A re-run job moves through the engine's job
states (`inference.enums`: queued -> running -> done; running -> queued when a worker's time
slice ends or a stalled worker's job is handed out again; failed or cancelled end it); its one
writer is `verifying.services.set_rerun_status`."""

from __future__ import annotations

from django.db import models

from inference.enums import ACTIVE_JOB_STATES as ACTIVE_RERUN_STATES
from inference.enums import JOB_TRANSITIONS as RERUN_TRANSITIONS
from inference.enums import JobStatus as RerunStatus

__all__ = ["ACTIVE_RERUN_STATES", "RERUN_TRANSITIONS", "ItemState", "RerunStatus"]


class ItemState(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Answered"
    FAILED = "failed", "Failed after every attempt"
