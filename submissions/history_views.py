"""What changed between two snapshots of a benchmark's boards, as a page (issue 33, point 3;
docs/boards.md "Differences and trends"): `/b/<slug>/history/diff/?from=<id>&to=<id>`, the two
ids in either order (the page says which is older). The difference is
`snapshot_diff.diff_snapshots`'s, as the API's `snapshots/diff/` gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchmark.models import Benchmark, Metric

from .enums import BoardKind
from .snapshot_diff import ChangedEntry, ListedEntry, Move, SnapshotDiff
from .snapshot_trends import (
    SnapshotNotFound,
    compare_snapshots,
    parse_snapshot_id,
    snapshot_pair,
)
from .snapshots import sealed_snapshots
from .views import _visible_benchmark

# Each list on the page shows at most this many entries; the API has every one.
SHOWN_PER_LIST = 200
# The compare form lists this many of the latest snapshots.
FORM_SNAPSHOTS = 500


@dataclass(frozen=True)
class ValueLine:
    key: str
    old: str
    new: str


@dataclass(frozen=True)
class ChangedLine:
    """A changed entry as the page prints it: its values with the metrics' decimals."""

    entry: ChangedEntry
    board: Move[str]  # the boards' labels
    values: list[ValueLine]


@dataclass(frozen=True)
class ListedLine:
    entry: ListedEntry
    board: str


def _board_label(board: str) -> str:
    return BoardKind(board).label if board in BoardKind.values else board


def _number(value: float | None, decimals: int) -> str:
    return "—" if value is None else f"{value:.{decimals}f}"


def diff_lines(diff: SnapshotDiff, metrics: list[Metric]) -> dict[str, Any]:
    """The page's lists (each cut at `SHOWN_PER_LIST`) and how many each had."""
    decimals = {metric.key: metric.display_decimals for metric in metrics}
    changed = [
        ChangedLine(
            entry=entry,
            board=Move(_board_label(entry.board.old), _board_label(entry.board.new)),
            values=[
                ValueLine(
                    key,
                    _number(move.old, decimals.get(key, 4)),
                    _number(move.new, decimals.get(key, 4)),
                )
                for key, move in entry.values.items()
            ],
        )
        for entry in diff.changed[:SHOWN_PER_LIST]
    ]

    def listed(entries: list[ListedEntry]) -> list[ListedLine]:
        return [
            ListedLine(entry, _board_label(entry.place.board)) for entry in entries[:SHOWN_PER_LIST]
        ]

    return {
        "added": listed(diff.added),
        "removed": listed(diff.removed),
        "changed": changed,
        "cut": SHOWN_PER_LIST,
    }


def snapshot_diff(request: HttpRequest, slug: str) -> HttpResponse:
    """The difference between snapshots `?from=` and `?to=` of the benchmark, older first; a
    missing or malformed id re-shows the form saying so (400), an id the benchmark has no
    snapshot of (another benchmark's included) too (404)."""
    benchmark = _visible_benchmark(request, slug)
    context: dict[str, Any] = _form_context(benchmark, request)
    try:
        first = parse_snapshot_id(request.GET.get("from"), "from")
        second = parse_snapshot_id(request.GET.get("to"), "to")
        older, newer = snapshot_pair(benchmark, first, second)
    except ValueError as error:
        return _render(request, context | {"problem": str(error)}, status=400)
    except SnapshotNotFound as error:
        return _render(request, context | {"problem": str(error)}, status=404)
    diff = compare_snapshots(older, newer)
    context |= {
        "older": older,
        "newer": newer,
        "swapped": first != older.pk,
        "diff": diff,
        **diff_lines(diff, list(benchmark.metrics.all())),
    }
    return _render(request, context)


def _form_context(benchmark: Benchmark, request: HttpRequest) -> dict[str, Any]:
    return {
        "benchmark": benchmark,
        "tab": "history",
        "choices": list(sealed_snapshots(benchmark).only("pk", "taken_at")[:FORM_SNAPSHOTS]),
        "chosen_from": request.GET.get("from", ""),
        "chosen_to": request.GET.get("to", ""),
    }


def _render(request: HttpRequest, context: dict[str, Any], *, status: int = 200) -> HttpResponse:
    return render(request, "submissions/snapshot_diff.html", context, status=status)
