"""A job's progress counters: counted from its items (the truth) and cached on the job for the
status page, plus a cheap running estimate for a foreground progress bar."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, Sum
from django.utils import timezone

from inference.client import OutageState

from ..client import Outcome
from ..enums import ItemState, JobStatus
from ..models import JudgeJob


@dataclass(frozen=True)
class Progress:
    total: int
    done: int
    failed: int
    cached: int
    calls: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def finished(self) -> int:
        return self.done + self.failed


def job_progress(job: JudgeJob) -> Progress:
    """Counted from the items (the truth the job's counters cache)."""
    counts = job.items.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(state=ItemState.DONE)),
        failed=Count("id", filter=Q(state=ItemState.FAILED)),
        cached=Count("id", filter=Q(from_cache=True)),
        calls=Sum("calls", default=0),
        prompt_tokens=Sum("prompt_tokens", default=0),
        completion_tokens=Sum("completion_tokens", default=0),
    )
    return Progress(**counts)


def save_progress(
    job: JudgeJob, *, heartbeat: bool = True, outage: OutageState | None = None
) -> Progress:
    """Refresh the job's counters from its items (and its heartbeat, and the endpoint's outage
    state when given) while it runs."""
    progress = job_progress(job)
    job.items_done, job.items_failed = progress.done, progress.failed
    job.items_cached, job.calls = progress.cached, progress.calls
    job.prompt_tokens, job.completion_tokens = progress.prompt_tokens, progress.completion_tokens
    job.cost = job.endpoint.cost(progress.prompt_tokens, progress.completion_tokens)
    fields = [
        "items_done",
        "items_failed",
        "items_cached",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "cost",
    ]
    if heartbeat:
        job.heartbeat_at = timezone.now()
        fields.append("heartbeat_at")
    if outage is not None:
        job.unreachable_since, job.next_try_at = outage.since, outage.next_try_at
        job.last_transient_error = outage.last_error
        fields += ["unreachable_since", "next_try_at", "last_transient_error"]
    JudgeJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(
        **{name: getattr(job, name) for name in fields}
    )
    return progress


_estimate: dict[int, Progress] = {}


def progress_estimate(job: JudgeJob, outcome: Outcome) -> Progress:
    """A cheap running count for a foreground progress bar (no query per item)."""
    previous = _estimate.get(job.pk) or job_progress(job)
    current = Progress(
        total=previous.total,
        done=previous.done + (outcome.scores is not None),
        failed=previous.failed + (outcome.scores is None),
        cached=previous.cached,
        calls=previous.calls + outcome.calls,
        prompt_tokens=previous.prompt_tokens + outcome.prompt_tokens,
        completion_tokens=previous.completion_tokens + outcome.completion_tokens,
    )
    _estimate[job.pk] = current
    return current


def forget_estimate(job: JudgeJob) -> None:
    _estimate.pop(job.pk, None)
