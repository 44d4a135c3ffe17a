"""A re-run's timing and retry settings: its own `PODIUM_RERUN_*` where set, else the judge's
(`inference.settings`: a re-run is driven by the same engine as a judge job), and where the
media it sends are."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from benchmark.media import Folder
from benchmark.plugins import Rerun
from core.private_files import MediaFolder
from inference.client import Backoff, Outage
from inference.settings import KindSettings

RERUN = KindSettings("PODIUM_RERUN")


def slice_seconds() -> float:
    return RERUN.slice_seconds()


def heartbeat_seconds() -> float:
    return RERUN.heartbeat_seconds()


def stale_after() -> timedelta:
    """A running job whose heartbeat is older than this has lost its worker."""
    return RERUN.stale_after()


def max_runs() -> int:
    return RERUN.max_runs()


def backoff() -> Backoff:
    return RERUN.backoff()


def outage(endpoint_name: str) -> Outage:
    """A fresh outage tracker with the re-run's limit and probe cap (PODIUM_RERUN_OUTAGE_*, else
    the judge's); a re-run's outage clock starts again with each time slice: its job keeps no
    outage state."""
    return RERUN.outage(endpoint_name)


FRAMES = "frames"


def frames_root() -> MediaFolder:
    """The media re-runs send, in the private store under frames/ (docs/storage.md)."""
    return MediaFolder(FRAMES)


def media_root(benchmark: Any, rerun: Rerun, *, top: Folder | None = None) -> Folder:
    """Where a benchmark's re-run reads the media it sends: the private store's
    frames/<slug>/, or frames/ itself for a plugin whose media are at the top (MedVidBench's
    frames, there since before plugins existed); docs/verification.md. `top` stands for
    frames/ (a local folder: the stand-in model's --frames-dir)."""
    root = top if top is not None else frames_root()
    return root / benchmark.slug if rerun.media_in_slug_folder else root
