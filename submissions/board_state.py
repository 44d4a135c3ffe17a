"""How far a benchmark's board is behind its inputs (docs/boards.md, "Changes and builds"):
reads of the two one-row-per-benchmark counters, importing nothing but the models, so the
status page's selectors, the refresh and the writer share them without importing each other."""

from __future__ import annotations

from .models import BoardBuild, BoardChanges


def board_changes(benchmark_id: int) -> int:
    """How many times the benchmark's board inputs have changed (committed changes, and the
    current transaction's own)."""
    found = BoardChanges.objects.filter(benchmark_id=benchmark_id).values_list("total", flat=True)
    return found.first() or 0


def board_built(benchmark_id: int) -> int:
    """How many of those changes the board's rows include (`BoardBuild`)."""
    found = BoardBuild.objects.filter(benchmark_id=benchmark_id).values_list("changes", flat=True)
    return found.first() or 0


def board_is_behind(benchmark_id: int) -> bool:
    """Whether a committed change of the board's inputs is not in its rows yet (a refresh is
    on its way): a rank read now may be the one before the change."""
    return board_built(benchmark_id) < board_changes(benchmark_id)
