"""Reads over a benchmark's snapshots for "Differences and trends" (issue 33, point 3;
docs/boards.md): the two snapshots a comparison names, their difference
(`snapshot_diff.diff_snapshots`), and an entry's rank in each of the latest snapshots.

An entry page must stay fast on a board with many snapshots of many rows, so its rank history
reads only what it needs: the latest `HISTORY_SNAPSHOTS` snapshots' ids and dates, then its
place in each from the cache, keyed by (snapshot, submission): a sealed snapshot never
changes, so a place once read is right for ever. A snapshot not in the cache has its rows
decompressed and only the entry's row decoded (`_row_in`), not the whole board's JSON.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

from benchmark.models import Benchmark

from .charts.rank_history import HistoryInput
from .models import BoardSnapshot
from .snapshot_diff import SnapshotDiff, diff_snapshots
from .snapshots import snapshot_rows

# The entry page's rank history covers at most this many of the latest snapshots.
HISTORY_SNAPSHOTS = 60
# A place read once is right for ever; the time only bounds what an idle cache holds.
PLACE_CACHE_SECONDS = 7 * 24 * 3600
_ABSENT = "absent"  # cached for a snapshot the entry is not on (None is a cache miss)


class SnapshotNotFound(LookupError):
    """A comparison names a snapshot the benchmark does not have (or not yet written)."""


def parse_snapshot_id(text: str | None, name: str) -> int:
    """The snapshot id in `?from=` or `?to=`; `ValueError` saying what was expected."""
    text = (text or "").strip()
    if not text:
        raise ValueError(f"Choose two snapshots to compare: {name} is missing.")
    if not text.isdigit() or len(text) > 18:
        raise ValueError(f"{name} must be a snapshot's id (a number), not {text[:40]!r}.")
    return int(text)


def snapshot_pair(
    benchmark: Benchmark, first: int, second: int
) -> tuple[BoardSnapshot, BoardSnapshot]:
    """The snapshots `first` and `second` of `benchmark`, older first (by when they were
    taken, then by id), whichever order they were named in. Raises `SnapshotNotFound` naming
    an id the benchmark has no written snapshot of (another benchmark's included)."""
    found = {
        snapshot.pk: snapshot
        for snapshot in BoardSnapshot.objects.filter(
            benchmark=benchmark, pk__in={first, second}, sealed_at__isnull=False
        ).defer("csv")
    }
    for pk in (first, second):
        if pk not in found:
            raise SnapshotNotFound(f"{benchmark.name} has no snapshot {pk}.")
    older, newer = sorted((found[first], found[second]), key=lambda s: (s.taken_at, s.pk))
    return older, newer


def compare_snapshots(older: BoardSnapshot, newer: BoardSnapshot) -> SnapshotDiff:
    """What changed from `older` to `newer` (both read whole, as written)."""
    return diff_snapshots(
        snapshot_rows(older),
        snapshot_rows(newer),
        older_keys=older.metric_keys,
        newer_keys=newer.metric_keys,
    )


# --- an entry's rank over time -----------------------------------------------------------------


@dataclass(frozen=True)
class RankHistory:
    """The entry's places in the latest snapshots (oldest first) and how many were read."""

    points: list[HistoryInput]
    snapshots_read: int

    @property
    def charted(self) -> bool:
        """Enough to draw a line: the entry is on two snapshots or more."""
        return len(self.points) >= 2


def _place_key(snapshot_id: int, submission_id: int) -> str:
    return f"podium:snapshot-place:v1:{snapshot_id}:{submission_id}"


def _row_in(compressed: bytes, submission_id: int) -> dict[str, Any] | None:
    """The row of `submission_id` in a snapshot's compressed rows, or None. The rows are a
    compact JSON array of objects that each begin with `{"rank":` and hold
    `"submission_id":<id>,` once (a quote inside a string is escaped, so neither can occur
    inside a model's name): the row is found by those and decoded alone. Anything unexpected
    falls back to decoding the whole array."""
    body = zlib.decompress(compressed)
    at = body.find(b'"submission_id":%d,' % submission_id)
    if at < 0:
        return None
    start = body.rfind(b'{"rank":', 0, at)
    end = body.find(b',{"rank":', at)
    end = len(body) - 1 if end < 0 else end  # the last row ends before the array's "]"
    try:
        row = json.loads(body[start:end]) if start >= 0 else None
    except ValueError:
        row = None
    if isinstance(row, dict) and row.get("submission_id") == submission_id:
        return row
    return next(
        (row for row in json.loads(body) if row.get("submission_id") == submission_id), None
    )


def rank_history(
    benchmark_id: int, submission_id: int, *, limit: int = HISTORY_SNAPSHOTS
) -> RankHistory:
    """The entry's board and rank (as the board showed it) in each of the benchmark's latest
    `limit` snapshots it is on, oldest first. One query for the snapshots' ids and dates, one
    more for the rows of those whose place is not cached yet."""
    snapshots = list(
        BoardSnapshot.objects.filter(benchmark_id=benchmark_id, sealed_at__isnull=False)
        .order_by("-taken_at", "-pk")
        .values_list("pk", "taken_at")[:limit]
    )
    keys = {pk: _place_key(pk, submission_id) for pk, _ in snapshots}
    cached = cache.get_many(list(keys.values()))
    places: dict[int, Any] = {pk: cached[key] for pk, key in keys.items() if key in cached}
    missing = [pk for pk in keys if pk not in places]
    if missing:
        read = {}
        rows = BoardSnapshot.objects.filter(pk__in=missing).values_list("pk", "rows")
        for pk, compressed in rows.iterator(chunk_size=4):
            row = _row_in(bytes(compressed), submission_id)
            read[pk] = (row["board"], row["rank"]) if row else _ABSENT
        cache.set_many({keys[pk]: place for pk, place in read.items()}, PLACE_CACHE_SECONDS)
        places |= read
    points: list[HistoryInput] = []
    absent_since_last = False
    for pk, taken_at in reversed(snapshots):
        place = places[pk]
        if place == _ABSENT:
            absent_since_last = bool(points)
            continue
        board, rank = place
        points.append(HistoryInput(pk, taken_at, board, rank, after_gap=absent_since_last))
        absent_since_last = False
    return RankHistory(points=points, snapshots_read=len(snapshots))
