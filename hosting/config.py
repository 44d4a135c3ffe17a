"""Hosted evaluation's settings: its timing and retry settings (`PODIUM_HOSTED_*`, else the
judge's, `inference.settings`), a benchmark's rules (whether it evaluates model endpoints,
the token cap and the pace of one request), where the media it sends are, and which endpoint
addresses are allowed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from benchmark.plugins import Rerun
from core.private_files import MediaFolder
from inference import guard
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


def private_endpoints_allowed() -> bool:
    """Whether a base URL may point at a loopback, private or link-local address: in
    development and tests (the stand-in model on loopback), never in production unless
    PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS says so (docs/hosted.md, "Security")."""
    return bool(getattr(settings, "PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS", False))


def endpoint_address_problem(base_url: str) -> str:
    """Why Podium's workers must not call `base_url` (""): a host that does not resolve, or
    one whose address is loopback, private, link-local, multicast or reserved (the server's
    own network: its database, a cloud metadata service), unless private endpoints are
    allowed. What a form says; the client checks the same rule again at every connection
    (`inference.transport`), so a DNS answer that changes later is refused there."""
    host = urlsplit(base_url.strip()).hostname or ""
    if not host:
        return "Give a base URL with a host name."
    if private_endpoints_allowed():
        return ""
    try:
        infos = guard.resolve(host, 443)
    except (OSError, UnicodeError):
        return f"The host {host!r} of the base URL does not resolve."
    for info in infos:
        if guard.address_problem(info[4][0]):
            return (
                f"The base URL's host {host!r} is at {info[4][0]}, an address of a private "
                "network; Podium calls model endpoints on the public internet only."
            )
    return ""
