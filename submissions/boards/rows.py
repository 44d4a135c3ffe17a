"""The board's rows as `recompute_board` writes them: a tuple per placement, built a block
at a time while the COPY sends the blocks before (docs/boards.md, "Eighth pass")."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from benchmark.models import Benchmark
from core.bulk import COPY_BLOCK_ROWS, decoded_json

from ..enums import STATES_JUDGE_PENDING
from ..models import CategoryRating
from ..selectors import BoardCandidate
from .placing import BoardPlaces
from .values import Shown, partial_judgements


class Leftovers:
    """What a recompute's rows were made of, freed by a helper thread (`free`) while this
    one goes on, and waited for (`join`)."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.thread: threading.Thread | None = None

    def keep(self, *items: Any) -> None:
        self.items.extend(items)

    def free(self, more: list[Any]) -> None:
        """Drop those kept and the items of `more` (emptied here), in a helper thread: freed
        there when these were their last references."""
        freed = self.items + more
        more.clear()
        self.items = []
        self.thread = threading.Thread(target=freed.clear, name="podium-board-leftovers")
        self.thread.start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


_ROW_FIELDS = (
    "benchmark", "submission", "evaluation", "board", "rank", "mean_rank", "wins",
    "own_values", "highlights", "judge_pending", "judged_over", "own_intervals",
    "model_key", "team_key", "category_ranks", "rating_battles",
    "metric_ranks", "rank_sum", "normalized_sum", "position", "overall_position",
)  # fmt: skip
ROW_AS_IS = (
    "own_values", "highlights", "judged_over", "own_intervals",
    "category_ranks", "rating_battles", "metric_ranks",
)  # fmt: skip
# Columns a board usually leaves empty: the JSON columns whose
# database default is `{}` (`db_default`) and the placement's own values and intervals (null:
# the run's). One that every row leaves empty (a board without partial judgements,
# categories, ratings, or values that are not the run's, or with no value marked) is not
# written, and the database fills in its default rather than parsing the same text on
# every row.
_EMPTY_BY_DEFAULT = frozenset(
    ("highlights", "judged_over", "category_ranks", "rating_battles", "own_values", "own_intervals")
)


def board_rows(
    benchmark: Benchmark,
    candidates: list[BoardCandidate],
    stored: list[dict[str, Any]],
    shown: list[Shown] | None,
    places: BoardPlaces,
    ratings: dict[int, dict[str, CategoryRating]],
    intervals: list[str | None],
    boards: list[str],
    *,
    judge_metrics: list[str],
    leftovers: Leftovers,
) -> tuple[tuple[str, ...], Iterator[tuple[Any, ...]]]:
    """The fields written and the rows to insert, one tuple per candidate in the fields'
    order (`_ROW_FIELDS` less the columns of `_EMPTY_BY_DEFAULT` that every row leaves
    empty), in the order of the position indexes (`overall_position`: each insert then lands
    beside the one before rather than anywhere in them).

    Every input is put in that order once (numpy's take for the ranking's arrays, one `map`
    per list), then the rows are built as they are read, `_ROWS_PER_BLOCK` at a time, each
    block from slices of those: the COPY's first block reaches the server while the next
    ones are built, so the server parses and indexes the rows on the other core while this
    one builds them, rather than after. A block is built column by column (one
    comprehension per field, zipped into rows: a loop building each row's 20 values cost
    three times as much). The values and intervals are the placement's own only where they
    are not its run's (`intervals` holds the overlaid intervals' JSON, None for the run's):
    None otherwise, which the rows' view reads from the run. The JSON is `json.dumps`'
    text, the rank lists and dictionaries through one format string each. `stored` is each
    run's metrics as decoded, `shown` what each row shows of them (None: every row its run's,
    unchanged: `values.shown_values`)."""
    count = len(candidates)
    # Only the runs whose counts may be partial have any (`PartialCounts`): decoded in one
    # call, and looked at only when the benchmark has a judge metric.
    counted = [index for index, row in enumerate(candidates) if row.counts_json not in _NO_COUNTS]
    judged_over: dict[int, dict[str, dict[str, int]]] = {}
    if counted and judge_metrics:
        decoded = decoded_json([candidates[index].counts_json for index in counted])
        for index, counts in zip(counted, decoded, strict=True):
            if found := partial_judgements(counts, stored[index], judge_metrics):
                judged_over[index] = found
    submissions = np.array([row.submission_id for row in candidates], dtype=np.int64)
    position, overall = _positions(places.rank, places.official, submissions)
    order = np.argsort(overall, kind="stable")
    indices = order.tolist()

    def ordered(values: list[Any]) -> list[Any]:
        return list(map(values.__getitem__, indices))

    rows_of = ordered(candidates)
    shown_of = ordered(shown) if shown is not None else []
    rated = ordered([ratings.get(row.submission_id, {}) for row in candidates]) if ratings else []
    highlights = places.highlights
    category_keys = list(places.category_ranks)
    category_ranks = [found[order].tolist() for found in places.category_ranks.values()]
    metric_ranks = places.metric_ranks[:, order].tolist()
    # Each field's column for the rows start:stop (in that order), and whether a row may
    # hold anything but its database default (`_EMPTY_BY_DEFAULT`: a column no row fills is
    # not written).
    columns: dict[str, Callable[[int, int], list[Any]]] = {
        "benchmark": lambda start, stop: [benchmark.pk] * (stop - start),
        "submission": _sliced(submissions[order].tolist()),
        "evaluation": lambda start, stop: [row.run_id for row in rows_of[start:stop]],
        "board": _sliced(ordered(boards)),
        "rank": _sliced(places.rank[order].tolist()),
        "mean_rank": _sliced(places.mean_rank[order].tolist()),
        "wins": _sliced(places.wins[order].tolist()),
        "own_values": lambda start, stop: [
            json.dumps(seen.values) if seen.changed else None for seen in shown_of[start:stop]
        ],
        "highlights": lambda start, stop: [
            json.dumps(highlights[index]) if index in highlights else "{}"
            for index in indices[start:stop]
        ],
        "judge_pending": lambda start, stop: [
            row.status in STATES_JUDGE_PENDING for row in rows_of[start:stop]
        ],
        "judged_over": lambda start, stop: [
            json.dumps(judged_over[index]) if index in judged_over else "{}"
            for index in indices[start:stop]
        ],
        "own_intervals": _sliced(ordered(intervals)),
        "model_key": lambda start, stop: [row.model_name.casefold() for row in rows_of[start:stop]],
        "team_key": lambda start, stop: [row.team.casefold() for row in rows_of[start:stop]],
        "category_ranks": lambda start, stop: _rank_dictionaries(
            category_keys, [ranks[start:stop] for ranks in category_ranks]
        ),
        "rating_battles": lambda start, stop: [
            json.dumps({key: rating.battles for key, rating in found.items()}) if found else "{}"
            for found in rated[start:stop]
        ],
        "metric_ranks": lambda start, stop: _rank_lists(
            [ranks[start:stop] for ranks in metric_ranks], stop - start
        ),
        "rank_sum": _sliced(places.rank_sum[order].tolist()),
        "normalized_sum": _sliced(places.normalized_sum[order].tolist()),
        "position": _sliced(position[order].tolist()),
        "overall_position": _sliced(overall[order].tolist()),
    }
    filled = {
        "own_values": shown is not None and any(seen.changed for seen in shown),
        "highlights": bool(highlights),
        "judged_over": bool(judged_over),
        "own_intervals": intervals.count(None) < count,
        "category_ranks": bool(category_keys),
        "rating_battles": any(rated),
    }
    fields = tuple(
        field for field in _ROW_FIELDS if field not in _EMPTY_BY_DEFAULT or filled[field]
    )
    builders = [columns[field] for field in fields]

    def rows() -> Iterator[tuple[Any, ...]]:
        for start in range(0, count, _ROWS_PER_BLOCK):
            stop = min(start + _ROWS_PER_BLOCK, count)
            yield from zip(*(build(start, stop) for build in builders), strict=True)
        # The last row is built: the builders held the last references to what the rows
        # were made of (with `leftovers`' own).
        leftovers.free(builders)

    return fields, rows()


def _sliced(values: list[Any]) -> Callable[[int, int], list[Any]]:
    """The column `values` (in the rows' order) for the rows start:stop."""
    return lambda start, stop: values[start:stop]


# Rows `board_rows` builds at a time (as many as `core.bulk` sends to the server in a block).
_ROWS_PER_BLOCK = COPY_BLOCK_ROWS


def _positions(
    ranks: np.ndarray, official: np.ndarray, submissions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's 1-based place in its board's rank order (ranks are unique within a board;
    `official` says which rows are on the Official board) and among all rows by rank then
    submission id (`BoardPlacement.position`, `overall_position`)."""
    overall = np.empty(len(ranks), dtype=np.int64)
    overall[np.lexsort((submissions, ranks))] = np.arange(1, len(ranks) + 1)
    position = np.empty(len(ranks), dtype=np.int64)
    for on_board in (np.flatnonzero(official), np.flatnonzero(~official)):
        position[on_board[np.argsort(ranks[on_board], kind="stable")]] = np.arange(
            1, len(on_board) + 1
        )
    return position, overall


def _rank_lists(ranks: list[list[int]], count: int) -> list[str]:
    """`json.dumps([rank, ...])` for each of `count` rows (`ranks[k][i]` is row i's rank on
    the k-th metric), through one format string rather than a call per row."""
    if not ranks:
        return ["[]"] * count
    text = "[" + ", ".join(["%d"] * len(ranks)) + "]"
    return [text % row for row in zip(*ranks, strict=True)]


def _rank_dictionaries(keys: list[str], ranks: list[list[int]]) -> list[str]:
    """`json.dumps({key: rank, ...})` for each row (`ranks[k][i]` is row i's rank for
    `keys[k]`), through one format string rather than a call per row; none without keys."""
    if not keys:
        return []
    text = "{" + ", ".join(f"{json.dumps(key)}: %d" for key in keys) + "}"
    return [text % row for row in zip(*ranks, strict=True)]


_NO_COUNTS = frozenset((None, "{}", "null"))  # a run's counts with nothing in them
