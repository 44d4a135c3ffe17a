"""The materialised boards: `recompute_board` is the one writer of `BoardEntry` and of
`BoardBuild` (docs/boards.md); `board_refresh.schedule_board_refresh` is how every change that
moves a board asks for it."""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime
from functools import partial
from itertools import chain, repeat
from typing import Any, NamedTuple

import msgspec
import numpy as np
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from benchmark.enums import RankingScope
from benchmark.models import Benchmark, Category, Metric
from benchmark.scoring.collector import collector_paused
from benchmark.scoring.ranking import (
    MetricSpec,
    RankingPolicy,
    name_positions,
    rank_table,
    value_ranks,
)
from core.bulk import COPY_BLOCK_ROWS, insert_rows

from .board_json import enqueue_board_json
from .enums import STATES_JUDGE_PENDING, BoardKind
from .hooks import add_board_listener as add_board_listener  # the name callers know
from .hooks import board_listeners
from .intervals import enqueue_rank_intervals
from .models import (
    BoardBuild,
    BoardChanges,
    BoardEntry,
    BoardPlacement,
    BoardTotals,
    CategoryRating,
)
from .selectors import (
    BoardCandidate,
    board_candidate_rows,
    metric_specs,
    metric_value,
    ranking_policy,
)

logger = logging.getLogger(__name__)


def recompute_board(
    benchmark: Benchmark, *, unless_built: int | None = None, wait: bool = True
) -> QuerySet[BoardEntry]:
    """Rank the benchmark's published entries and rewrite its board: the one writer of
    `BoardEntry` (and, with `compute_rank_intervals`, of `BoardTotals`).

    In one transaction, serialised on the benchmark row: reads each published entry's newest
    run with scores, ranks the entries with `benchmark.scoring.ranking` under the benchmark's
    policy (tie method and rounding; scope: the union of both boards, or each board on its
    own rows), marks the best and second-best value of every column within each board, and
    replaces all of the benchmark's rows and its boards' totals. Verified entries form the
    Official board, the others the Community board. A pending judge metric is missing to the
    ranking, so it ranks last until the judge has run (docs/boards.md). Issue 15: a rating
    metric's value and interval come from the entry's `CategoryRating` (missing, so last,
    until its battles are run), and each row stores its rank in every category
    (`category_ranking`, under the same scope) and its model facts. Issue 16: each row also
    stores its per-metric ranks and tiebreak values (what the rankings API shows), and the
    rows are written as plain tuples (`core.bulk.insert_rows`: COPY on PostgreSQL) with the
    garbage collector paused. On commit, queues the rank intervals. Idempotent.

    The board's changes (`BoardChanges.total`, read under the lock before the entries) are
    recorded as built (`BoardBuild`), with the rows. With `unless_built`, nothing is done
    when the board already includes that many changes (a recompute that committed after the
    change did): how a burst of changes costs one recompute, not one each. Without `wait`,
    nothing is done either when another transaction holds the benchmark's lock (a recompute
    under way; the reaper's choice, which looks again a few seconds later).

    Returns the board's rows with their submissions, by board then rank, as a query: read
    when the caller uses it (a caller that does not look costs nothing).
    """
    rebuild_board(benchmark, unless_built=unless_built, wait=wait)
    return (
        BoardEntry.objects.filter(benchmark=benchmark)
        .select_related("submission")
        .order_by("board", "position")  # rank order (the unique index's)
    )


def rebuild_board(
    benchmark: Benchmark, *, unless_built: int | None = None, wait: bool = True
) -> bool:
    """`recompute_board`'s transaction; True if it rewrote the rows, False if `unless_built`
    or the lock (without `wait`) let it off."""
    with transaction.atomic():
        locking = Benchmark.objects.select_for_update(skip_locked=not wait)
        locked = locking.get(pk=benchmark.pk) if wait else locking.filter(pk=benchmark.pk).first()
        if locked is None:  # another transaction holds the lock (or the benchmark is gone)
            return False
        if unless_built is not None and board_built(locked.pk) >= unless_built:
            return False
        _rebuild(locked)
        return True


def _rebuild(benchmark: Benchmark) -> None:
    """`recompute_board`'s work, in its transaction, on the benchmark it locked: the rows,
    and the changes they include."""
    changes = board_changes(benchmark.pk)  # before the entries: a later change is not in them
    # The rows' data is freed when `_rewrite_board` returns, before the collector runs
    # again: resumed with them alive, its first collection walked every one (~0.2 s at
    # 100,000 entries) for nothing, since none is part of a cycle.
    with collector_paused():
        _rewrite_board(benchmark)
    BoardBuild.objects.bulk_create(
        [BoardBuild(benchmark=benchmark, changes=changes, built_at=timezone.now())],
        update_conflicts=True,
        unique_fields=["benchmark"],
        update_fields=["changes", "built_at"],
    )
    for listener in board_listeners:  # hooks.add_board_listener
        transaction.on_commit(partial(listener, benchmark.pk))


def board_changes(benchmark_id: int) -> int:
    """How many times the benchmark's board inputs have changed (committed changes, and the
    current transaction's own)."""
    found = BoardChanges.objects.filter(benchmark_id=benchmark_id).values_list("total", flat=True)
    return found.first() or 0


def board_built(benchmark_id: int) -> int:
    """How many of those changes the board's rows include (`BoardBuild`)."""
    found = BoardBuild.objects.filter(benchmark_id=benchmark_id).values_list("changes", flat=True)
    return found.first() or 0


def _rewrite_board(benchmark: Benchmark) -> None:
    """`recompute_board`'s work, in its transaction, on the benchmark it locked."""
    metrics = list(benchmark.metrics.all())
    categories = list(benchmark.categories.all())
    judge_metrics = [metric.key for metric in metrics if metric.is_judge_metric]
    ratings = _category_ratings(benchmark, metrics, categories) if metrics else {}
    # The runs' intervals are read only to overlay a rating's on them (`_intervals_text`);
    # every other row shows its run's through the rows' view.
    candidates = board_candidate_rows(benchmark, with_intervals=bool(ratings)) if metrics else []
    stored = _decoded_metrics(candidates)
    shown, values = _shown_values(stored, candidates, ratings, metrics)
    places = _placed(benchmark, metrics, categories, candidates, values)
    intervals = (
        [_intervals_text(row, ratings.get(row.submission_id, {})) for row in candidates]
        if ratings
        else [None] * len(candidates)
    )
    official, community = BoardKind.OFFICIAL.value, BoardKind.COMMUNITY.value
    boards = [official if row.verified else community for row in candidates]  # Submission.board
    now = timezone.now()
    BoardPlacement.objects.filter(benchmark=benchmark).delete()
    BoardTotals.objects.filter(benchmark=benchmark).delete()
    if candidates:
        leftovers = _Leftovers()
        fields, rows = _board_rows(
            benchmark,
            candidates,
            shown,
            places,
            ratings,
            intervals,
            boards,
            judge_metrics=judge_metrics,
            leftovers=leftovers,
        )
        with_intervals = [
            row.has_intervals if own is None else own != "{}"
            for row, own in zip(candidates, intervals, strict=True)
        ]
        keys = [metric.key for metric in metrics]
        totals = _board_totals(benchmark, boards, with_intervals, keys, now)
        # What the rows are made of (a million objects at 100,000 entries: the decoded
        # metrics, the candidates) is held by the rows' builders alone from here, and freed
        # by a helper thread once the last row is built, while the server loads the last
        # blocks, rather than after (~0.15-0.2 s here), when this thread mostly waits.
        leftovers.keep(candidates, stored, shown, values, places, intervals, with_intervals)
        del candidates, stored, shown, values, places, intervals, with_intervals
        try:
            insert_rows(BoardPlacement, fields, rows, as_is=_ROW_AS_IS)
        finally:
            leftovers.join()
        BoardTotals.objects.bulk_create(totals)
        # The rank intervals need every row's replicates: seconds for a large board, so
        # they follow in the background (docs/statistics.md).
        transaction.on_commit(partial(enqueue_rank_intervals, benchmark.pk))
        # The rows' API JSON likewise (issue 16, `board_json`): ~0.4 s per 10,000 rows.
        transaction.on_commit(partial(enqueue_board_json, benchmark.pk))


class _Leftovers:
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


def _decoded_json(texts: list[str]) -> list[Any]:
    """Each JSON text decoded, in one call for the array of them (as `_decoded_metrics`)."""
    text = "[" + ",".join(texts) + "]"
    try:
        return _METRICS_DECODER.decode(text)
    except msgspec.MsgspecError:
        return json.loads(text)


def _decoded_metrics(candidates: list[BoardCandidate]) -> list[dict[str, Any]]:
    """Every run's metrics decoded, in one call for a JSON array of them (a call per row
    cost a fifth more), by msgspec: 0.12 s against json's 0.37 s for 100,000 runs here,
    the same dictionaries, the same doubles (both round each number's text correctly) and
    the same integers, however large (a test compares them; orjson, as fast, turns an
    integer past 64 bits into a float). The text is the database's (jsonb's), so standard
    JSON; what msgspec declines that json takes (a number past a double's range) is
    decoded by json."""
    return _decoded_json([row.metrics_json for row in candidates])


_METRICS_DECODER = msgspec.json.Decoder()


class BoardPlaces(NamedTuple):
    """Where `recompute_board` put each candidate (index i is the i-th candidate): its board,
    its rank and the ranking's other columns, its best and second-best marks and its rank
    in each category, as arrays in the candidates' order."""

    official: np.ndarray  # bool: on the Official board
    rank: np.ndarray
    mean_rank: np.ndarray
    wins: np.ndarray
    rank_sum: np.ndarray
    normalized_sum: np.ndarray
    metric_ranks: np.ndarray  # one row per metric (in the metrics' order), a column per candidate
    highlights: dict[int, dict[str, str]]  # candidate index -> {metric key: "best" | "second"}
    category_ranks: dict[str, np.ndarray]  # category key -> rank per candidate


def _placed(
    benchmark: Benchmark,
    metrics: list[Metric],
    categories: list[Category],
    candidates: list[BoardCandidate],
    values: np.ndarray,
) -> BoardPlaces:
    """Rank the candidates as `rank_entries` ranks `ranking_entry` rows (the same values,
    names, keys, policy and groups), through `rank_table` on one matrix of the values, so no
    `Entry` or `RankedEntry` is built per row: each scope group (the union of both boards,
    or each board) ranked on every metric and on each category's, the name tiebreak computed
    once per group; the highlights are each board's "dense" ranks (`value_ranks`). `values`
    is what `ranking_entry` passes to the ranking, one row per metric (`_shown_values`)."""
    count = len(candidates)
    keys = [metric.key for metric in metrics]
    index_of = {key: position for position, key in enumerate(keys)}
    names = [row.model_name for row in candidates]
    ids = [row.submission_id for row in candidates]
    official = np.array([row.verified for row in candidates], dtype=bool)
    boards = [np.flatnonzero(official), np.flatnonzero(~official)]
    groups = [np.arange(count)]
    if benchmark.ranking_scope == RankingScope.PER_BOARD:
        groups = boards
    specs, policy = metric_specs(metrics), ranking_policy(benchmark)
    by_category = [
        (category, *category_ranking(category, metrics, policy)) for category in categories
    ]
    rank = np.zeros(count, dtype=np.int64)
    mean_rank = np.zeros(count)
    wins = np.zeros(count, dtype=np.int64)
    rank_sum = np.zeros(count, dtype=np.int64)
    normalized_sum = np.zeros(count)
    ranks = np.zeros((len(keys), count), dtype=np.int64)
    category_ranks = {
        category.key: np.zeros(count, dtype=np.int64)
        for category, category_specs, _ in by_category
        if category_specs  # none of its metrics exists (a definition still being set up)
    }
    for group in groups:
        if len(group) == 0:
            continue  # the ranking refuses nothing to rank on
        names_order = name_positions([names[i] for i in group], [ids[i] for i in group])
        table = rank_table(values[:, group], specs, policy, names_order)
        rank[group] = table.ranks
        mean_rank[group] = table.mean_rank
        wins[group] = table.wins
        rank_sum[group] = table.rank_sum
        normalized_sum[group] = table.normalized_sum
        ranks[:, group] = table.metric_ranks
        for category, category_specs, category_policy in by_category:
            if not category_specs:
                continue
            rows = [index_of[spec.key] for spec in category_specs]
            found = rank_table(
                values[np.ix_(rows, group)], category_specs, category_policy, names_order
            )
            category_ranks[category.key][group] = found.ranks
    highlights: dict[int, dict[str, str]] = {}
    for board in boards:
        if len(board) == 0:
            continue
        dense = value_ranks(values[:, board], specs, "dense", benchmark.ranking_decimals)
        # A missing value is never marked, even where dense ranking puts it second.
        marked = (dense <= max(HIGHLIGHTS)) & ~np.isnan(values[:, board])
        for column in np.flatnonzero(marked.any(axis=0)).tolist():
            highlights[int(board[column])] = {
                keys[row]: HIGHLIGHTS[int(dense[row, column])]
                for row in np.flatnonzero(marked[:, column]).tolist()
            }
    return BoardPlaces(
        official=official,
        rank=rank,
        mean_rank=mean_rank,
        wins=wins,
        rank_sum=rank_sum,
        normalized_sum=normalized_sum,
        metric_ranks=ranks,
        highlights=highlights,
        category_ranks=category_ranks,
    )


# What `recompute_board` writes of each placement, in `_board_rows`' order. The JSON columns
# are given as JSON text (None for SQL NULL: `insert_rows(as_is=...)`). When the board was
# computed is its totals' (`BoardTotals.computed_at`, which the rows' view shows on each row).
_ROW_FIELDS = (
    "benchmark", "submission", "evaluation", "board", "rank", "mean_rank", "wins",
    "own_values", "highlights", "judge_pending", "judged_over", "own_intervals",
    "model_key", "team_key", "category_ranks", "rating_battles",
    "metric_ranks", "rank_sum", "normalized_sum", "position", "overall_position",
)  # fmt: skip
_ROW_AS_IS = (
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


def _board_rows(
    benchmark: Benchmark,
    candidates: list[BoardCandidate],
    shown: list[Shown],
    places: BoardPlaces,
    ratings: dict[int, dict[str, CategoryRating]],
    intervals: list[str | None],
    boards: list[str],
    *,
    judge_metrics: list[str],
    leftovers: _Leftovers,
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
    text, the rank lists and dictionaries through one format string each."""
    count = len(candidates)
    # Only the runs whose counts may be partial have any (`PartialCounts`): decoded in one
    # call, and looked at only when the benchmark has a judge metric.
    counted = [index for index, row in enumerate(candidates) if row.counts_json not in _NO_COUNTS]
    judged_over: dict[int, dict[str, dict[str, int]]] = {}
    if counted and judge_metrics:
        decoded = _decoded_json([candidates[index].counts_json for index in counted])
        for index, counts in zip(counted, decoded, strict=True):
            if found := _judged_over(counts, shown[index].stored, judge_metrics):
                judged_over[index] = found
    submissions = np.array([row.submission_id for row in candidates], dtype=np.int64)
    position, overall = _positions(places.rank, places.official, submissions)
    order = np.argsort(overall, kind="stable")
    indices = order.tolist()

    def ordered(values: list[Any]) -> list[Any]:
        return list(map(values.__getitem__, indices))

    rows_of = ordered(candidates)
    shown_of = ordered(shown)
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
        "own_values": any(seen.changed for seen in shown),
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


# Rows `_board_rows` builds at a time (as many as `core.bulk` sends to the server in a block).
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


def _intervals_text(row: BoardCandidate, rated: dict[str, CategoryRating]) -> str | None:
    """The row's own intervals as JSON text where a rating overlays its run's: its run's as
    `RunReplicates` stored them (`{}` without), with a rating's 95% interval as the interval
    of its metric, in the bootstrap's shape ([low, high] or None), so every reader of
    intervals shows it as it shows the others. None without a rating: the row shows its
    run's (the rows' view)."""
    if not rated:
        return None
    stored = row.intervals_json or "{}"
    overlay = {
        key: None if rating.ci_low is None else [rating.ci_low, rating.ci_high]
        for key, rating in rated.items()
    }
    return json.dumps({**json.loads(stored), **overlay})


def database_datetime(moment: datetime) -> Any:
    """`moment` as the database's driver is given it for a DateTimeField."""
    return BoardTotals._meta.get_field("computed_at").get_db_prep_save(moment, connection)


_NO_COUNTS = frozenset((None, "{}", "null"))  # a run's counts with nothing in them


def _board_totals(
    benchmark: Benchmark,
    boards: list[str],
    with_intervals: list[bool],
    metric_keys: list[str],
    now: datetime,
) -> list[BoardTotals]:
    """Each board's totals as the rows just written make them (`boards` and `with_intervals`
    are each row's board and whether it shows metric intervals): its rows, those with metric
    intervals, none with rank intervals yet (they follow in the background), and the metric
    of each of its rows' `metric_ranks`. None for a board without rows."""
    totals = []
    for kind in BoardKind:
        on_board = [has for board, has in zip(boards, with_intervals, strict=True) if board == kind]
        if on_board:
            totals.append(
                BoardTotals(
                    benchmark=benchmark,
                    board=kind,
                    entries=len(on_board),
                    with_intervals=sum(on_board),
                    computed_at=now,
                    metric_keys=metric_keys,
                )
            )
    return totals


def _category_ratings(
    benchmark: Benchmark, metrics: list[Metric], categories: list[Category]
) -> dict[int, dict[str, CategoryRating]]:
    """Each entry's stored ratings by the rating metric they fill (issue 15): submission id ->
    {metric key: its `CategoryRating`}, in one query (none without a rating category)."""
    rating_keys = {metric.key for metric in metrics if metric.is_rating}
    metric_of = {
        category.key: next(key for key in category.metric_keys if key in rating_keys)
        for category in categories
        if category.ranks_by_rating and rating_keys.intersection(category.metric_keys)
    }
    found: dict[int, dict[str, CategoryRating]] = {}
    if not metric_of:
        return found
    for rating in CategoryRating.objects.filter(benchmark=benchmark, category__in=list(metric_of)):
        found.setdefault(rating.submission_id, {})[metric_of[rating.category]] = rating
    return found


def _shown_values(
    stored: list[dict[str, Any]],
    candidates: list[BoardCandidate],
    ratings: dict[int, dict[str, CategoryRating]],
    metrics: list[Metric],
) -> tuple[list[Shown], np.ndarray]:
    """Each candidate's `Shown` (`_overlaid`) and the matrix of the shown values the ranking
    takes (one row per metric in the metrics' order, a column per candidate, NaN where a
    value is absent). The usual board is checked and laid out in bulk, with no call or
    lookup per row: when no metric is a rating, every stored value is a finite float or
    None (so cleaning changes nothing) and every run stored the same keys in the same order,
    the values come from one array of all of them. Otherwise row by row, as `_overlaid`."""
    keys = [metric.key for metric in metrics]
    count = len(stored)
    if count and not any(metric.is_rating for metric in metrics):
        flat = list(chain.from_iterable(map(dict.values, stored)))
        layouts = set(map(tuple, stored))
        if len(layouts) == 1 and set(map(type, flat)) <= {float, type(None)}:
            array = np.array(flat, dtype=float)  # None is NaN
            # A float that is not finite (none in JSON the database wrote) is cleaned to None.
            if np.count_nonzero(~np.isfinite(array)) == flat.count(None):
                (layout,) = layouts
                table = array.reshape(count, len(layout))
                column = {key: position for position, key in enumerate(layout)}
                values = np.full((len(keys), count), np.nan)
                for row, key in enumerate(keys):
                    if key in column:
                        values[row] = table[:, column[key]]
                return list(map(Shown, stored, stored, repeat(False))), values
    shown = [
        _overlaid(metrics_of, ratings.get(row.submission_id, {}), metrics)
        for row, metrics_of in zip(candidates, stored, strict=True)
    ]
    values = np.array([[row.values.get(key) for row in shown] for key in keys], dtype=float)
    return shown, values.reshape(len(keys), count)


class Shown(NamedTuple):
    """A candidate's metrics as its run stored them and as its row shows them."""

    stored: dict[str, Any]
    values: dict[str, float | None]
    changed: bool  # `values` differs from `stored` (so the stored text cannot be copied)


def _overlaid(
    stored: dict[str, Any], ratings: dict[str, CategoryRating], metrics: list[Metric]
) -> Shown:
    """The values a row shows: the run's, cleaned as every reader cleans them (a number or
    None, so the board can sort on them in the database: `selectors.board_page`), with each
    rating metric taken from the entry's rating (None, pending, until its battles are run)
    rather than from the run: a rating is the platform's, never the scorer's. The run's own
    dictionary when that changes nothing (the usual case: finite floats and None)."""
    values = stored
    for value in stored.values():
        if value is not None and not (type(value) is float and math.isfinite(value)):
            values = {key: metric_value(value) for key, value in stored.items()}
            break
    overlay = {
        metric.key: (metric_value(ratings[metric.key].rating) if metric.key in ratings else None)
        for metric in metrics
        if metric.is_rating
    }
    if overlay:
        values = {**values, **overlay}
    return Shown(stored, values, values is not stored)


def category_ranking(
    category: Category, metrics: list[Metric], policy: RankingPolicy
) -> tuple[list[MetricSpec], RankingPolicy]:
    """What ranks a category's tab (docs/boards.md, "Categories"): a rating category by its
    rating, highest first (a pending rating last, ties by model name); a metrics category by
    its metrics under the benchmark's policy, a lexicographic order keeping the keys that are
    the category's (mean rank over them when none is). No specs when it has nothing to rank
    on."""
    by_key = {metric.key: metric for metric in metrics}
    keys = [key for key in category.metric_keys if key in by_key]
    if category.ranks_by_rating:
        rating = next((key for key in keys if by_key[key].is_rating), None)
        if rating is None:
            return [], policy
        return [MetricSpec(rating, higher_is_better=True)], RankingPolicy(
            tie_method=policy.tie_method,
            decimals=policy.decimals,
            method="lexicographic",
            order=(rating,),
        )
    specs = metric_specs([by_key[key] for key in keys])
    if policy.method != "lexicographic":
        return specs, policy
    order = tuple(key for key in policy.order if key in keys)
    if not order:
        return specs, replace(policy, method="mean_rank", order=())
    return specs, replace(policy, order=order)


def _judged_over(
    counts: Any, stored: dict[str, Any], judge_metrics: list[str]
) -> dict[str, dict[str, int]]:
    """The judge metrics the run publishes over a subset of their items (accepted by a
    maintainer: `judging.services.accept_partial_judgement`), from its decoded counts."""
    if not isinstance(counts, dict):
        counts = {}
    return {
        name: {"judged": counts[name]["scored"], "items": counts[name]["total"]}
        for name in judge_metrics
        if name in counts
        and stored.get(name) is not None
        and counts[name].get("scored", 0) < counts[name].get("total", 0)
    }


# Highlight classes by dense rank within a board: the best value, then the next distinct one.
HIGHLIGHTS = {1: "best", 2: "second"}
