"""The judge's settings and endpoints: the timing settings every part of a job reads, and which
endpoint judges a benchmark (configured as data)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction

from benchmark.models import Benchmark
from core import audit
from inference import lifecycle
from inference.client import Backoff
from inference.settings import JUDGE

from ..models import JudgeEndpoint

BULK_BATCH = 1000

# The judge's timing settings, PODIUM_JUDGE_* (`inference.settings`: a re-run's fall back to them).


def heartbeat_seconds() -> float:
    return JUDGE.heartbeat_seconds()


def stale_after() -> timedelta:
    """A running job whose heartbeat is older than this has lost its worker."""
    return JUDGE.stale_after()


def max_runs() -> int:
    """How many times a job may be picked up after its worker died before it fails."""
    return JUDGE.max_runs()


def outage_limit_seconds() -> float:
    """How long the endpoint may stay unreachable (only transient failures, across time
    slices) before the job fails with the metrics pending."""
    return JUDGE.outage_limit_seconds()


def outage_probe_seconds() -> float:
    """The longest wait between two probes of an unreachable endpoint."""
    return JUDGE.outage_probe_seconds()


def claim_poll_seconds() -> float:
    """How often a job looks again at prompts another job is judging."""
    return float(getattr(settings, "PODIUM_JUDGE_CLAIM_POLL_SECONDS", 0.5))


def backoff() -> Backoff:
    return JUDGE.backoff()


worker_id = lifecycle.worker_id

# --- endpoints ---------------------------------------------------------------------------------


def active_endpoint(benchmark: Benchmark) -> JudgeEndpoint | None:
    return JudgeEndpoint.objects.filter(benchmark=benchmark, is_active=True).first()


def judge_unavailable_reason(benchmark: Benchmark) -> str:
    """Why the judge cannot run for this benchmark now ("" when it can)."""
    if not benchmark.has_judge:
        return f"{benchmark.name} has no judged metrics."
    endpoint = active_endpoint(benchmark)
    if endpoint is None:
        return (
            "No LLM judge endpoint is configured for this benchmark yet, so the caption metrics "
            "stay pending. The maintainers have to configure one; no substitute score is ever "
            "shown in its place."
        )
    if endpoint.missing_key:
        # Shown to submitters: which variable (or whether one is set) is for the superusers'
        # judge endpoint admin only.
        return (
            f"The judge endpoint {endpoint.name!r} has no API key configured, so the caption "
            "metrics stay pending until a superuser configures one."
        )
    return ""


def configure_endpoint(
    benchmark: Benchmark, *, name: str, actor: Any = None, **fields: Any
) -> JudgeEndpoint:
    """Create or update the benchmark's endpoint called `name` and make it the active one."""
    with transaction.atomic():
        JudgeEndpoint.objects.filter(benchmark=benchmark, is_active=True).exclude(name=name).update(
            is_active=False
        )
        endpoint, created = JudgeEndpoint.objects.update_or_create(
            benchmark=benchmark, name=name, defaults={**fields, "is_active": True}
        )
        endpoint.full_clean()
        audit.record(
            "judging.endpoint.created" if created else "judging.endpoint.updated",
            actor=actor,
            target=endpoint,
            base_url=endpoint.base_url,
            model=endpoint.model,
        )
    return endpoint
