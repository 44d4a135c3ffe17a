"""The states of a judge job and of its items. A judge job moves through the engine's job states
(`inference.enums.JobStatus`, re-exported here; its one writer is
`judging.services.set_job_status`); its items are labelled in the judge's words."""

from __future__ import annotations

from django.db import models

from inference.enums import ACTIVE_JOB_STATES, JOB_TRANSITIONS, JobStatus

__all__ = ["ACTIVE_JOB_STATES", "JOB_TRANSITIONS", "ItemState", "JobStatus"]


class ItemState(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Judged"
    FAILED = "failed", "No usable answer after every attempt"
