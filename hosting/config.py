"""Hosted evaluation's settings: its timing and retry settings (`PODIUM_HOSTED_*`, else the
judge's, `inference.settings`), a benchmark's rules (whether it evaluates model endpoints,
the token cap and the pace of one request), where the media it sends are, and which endpoint
addresses are allowed (the rule itself is the engine's: `inference.models`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings

from benchmark.plugins import Rerun
from core.private_files import MediaFolder
from inference.models import endpoint_address_problem as endpoint_address_problem
from inference.models import private_endpoints_allowed as private_endpoints_allowed
from inference.settings import KindSettings

HOSTED = KindSettings("PODIUM_HOSTED")
# Questions in flight at once for one request: the engine's bound on a hosted evaluation's
# speed is this over the endpoint's latency (docs/hosted.md, "Figures").
DEFAULT_CONCURRENCY = 8
# A hosted endpoint's answer may take long (a large model, a long open-ended answer).
DEFAULT_TIMEOUT_SECONDS = 120.0


def slice_seconds() -> float:
    return HOSTED.slice_seconds()


def heartbeat_seconds() -> float:
    return HOSTED.heartbeat_seconds()


def stale_after() -> timedelta:
    """A running request whose heartbeat is older than this has lost its worker."""
    return HOSTED.stale_after()


def outage_limit() -> timedelta:
    """How long an endpoint may stay unreachable before its request fails."""
    return timedelta(seconds=HOSTED.outage_limit_seconds())


def max_runs() -> int:
    return HOSTED.max_runs()


def concurrency() -> int:
    return int(getattr(settings, "PODIUM_HOSTED_CONCURRENCY", None) or DEFAULT_CONCURRENCY)


@dataclass(frozen=True)
class HostedRules:
    """A benchmark's hosted evaluation: whether it takes model endpoints, the prompt and
    completion tokens one request may spend, and the calls it may make a minute."""

    enabled: bool
    max_tokens: int
    requests_per_minute: int


def hosted_rules(benchmark: Any) -> HostedRules:
    """The benchmark's rules, as `ensure_benchmark` stored them from its definition
    (`benchmark.definitions`: hosted_evaluation, hosted_max_tokens,
    hosted_requests_per_minute)."""
    return HostedRules(
        bool(benchmark.hosted_evaluation),
        int(benchmark.hosted_max_tokens),
        int(benchmark.hosted_requests_per_minute),
    )


def media_root(benchmark: Any, rerun: Rerun) -> MediaFolder:
    """Where the media a hosted evaluation sends are: the same folder of the private store a
    verification re-run reads (`verifying.config.media_root`: frames/<slug>/, or frames/
    itself for MedVidBench's frames), since both ask the plugin's `rerun.questions`."""
    root = MediaFolder("frames")
    return root / benchmark.slug if rerun.media_in_slug_folder else root
