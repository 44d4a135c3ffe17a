"""Board snapshots (issue 33, docs/boards.md "Snapshots"): what a benchmark's boards said at a
moment, written once and cited by the sha256 of their CSV.

A snapshot is asked for in the transaction of the change it records (`request_snapshot`,
called by `board_refresh.schedule_board_refresh` for every writer of a change of the Official
board, so an admin bulk action, a command and the shell take one as the web does), and
written by the board's writers once the build that includes the change is whole, rank
intervals and tiers included (`seal_snapshots`: from `compute_rank_intervals`, or from the
recompute of a board left without rows), under the benchmark's lock. Requests one build
includes together become one snapshot: the board went from the state before them to the
state after them without showing any between.

The Community board changes with every scoring; it is snapshotted at most daily: the first
build more than `DAILY` after the last snapshot, when it includes a change the last one does
not, takes one (`SnapshotReason.DAILY`).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from threading import Lock
from typing import Any

from django.utils import timezone

from benchmark.models import Benchmark

from .board_csv import CSVExtras, csv_body
from .board_json import JSON_OPTIONS, RankingRow, _iso, ranking_rows
from .enums import BoardKind, SnapshotReason
from .models import BoardEntry, BoardSnapshot

# The Community board's snapshots: at most one per this long.
DAILY = timedelta(days=1)

# What a snapshot row holds besides the rankings' JSON row (`board_json.ranking_rows`): the
# row's place on its board (its medal), its highlighted cells, and what its numbers were
# scored against. The rankings API leaves them out (`ranking_body`).
ROW_EXTRAS = ("position", "highlights", "testset_version", "scorer_version")

# zlib at its default level. bench/snapshots.py at 100,000 entries (bench/board.py's fixture):
# 50 MB of CSV and ~150 MB of rows stored in 31.6 MB (issue 33 asks <= 5 MB), the whole
# snapshot written in ~40-60 s on a loaded 2-core machine (asks <= 2 s); building the rows
# and CSV in Python is most of it, see the bench's docstring.
COMPRESSION_LEVEL = 6


@dataclass(frozen=True)
class SnapshotRequest:
    """What a change of the Official board asks to be remembered by: why, in words, and a
    maintainer's note."""

    reason: SnapshotReason
    description: str = ""
    note: str = ""


def request_snapshot(benchmark_id: int, changes: int, request: SnapshotRequest) -> BoardSnapshot:
    """Ask, in the current transaction, for a snapshot of the board the build that includes
    change number `changes` (`BoardChanges.total`) will show: it commits with the change or
    not at all. Not listed until sealed."""
    return BoardSnapshot.objects.create(
        benchmark_id=benchmark_id,
        taken_at=timezone.now(),
        reason=request.reason,
        description=request.description,
        note=request.note,
        changes=changes,
    )


# The rank intervals and tiers a build is about to be given, by submission: (best, worst,
# tier), None where it has none.
Overlay = Mapping[int, tuple[int | None, int | None, int | None]]


@dataclass(frozen=True)
class PreparedSnapshot:
    """What `prepare_snapshot` read of a build before the lock: its Official digest, and the
    snapshot's content when one is due (None: none due, or not known)."""

    built: int
    digest: str
    content: SnapshotContent | None
    # The content's CSV and rows compressed as stored (b"" without content).
    csv: bytes = b""
    rows: bytes = b""


def prepare_snapshot(benchmark: Benchmark, built: int, overlay: Overlay) -> PreparedSnapshot:
    """The snapshot of build `built` with the rank intervals `overlay` is about to write,
    built before the benchmark's lock is taken: `compute_rank_intervals` then only stores it
    under the lock (`seal_snapshots(..., prepared)`), which holds the lock for an insert,
    not for reading and encoding every row (seconds on a large board, while a verification's
    rebuild would wait). The caller checks under the lock that the build is still the one
    read here; the content is built only when a snapshot is due."""
    digest = official_digest(benchmark, overlay)
    due = _due(benchmark, built, digest, timezone.now())
    if due is None:
        return PreparedSnapshot(built=built, digest=digest, content=None)
    try:
        content = snapshot_content(benchmark, overlay)
    except KeyError:
        # A recompute replaced the rows between the content's two reads: the caller finds
        # the build gone under the lock and writes nothing (the newer build's task will).
        return PreparedSnapshot(built=built, digest=digest, content=None)
    return PreparedSnapshot(
        built=built,
        digest=digest,
        content=content,
        csv=zlib.compress(content.csv, COMPRESSION_LEVEL),
        rows=zlib.compress(content.rows, COMPRESSION_LEVEL),
    )


def seal_snapshots(
    benchmark: Benchmark, built: int, prepared: PreparedSnapshot | None = None
) -> BoardSnapshot | None:
    """Write the snapshot the board's build (`built` changes, its rows and rank intervals
    final) answers: the requests it includes, merged into the newest of them, else the
    Official board's when what it shows changed, else the Community board's daily one when
    due. Called by the board's writers with the benchmark's row locked, with what
    `prepare_snapshot` built of this build when it did; returns the snapshot written, or
    None."""
    ready = prepared if prepared is not None and prepared.built == built else None
    now = timezone.now()
    digest = ready.digest if ready is not None else official_digest(benchmark)
    due = _due(benchmark, built, digest, now)
    if due is None:
        return None
    pending, reason, description = due
    snapshot: BoardSnapshot
    if pending:
        snapshot = pending[-1]
        if len(pending) > 1:
            snapshot.description = "; ".join(
                _unique(request.description for request in pending if request.description)
            )
            snapshot.note = "\n".join(_unique(request.note for request in pending if request.note))
            snapshot.taken_at = max(request.taken_at for request in pending)
            BoardSnapshot.objects.filter(pk__in=[request.pk for request in pending[:-1]]).delete()
    else:
        snapshot = BoardSnapshot(
            benchmark=benchmark,
            taken_at=now,
            reason=reason,
            description=description,
            changes=built,
        )
    if ready is not None and ready.content is not None:
        content, csv, rows = ready.content, ready.csv, ready.rows
    else:
        content = snapshot_content(benchmark)
        csv = zlib.compress(content.csv, COMPRESSION_LEVEL)
        rows = zlib.compress(content.rows, COMPRESSION_LEVEL)
    snapshot.official_digest = digest
    snapshot.sealed_at = now
    snapshot.entries = content.entries
    snapshot.sha256 = content.sha256
    snapshot.csv = csv
    snapshot.rows = rows
    snapshot.metric_keys = content.metric_keys
    snapshot.save()
    return snapshot


def _due(
    benchmark: Benchmark, built: int, digest: str, now: datetime
) -> tuple[list[BoardSnapshot], str, str] | None:
    """Whether build `built` (its Official board's `digest`) is to be snapshotted: the
    requests it includes (oldest first), else a reason and a description; None if not."""
    pending = list(
        BoardSnapshot.objects.filter(
            benchmark=benchmark, sealed_at__isnull=True, changes__lte=built
        ).order_by("changes", "pk")
    )
    if pending:
        return pending, "", ""
    if built == 0:
        return None  # a board never built: nothing has been published
    last = (
        BoardSnapshot.objects.filter(benchmark=benchmark, sealed_at__isnull=False)
        .order_by("-changes", "-pk")
        .values_list("changes", "taken_at", "official_digest")
        .first()
    )
    if last is not None and last[0] >= built:
        return None  # nothing since the last one
    if last is not None and last[2] != digest:
        # The Official board shows something else, though no change of its own asked: a
        # Community entry moved its ranks (the global scope).
        return [], SnapshotReason.RANKS, "The Official board's ranks moved"
    if last is None or now - last[1] >= DAILY:
        description = (
            "The boards after the Community board's changes"
            if last
            else "The boards' first snapshot"
        )
        return [], SnapshotReason.DAILY, description
    return None


# What an Official row shows that a Community entry can move (under the global scope): the
# rank and everything ranked with it.
DIGESTED = (
    "submission_id", "evaluation_id", "position", "rank", "rank_best", "rank_worst", "tier",
    "mean_rank", "wins", "rank_sum", "normalized_sum", "metric_ranks", "highlights",
    "category_ranks", "judge_pending", "judged_over", "values", "intervals", "listed_at",
)  # fmt: skip


def official_digest(benchmark: Benchmark, overlay: Overlay | None = None) -> str:
    """The sha256 of what the Official board shows: each row's place and numbers as its
    build and rank intervals left them (`DIGESTED`; the rank intervals `overlay` gives, where
    it gives them), in board order (its words are its entry's, and every change of those
    asks for a snapshot itself)."""
    rows = list(
        BoardEntry.objects.filter(benchmark=benchmark, board=BoardKind.OFFICIAL)
        .order_by("position")
        .values_list(*DIGESTED)
    )
    if overlay:
        rows = [(*row[:4], *overlay.get(row[0], row[4:7]), *row[7:]) for row in rows]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def _unique(texts: Any) -> list[str]:
    return list(dict.fromkeys(texts))


@dataclass(frozen=True)
class SnapshotContent:
    entries: int
    metric_keys: list[str]
    csv: bytes
    rows: bytes  # the rows' JSON array
    sha256: str


def snapshot_content(benchmark: Benchmark, overlay: Overlay | None = None) -> SnapshotContent:
    """Both boards' rows as the rankings show them now (`board=all`: by rank, Official and
    Community together), with the rank intervals and tiers `overlay` gives where it gives
    them, as the rankings' CSV with each row's test-set and scorer versions last, and as
    their JSON rows with `ROW_EXTRAS`."""
    metrics = list(benchmark.metrics.all())
    keys = [metric.key for metric in metrics]
    entries = BoardEntry.objects.filter(benchmark=benchmark).order_by("overall_position")
    rows = ranking_rows(benchmark, metrics, entries, None)
    extras = {
        submission: (position, highlights, version, scorer)
        for submission, position, highlights, version, scorer in entries.values_list(
            "submission_id",
            "position",
            "highlights",
            "evaluation__test_set__version",
            "evaluation__scorer_version",
        )
    }
    for row in rows:
        body = row.body
        body.update(zip(ROW_EXTRAS, extras[body["submission_id"]], strict=True))
        if overlay and body["submission_id"] in overlay:
            best, worst, tier = overlay[body["submission_id"]]
            body["rank_interval"] = None if best is None else [best, worst]
            body["tier"] = tier
    extra = CSVExtras(
        ratings=[metric.key for metric in metrics if metric.is_rating],
        facts=list(benchmark.fact_keys),
        versions=True,
    )
    text = csv_body(rows, keys, extra)
    body = json.dumps([row.body for row in rows], **JSON_OPTIONS).encode()
    return SnapshotContent(
        entries=len(rows),
        metric_keys=keys,
        csv=text,
        rows=body,
        sha256=hashlib.sha256(text).hexdigest(),
    )


# --- reading ----------------------------------------------------------------------------------


def snapshot_csv(snapshot: BoardSnapshot) -> bytes:
    """The snapshot's CSV, byte for byte as it was written (its sha256 is `snapshot.sha256`)."""
    return zlib.decompress(bytes(snapshot.csv))


class DecodedSnapshot:
    """A sealed snapshot's rows, decoded once per process, and what its pages derive from
    them (`derived`: the rows a filter selects in a sort's order, its summary), kept with
    them. A sealed snapshot never changes (migration 0034's trigger refuses it), so nothing
    kept goes stale; an "as of" page at 100,000 entries then filters and sorts no rows once
    its question was asked (bench/snapshots.py)."""

    def __init__(self, rows: tuple[dict[str, Any], ...]) -> None:
        self.rows = rows
        self._derived: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = Lock()

    def derived(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """`compute()`, kept under `key` with the `DERIVED_KEPT` last asked for. Shared: not
        to be changed."""
        with self._lock:
            if key in self._derived:
                self._derived.move_to_end(key)
                return self._derived[key]
        value = compute()  # outside the lock: two requests may compute it, both alike
        with self._lock:
            self._derived[key] = value
            while len(self._derived) > DERIVED_KEPT:
                self._derived.popitem(last=False)
        return value


# What a decoded snapshot keeps of what was derived from it: each a list of references to
# its rows (~0.5 MB at 100,000), so a few dozen questions (a board, filter, sort, tab).
DERIVED_KEPT = 32


@lru_cache(maxsize=4)
def _decoded(pk: int, sha256: str, sealed_at: datetime) -> DecodedSnapshot:
    # Keyed by what names the sealed snapshot (a test database may give a new one an old
    # key; its sha256 and sealing moment differ), read only when not kept: a request for a
    # kept snapshot reads none of its stored bytes. Four kept: 100,000 decoded rows are
    # several hundred MB.
    compressed = BoardSnapshot.objects.values_list("rows", flat=True).get(pk=pk)
    return DecodedSnapshot(tuple(json.loads(zlib.decompress(bytes(compressed)))))


def decoded_snapshot(snapshot: BoardSnapshot) -> DecodedSnapshot:
    """The sealed `snapshot`'s rows decoded (kept per process) and what was derived of them."""
    assert snapshot.sealed_at is not None, "only a sealed snapshot is read"
    return _decoded(snapshot.pk, snapshot.sha256, snapshot.sealed_at)


def snapshot_rows(snapshot: BoardSnapshot) -> tuple[dict[str, Any], ...]:
    """The snapshot's rows, in the order of both boards (by rank), with `ROW_EXTRAS`. Shared:
    not to be changed."""
    return decoded_snapshot(snapshot).rows


def ranking_body(row: dict[str, Any]) -> dict[str, Any]:
    """A snapshot row as the rankings API's row (without `ROW_EXTRAS`)."""
    return {key: value for key, value in row.items() if key not in ROW_EXTRAS}


def ranking_rows_of(rows: Any) -> list[RankingRow]:
    return [RankingRow(row["board"], ranking_body(row)) for row in rows]


def snapshot_json(snapshot: BoardSnapshot, benchmark: Benchmark) -> bytes:
    """The snapshot as one JSON document: what it is, then its rows as they were written."""
    head = json.dumps(
        {**snapshot_summary(snapshot, benchmark), "metrics": snapshot.metric_keys, "rows": []},
        **JSON_OPTIONS,
    )
    assert head.endswith('"rows":[]}')
    return head[:-3].encode() + zlib.decompress(bytes(snapshot.rows)) + b"}"


def snapshot_summary(snapshot: BoardSnapshot, benchmark: Benchmark) -> dict[str, Any]:
    return {
        "id": snapshot.pk,
        "benchmark": benchmark.slug,
        "taken_at": _iso(snapshot.taken_at),
        "reason": snapshot.reason,
        "description": snapshot.description,
        "note": snapshot.note,
        "sha256": snapshot.sha256,
        "entries": snapshot.entries,
    }


def sealed_snapshots(benchmark: Benchmark) -> Any:
    """The benchmark's written snapshots, newest first, without their contents."""
    return (
        BoardSnapshot.objects.filter(benchmark=benchmark, sealed_at__isnull=False)
        .defer("csv", "rows")
        .order_by("-taken_at", "-pk")
    )


def snapshot_as_of(benchmark: Benchmark, moment: datetime) -> BoardSnapshot | None:
    """The latest written snapshot taken at or before `moment`, or None; without its stored
    contents (read when used: `snapshot_csv`, `decoded_snapshot`)."""
    return (
        BoardSnapshot.objects.filter(
            benchmark=benchmark, sealed_at__isnull=False, taken_at__lte=moment
        )
        .defer("csv", "rows")
        .order_by("-taken_at", "-pk")
        .first()
    )


def first_snapshot(benchmark: Benchmark) -> BoardSnapshot | None:
    return sealed_snapshots(benchmark).order_by("taken_at", "pk").first()


def pending_snapshot_benchmarks(older_than: datetime) -> list[int]:
    """The benchmarks with a snapshot asked for before `older_than` and still not written:
    the build that was to seal it lost its rank intervals (the board reaper queues them)."""
    return list(
        BoardSnapshot.objects.filter(sealed_at__isnull=True, taken_at__lt=older_than)
        .values_list("benchmark_id", flat=True)
        .distinct()
    )
