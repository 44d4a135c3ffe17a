"""`recompute_board`, the one writer of a benchmark's board rows (`BoardPlacement`), its
totals and its build (docs/boards.md): the read, then `values`, `placing` and `rows`."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from benchmark.models import Benchmark, Category, Metric
from benchmark.scoring.collector import collector_paused
from core.bulk import insert_rows

from ..board_json import enqueue_board_json
from ..board_orders import enqueue_board_orders
from ..board_state import board_built, board_changes
from ..enums import STATES_JUDGE_PENDING, BoardKind
from ..hooks import board_listeners
from ..intervals import enqueue_rank_intervals
from ..models import (
    BoardBuild,
    BoardEntry,
    BoardPlacement,
    BoardTotals,
    CategoryRating,
)
from ..selectors import board_candidate_rows
from ..snapshots import seal_snapshots
from .placing import placed
from .rows import ROW_AS_IS, Leftovers, board_rows
from .values import decoded_metrics, intervals_text, shown_values


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
    garbage collector paused. On commit, queues the rank intervals, the rows' API JSON and
    the boards' sorted orders (`board_orders`). Idempotent.

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
    or the lock (without `wait`) let it off.

    A transaction of its own (not inside a caller's) commits without waiting for its WAL to
    reach the disk (PostgreSQL's `synchronous_commit` off for it alone; ~0.1 s of a
    100,000-row board's commit here): everything it writes is derived, so a crash that loses
    it leaves the board as it was, its build behind its changes, which the board reaper
    rebuilds (docs/boards.md, "Changes and builds"). Any later commit that waits for its WAL
    makes this one durable too. Inside a caller's transaction the caller's writes decide."""
    owned = not connection.in_atomic_block
    with transaction.atomic():
        if owned and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
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
        placed_rows = _rewrite_board(benchmark)
    BoardBuild.objects.bulk_create(
        [BoardBuild(benchmark=benchmark, changes=changes, built_at=timezone.now())],
        update_conflicts=True,
        unique_fields=["benchmark"],
        update_fields=["changes", "built_at"],
    )
    if not placed_rows:
        # No rows, so no rank intervals to wait for: the build is whole (issue 33).
        seal_snapshots(benchmark, changes)
    for listener in board_listeners:  # hooks.add_board_listener
        transaction.on_commit(partial(listener, benchmark.pk))


def _rewrite_board(benchmark: Benchmark) -> int:
    """`recompute_board`'s work, in its transaction, on the benchmark it locked; returns the
    number of rows it placed."""
    metrics = list(benchmark.metrics.all())
    categories = list(benchmark.categories.all())
    judge_metrics = [metric.key for metric in metrics if metric.is_judge_metric]
    ratings = category_ratings(benchmark, metrics, categories) if metrics else {}
    # The runs' intervals are read only to overlay a rating's on them (`intervals_text`);
    # every other row shows its run's through the rows' view.
    candidates = board_candidate_rows(benchmark, with_intervals=bool(ratings)) if metrics else []
    stored = decoded_metrics(candidates)
    shown, values = shown_values(stored, candidates, ratings, metrics)
    places = placed(benchmark, metrics, categories, candidates, values)
    intervals = (
        [intervals_text(row, ratings.get(row.submission_id, {})) for row in candidates]
        if ratings
        else [None] * len(candidates)
    )
    official, community = BoardKind.OFFICIAL.value, BoardKind.COMMUNITY.value
    boards = [official if row.verified else community for row in candidates]  # Submission.board
    now = timezone.now()
    BoardPlacement.objects.filter(benchmark=benchmark).delete()
    BoardTotals.objects.filter(benchmark=benchmark).delete()
    if candidates:
        leftovers = Leftovers()
        fields, rows = board_rows(
            benchmark,
            candidates,
            stored,
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
        pending = [row.status in STATES_JUDGE_PENDING for row in candidates]
        filled = _filled_metrics(metrics, boards, values, pending)
        teams = {board for board, row in zip(boards, candidates, strict=True) if row.team}
        totals = _board_totals(
            benchmark, boards, with_intervals, keys, now, places.rank, filled, teams
        )
        # What the rows are made of (a million objects at 100,000 entries: the decoded
        # metrics, the candidates) is held by the rows' builders alone from here, and freed
        # by a helper thread once the last row is built, while the server loads the last
        # blocks, rather than after (~0.15-0.2 s here), when this thread mostly waits.
        leftovers.keep(candidates, stored, shown, values, places, intervals, with_intervals)
        del candidates, stored, shown, values, places, intervals, with_intervals
        try:
            insert_rows(BoardPlacement, fields, rows, as_is=ROW_AS_IS)
        finally:
            leftovers.join()
        BoardTotals.objects.bulk_create(totals)
        # The rank intervals need every row's replicates: seconds for a large board, so
        # they follow in the background (docs/statistics.md).
        transaction.on_commit(partial(enqueue_rank_intervals, benchmark.pk))
        # The rows' API JSON likewise (issue 16, `board_json`): ~0.4 s per 10,000 rows.
        transaction.on_commit(partial(enqueue_board_json, benchmark.pk))
        # Each sortable column's order (issue 16, `board_orders`): ~0.1 s per 10,000 rows.
        transaction.on_commit(partial(enqueue_board_orders, benchmark.pk))
        return len(boards)
    return 0


def database_datetime(moment: datetime) -> Any:
    """`moment` as the database's driver is given it for a DateTimeField."""
    return BoardTotals._meta.get_field("computed_at").get_db_prep_save(moment, connection)


def _board_totals(
    benchmark: Benchmark,
    boards: list[str],
    with_intervals: list[bool],
    metric_keys: list[str],
    now: datetime,
    ranks: Any,
    filled: dict[str, list[str]],
    teams: set[str],
) -> list[BoardTotals]:
    """Each board's totals as the rows just written make them (`boards` and `with_intervals`
    are each row's board and whether it shows metric intervals): its rows, those with metric
    intervals, none with rank intervals yet (they follow in the background), and the metric
    of each of its rows' `metric_ranks`, its first row's rank (`ranks`: each row's), the
    metrics it has values of (`filled`) and whether some row names a team (`teams`: the
    boards where one does). None for a board without rows."""
    totals = []
    for kind in BoardKind:
        on_board = [has for board, has in zip(boards, with_intervals, strict=True) if board == kind]
        first_rank = min(
            (int(rank) for board, rank in zip(boards, ranks, strict=True) if board == kind),
            default=1,
        )
        if on_board:
            totals.append(
                BoardTotals(
                    benchmark=benchmark,
                    board=kind,
                    entries=len(on_board),
                    with_intervals=sum(on_board),
                    computed_at=now,
                    metric_keys=metric_keys,
                    first_rank=first_rank,
                    filled_metrics=filled.get(kind, []),
                    has_teams=kind in teams,
                )
            )
    return totals


def _filled_metrics(
    metrics: list[Metric], boards: list[str], values: Any, pending: list[bool]
) -> dict[str, list[str]]:
    """Per board, the keys of the metrics some row has a value for (`values`: one row per
    metric, a column per candidate, NaN where absent), a judge metric also where some row's
    judge is pending (its cell says "pending"), a rating metric always (a pending rating says
    so), in the metrics' order."""
    filled: dict[str, list[str]] = {}
    on_board = {kind: np.array([board == kind for board in boards]) for kind in BoardKind}
    waiting = np.array(pending, dtype=bool)
    for kind, mask in on_board.items():
        if not mask.any():
            continue
        keys = []
        for row, metric in enumerate(metrics):
            # A rating's cell says "rating pending" until its battles are run: never empty.
            has = metric.is_rating or bool(np.isfinite(values[row][mask]).any())
            if not has and metric.is_judge_metric:
                has = bool(waiting[mask].any())
            if has:
                keys.append(metric.key)
        filled[kind] = keys
    return filled


def category_ratings(
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
