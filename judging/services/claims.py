"""Claims on verdict cache keys a job is judging right now (issue 10, point 4): the verdict
cache covers work in flight, so two jobs over the same captions pay each prompt once.

A job claims a key just before it sends the prompt (insert-or-skip on the key's unique
constraint, then it reads back who holds it). A key another live job holds is skipped and
visited again later, when it is normally a cache hit. A claim lives until the verdict is written
(the same transaction deletes it) or the job's time slice ends; a claim whose job stopped
beating has expired and is taken over. So concurrent jobs duplicate a call only when a holder
dies mid-call, at most `concurrency` plus a batch of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q
from django.utils import timezone

from ..enums import JobStatus
from ..models import JudgeJob, Verdict, VerdictClaim
from .endpoints import stale_after


def _keyed(job: JudgeJob, hashes: Iterable[str]) -> Q:
    return Q(model=job.model, rubric_version=job.rubric_version, prompt_sha256__in=list(hashes))


def claim_keys(job: JudgeJob, hashes: list[str]) -> set[str]:
    """Claim what it can of `hashes` for `job` and return the ones it now holds (its own,
    new ones, and expired ones it took over). Three statements whatever the number."""
    now = timezone.now()
    VerdictClaim.objects.bulk_create(
        [
            VerdictClaim(
                model=job.model,
                rubric_version=job.rubric_version,
                prompt_sha256=digest,
                job=job,
                claimed_at=now,
            )
            for digest in hashes
        ],
        ignore_conflicts=True,
    )
    live = JudgeJob.objects.filter(status=JobStatus.RUNNING, heartbeat_at__gte=now - stale_after())
    VerdictClaim.objects.filter(_keyed(job, hashes)).exclude(job=job).exclude(job__in=live).update(
        job=job, claimed_at=now
    )
    return set(
        VerdictClaim.objects.filter(_keyed(job, hashes), job=job).values_list(
            "prompt_sha256", flat=True
        )
    )


def release_keys(job: JudgeJob, hashes: Iterable[str] | None = None) -> None:
    """Drop `job`'s claims on `hashes` (all of them when None)."""
    claims = VerdictClaim.objects.filter(job=job)
    if hashes is not None:
        claims = claims.filter(prompt_sha256__in=list(hashes))
    claims.delete()


def cached_verdicts(job: JudgeJob, hashes: Iterable[str]) -> dict[str, int]:
    """prompt hash -> verdict id, for the hashes the cache already holds."""
    return dict(Verdict.objects.filter(_keyed(job, hashes)).values_list("prompt_sha256", "id"))
