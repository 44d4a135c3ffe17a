"""A re-run's timing and retry settings: its own `PODIUM_RERUN_*` where set, else the judge's
(a re-run is driven by the same machinery as a judge job), and where the media it sends are."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings

from benchmark.plugins import Rerun
from judging.client import Backoff, Outage
from judging.services import outage_limit_seconds as judge_outage_limit_seconds
from judging.services import outage_probe_seconds as judge_outage_probe_seconds


def _setting(name: str, judge_name: str, default: Any) -> Any:
    return getattr(settings, name, getattr(settings, judge_name, default))


def heartbeat_seconds() -> float:
    return _setting("PODIUM_RERUN_HEARTBEAT_SECONDS", "PODIUM_JUDGE_HEARTBEAT_SECONDS", 5.0)


def stale_after() -> timedelta:
    """A running job whose heartbeat is older than this has lost its worker."""
    return timedelta(
        seconds=_setting("PODIUM_RERUN_STALE_SECONDS", "PODIUM_JUDGE_STALE_SECONDS", 60.0)
    )


def max_runs() -> int:
    return _setting("PODIUM_RERUN_MAX_RUNS", "PODIUM_JUDGE_MAX_RUNS", 20)


def backoff() -> Backoff:
    return Backoff(
        base=_setting("PODIUM_RERUN_BACKOFF_SECONDS", "PODIUM_JUDGE_BACKOFF_SECONDS", 1.0)
    )


def outage(endpoint_name: str) -> Outage:
    """A fresh outage tracker with the judge's limit and probe cap (a re-run's outage clock
    starts again with each time slice: its job keeps no outage state)."""
    retry = backoff()
    return Outage(
        limit_seconds=judge_outage_limit_seconds(),
        base=retry.base,
        cap=judge_outage_probe_seconds(),
        endpoint_name=endpoint_name,
    )


def frames_root() -> Path:
    return Path(settings.PODIUM_FRAMES_DIR)


def media_root(benchmark: Any, rerun: Rerun, *, top: Path | None = None) -> Path:
    """Where a benchmark's re-run reads the media it sends: PODIUM_FRAMES_DIR/<slug>/, or
    PODIUM_FRAMES_DIR itself for a plugin whose media are at the top (MedVidBench's frames,
    there since before plugins existed); docs/verification.md. `top` stands for
    PODIUM_FRAMES_DIR (the stand-in model's --frames-dir)."""
    root = top if top is not None else frames_root()
    return root / benchmark.slug if rerun.media_in_slug_folder else root
