"""The life of a background job that runs in time slices on the worker cluster: one status
writer, claiming a job for this worker, handing it back at the end of a slice, and reaping jobs
whose worker died. Shared by every kind of engine job (the judge's, the verification re-runs,
hosted evaluation), whose models inherit `inference.models.Job`: `status` (`JobStatus` values),
`message`, `runs`, `interruptions`, `worker`, `created_at`, `started_at`, `heartbeat_at`,
`finished_at`. A kind says what differs in a `JobKind`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from core import audit
from core.exceptions import InvalidTransition
from core.workers import worker_id

from .enums import JobStatus

logger = logging.getLogger(__name__)

__all__ = ["JobKind", "claim", "reap", "set_status", "worker_id"]


@dataclass(frozen=True)
class JobKind:
    """What differs between kinds of job: the model, how they are named in messages and the
    audit trail, their timing settings, and how one is queued and failed."""

    model: type[models.Model]
    label: str  # "A judge job"
    audit_prefix: str  # "judging.job"
    stale_after: Callable[[], timedelta]
    max_runs: Callable[[], int]
    enqueue: Callable[[int], None]
    fail: Callable[[Any, str], Any]
    too_many_runs: str
    select_related: tuple[str, ...] = ("endpoint",)


class Slice:
    """A worker's time slice of a job, for `client.run_bounded`: `tick` beats at most every
    `heartbeat` seconds (`beat` saves the progress and the heartbeat) and notices a job that
    was cancelled meanwhile (`still_running`); `should_stop` once it was, or once `budget`
    seconds have passed (None: no limit)."""

    def __init__(
        self,
        *,
        budget: float | None,
        heartbeat: float,
        still_running: Callable[[], bool],
        beat: Callable[[], None],
    ) -> None:
        self.deadline = None if budget is None else time.monotonic() + budget
        self.heartbeat = heartbeat
        self.still_running = still_running
        self.beat = beat
        self.last_beat = time.monotonic()
        self.cancelled = False

    def tick(self) -> None:
        if time.monotonic() - self.last_beat < self.heartbeat:
            return
        self.last_beat = time.monotonic()
        self.cancelled = not self.still_running()
        self.beat()

    def should_stop(self) -> bool:
        return self.cancelled or (self.deadline is not None and time.monotonic() > self.deadline)

    def overdue(self, grace: float) -> bool:
        """Whether the slice ended more than `grace` seconds ago: how long calls already sent
        may take to finish after it (`client.run_bounded`'s `should_abort`)."""
        return self.deadline is not None and time.monotonic() > self.deadline + grace


def set_status(
    kind: JobKind,
    job: Any,
    new: JobStatus,
    *,
    actor: Any = None,
    message: str | None = None,
    note: str = "",
) -> Any:
    """The one writer of a job's status: checks the move, stamps the times, saves only those
    fields and writes an audit row `<prefix>.<state>`. Call it inside the caller's
    transaction."""
    current = JobStatus(job.status)
    if new not in current.allowed_next:
        raise InvalidTransition(f"{kind.label} cannot go from {current.label} to {new.label}.")
    job.status = new
    fields = ["status"]
    now = timezone.now()
    if new == JobStatus.RUNNING:
        job.worker, job.heartbeat_at = worker_id(), now
        job.runs += 1
        job.started_at = job.started_at or now
        fields += ["worker", "heartbeat_at", "runs", "started_at"]
    if new == JobStatus.QUEUED:
        job.queued_at = now
        fields.append("queued_at")
    if new.is_terminal:
        job.finished_at = now
        fields.append("finished_at")
    if message is not None:
        job.message = message
        fields.append("message")
    job.save(update_fields=fields)
    audit.record(
        f"{kind.audit_prefix}.{new.value}",
        actor=actor,
        target=job,
        **{"from": current.value, "to": new.value, "note": note or (message or "")},
    )
    return job


def claim(kind: JobKind, job_id: int) -> Any | None:
    """Mark the job running for this worker, or None when there is nothing to do here (it is
    finished, another worker holds it with a fresh heartbeat, or it was picked up too often:
    then it is failed once this commits)."""
    with transaction.atomic():
        job = kind.model.objects.select_for_update().select_related(*kind.select_related)
        job = job.get(pk=job_id)
        state = JobStatus(job.status)
        if state not in (JobStatus.QUEUED, JobStatus.RUNNING):  # finished, or held for a person
            return None
        if state == JobStatus.RUNNING:
            fresh = job.heartbeat_at and timezone.now() - job.heartbeat_at < kind.stale_after()
            if fresh and job.worker != worker_id():
                return None
            if not fresh and _interrupted_too_often(kind, job):
                return None
            set_status(kind, job, JobStatus.QUEUED, note="picked up again")
        if job.runs >= max_slices():
            message = (
                f"{kind.label} ran for {job.runs} time slices without finishing, the most one "
                "may use (PODIUM_JOB_MAX_SLICES); nothing was published from it."
            )
            transaction.on_commit(lambda: kind.fail(job, message))
            return None
        return set_status(kind, job, JobStatus.RUNNING)


def max_slices() -> int:
    """How many time slices a job may run for: the bound on a job that never finishes (an
    endpoint failing one prompt forever while answering the rest), far above any real job's."""
    return getattr(settings, "PODIUM_JOB_MAX_SLICES", 200)


def _interrupted_too_often(kind: JobKind, job: Any) -> bool:
    """Count one more death of the job's worker; True (and the job failed once this commits)
    when that makes `max_runs`. Only deaths count: a job handed back at the end of a time
    slice may run for as many slices as it needs."""
    job.interruptions += 1
    job.save(update_fields=["interruptions"])
    if job.interruptions < kind.max_runs():
        return False
    transaction.on_commit(lambda: kind.fail(job, kind.too_many_runs))
    return True


def end_slice(kind: JobKind, job_id: int) -> None:
    """Hand a running job back to the queue at the end of its worker's time slice: the next
    slice continues from its items. A job cancelled or finished meanwhile is left alone."""
    with transaction.atomic():
        job = kind.model.objects.select_for_update().get(pk=job_id)
        if job.status == JobStatus.RUNNING:
            set_status(kind, job, JobStatus.QUEUED, note="time slice over")
            transaction.on_commit(lambda: kind.enqueue(job_id))


def reap(kind: JobKind, *, as_task: bool = False) -> int:
    """`reap_stale` and `requeue_lost` (the minute's Schedule runs both, `as_task`). Returns
    how many jobs were touched."""
    return reap_stale(kind) + requeue_lost(kind, as_task=as_task)


def reap_stale(kind: JobKind) -> int:
    """Hand jobs whose worker stopped beating back to the queue, or fail them at their
    `max_runs`-th interruption. Cheap and idempotent: every worker process runs it every few
    seconds (`core.workers`), so a job whose worker died continues once it is stale."""
    now = timezone.now()
    stale_after = kind.stale_after()
    touched = 0
    stale = kind.model.objects.filter(
        status=JobStatus.RUNNING, heartbeat_at__lt=now - stale_after
    ).values_list("pk", flat=True)
    for pk in stale:
        with transaction.atomic():
            job = kind.model.objects.select_for_update().get(pk=pk)
            if job.status != JobStatus.RUNNING or (
                job.heartbeat_at and now - job.heartbeat_at < stale_after
            ):
                continue
            touched += 1
            if _interrupted_too_often(kind, job):
                continue
            set_status(kind, job, JobStatus.QUEUED, note="requeued: its worker stopped beating")
            transaction.on_commit(lambda pk=pk: kind.enqueue(pk))
    return touched


def record_sent(model: type[models.Model], job_id: int) -> None:
    """Record that the broker took the job's task (a kind's enqueue calls this once
    `async_task` returns): the broker delivers it, again if a worker took it and died, so
    `requeue_lost` leaves the job to it."""
    model.objects.filter(pk=job_id).update(sent_at=timezone.now())


def requeue_lost(kind: JobKind, *, as_task: bool = False) -> int:
    """Send again the tasks of queued jobs that the broker does not hold, as the scoring
    runs' backstop does (`submissions.scoring_runs._send_again`, docs/workers.md): a job
    queued more than `PODIUM_TASK_SEND_GRACE_SECONDS` ago and not sent since, and, once the
    broker holds no task at all (`as_task`: but the Schedule's own), every job queued that
    long ago. A job waiting its turn is never sent twice (each pass once sent again every job
    waiting longer than `Q_RETRY`); a duplicate that turns up after all is refused by
    `claim`. Only the minute's Schedule runs this. Returns how many were sent."""
    from core.task_broker import lost_tasks  # django_q's broker: only where used

    now = timezone.now()
    waiting = kind.model.objects.annotate(last_queued=Coalesce("queued_at", "created_at")).filter(
        status=JobStatus.QUEUED,
        last_queued__lt=now - timedelta(seconds=settings.PODIUM_TASK_SEND_GRACE_SECONDS),
    )
    lost = lost_tasks(waiting, holding=1 if as_task else 0)
    for pk in lost:
        logger.warning("%s %s was queued but its task is lost: sending it again", kind.label, pk)
        kind.enqueue(pk)
    return len(lost)
