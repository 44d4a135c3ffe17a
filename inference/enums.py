"""The states of an engine job and of its items, with the moves a job may make: data its one
writer (`inference.lifecycle.set_status`, called by each kind's own writer) checks. Every kind
of job (a judge job, a re-run, a hosted evaluation) moves through these states."""

from __future__ import annotations

from django.db import models


class JobStatus(models.TextChoices):
    """queued -> running -> done; running -> queued when a stalled worker's job is handed out
    again (or a worker's time slice ends); failed or cancelled end a job. A job whose every
    item was tried but some got no usable answer may be held (running -> held): the judge holds
    such a job, publishing nothing until a maintainer accepts the judgement without them
    (held -> done) or stops it (held -> cancelled). Re-runs share these states and never hold."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    HELD = "held", "Waiting for a maintainer"

    @property
    def allowed_next(self) -> frozenset[JobStatus]:
        return JOB_TRANSITIONS[self]

    @property
    def is_terminal(self) -> bool:
        return not JOB_TRANSITIONS[self]


J = JobStatus
JOB_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    J.QUEUED: frozenset({J.RUNNING, J.FAILED, J.CANCELLED}),
    J.RUNNING: frozenset({J.QUEUED, J.DONE, J.FAILED, J.CANCELLED, J.HELD}),
    J.HELD: frozenset({J.DONE, J.FAILED, J.CANCELLED}),
    J.DONE: frozenset(),
    J.FAILED: frozenset(),
    J.CANCELLED: frozenset(),
}
ACTIVE_JOB_STATES = frozenset({J.QUEUED, J.RUNNING})


class ItemState(models.TextChoices):
    """An item's state: pending until it is answered (done) or every attempt was unusable
    (failed). Each kind labels the states in its own words (`judging.enums.ItemState`: "Judged",
    `verifying.enums.ItemState`: "Answered") with these values."""

    PENDING = "pending", "Pending"
    DONE = "done", "Done"
    FAILED = "failed", "Failed after every attempt"
