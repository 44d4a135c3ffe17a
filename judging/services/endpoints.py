"""The judge's settings and endpoints: the timing settings every part of a job reads, and which
endpoint judges a benchmark (configured as data)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction

from benchmark.models import Benchmark
from core import audit

from .. import lifecycle
from ..client import Backoff
from ..models import JudgeEndpoint

BULK_BATCH = 1000


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def heartbeat_seconds() -> float:
    return _setting("PODIUM_JUDGE_HEARTBEAT_SECONDS", 5.0)


def stale_after() -> timedelta:
    """A running job whose heartbeat is older than this has lost its worker."""
    return timedelta(seconds=_setting("PODIUM_JUDGE_STALE_SECONDS", 60.0))


def max_runs() -> int:
    """How many times a job may be picked up after its worker died before it fails."""
    return _setting("PODIUM_JUDGE_MAX_RUNS", 20)


def outage_limit_seconds() -> float:
    """How long the endpoint may stay unreachable (only transient failures, across time
    slices) before the job fails with the metrics pending."""
    return float(_setting("PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS", 1800.0))


def outage_probe_seconds() -> float:
    """The longest wait between two probes of an unreachable endpoint."""
    return float(_setting("PODIUM_JUDGE_OUTAGE_PROBE_SECONDS", 30.0))


def claim_poll_seconds() -> float:
    """How often a job looks again at prompts another job is judging."""
    return float(_setting("PODIUM_JUDGE_CLAIM_POLL_SECONDS", 0.5))


def backoff() -> Backoff:
    return Backoff(base=_setting("PODIUM_JUDGE_BACKOFF_SECONDS", 1.0))


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
