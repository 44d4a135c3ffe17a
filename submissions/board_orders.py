"""Each sortable column's order of a board, stored after its recompute (issue 16,
`BoardOrder`): a page of a whole board sorted by a metric, the model, the team or the date
then reads its rows by position (`selectors.board_page`) rather than sorting every row in the
database (~0.2-0.45 s for the 66,666-row Community board of a 100,000-entry benchmark, which
joins every row to its run for the value).

The order is `selectors.board_ordering`'s for the overview, computed here on the rows as they
are stored (tests/submissions/test_board_orders.py holds the two equal on boards with ties
and missing values, both ways): missing last whichever the direction, ties in rank order;
a metric compares the shown value as a double (the text the database casts), the model and
the team their casefolded keys by code point (no team last), the date its instant.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from benchmark.models import Benchmark
from core.bulk import decoded_json, numbers_table

from .board_lock import hold_board
from .enums import BoardKind
from .models import BoardBuild, BoardEntry, BoardOrder, BoardPlacement

logger = logging.getLogger(__name__)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def write_board_orders(benchmark: Benchmark) -> int:
    """Store the benchmark's boards' orders (`BoardOrder`): the one writer of them, queued
    on commit by every `recompute_board`. Reads the build and every row of both boards
    under the build's lock (a recompute cannot commit a new build meanwhile, and waits at
    most this read), computes each order, then replaces the benchmark's orders under that
    lock again, unless a newer build has replaced those rows meanwhile (its own writer
    follows). Returns the orders written (0 when none was)."""
    refresh_statistics()
    metric_keys = list(benchmark.metrics.values_list("key", flat=True))
    with transaction.atomic():
        built_at = _locked_build(benchmark)
        rows = _board_rows(benchmark) if built_at is not None else []
    orders = [
        BoardOrder(
            benchmark=benchmark,
            board=board,
            key=key,
            descending=descending,
            built_at=built_at,
            positions=positions.astype(BoardOrder.POSITION_TYPE).tobytes(),
        )
        for board, key, descending, positions in board_orders(rows, metric_keys)
    ]
    with transaction.atomic():
        hold_board(benchmark.pk)  # before the build: the lock order of every board writer
        if built_at is None or _locked_build(benchmark) != built_at:
            return 0  # no board, or a newer build's rows: its writer stores their orders
        BoardOrder.objects.filter(benchmark=benchmark).delete()
        BoardOrder.objects.bulk_create(orders)
    logger.info("board orders of %s: %d", benchmark.slug, len(orders))
    return len(orders)


def _locked_build(benchmark: Benchmark) -> datetime | None:
    """The benchmark's build (`BoardBuild.built_at`), locked until the transaction ends."""
    found = BoardBuild.objects.select_for_update(no_key=True).filter(benchmark=benchmark)
    return found.values_list("built_at", flat=True).first()


def _board_rows(benchmark: Benchmark) -> list[tuple[Any, ...]]:
    """(board, position, overall position, values' JSON text, model key, team key, listed at)
    of every row of the benchmark's boards, fetched 10,000 rows at a time (Django's iteration
    fetches a hundred: half as much time again), each value converted as Django converts it."""
    rows = (
        BoardEntry.objects.filter(benchmark=benchmark)
        .order_by()
        .values_list(
            "board",
            "position",
            "overall_position",
            Cast("values", TextField()),
            "model_key",
            "team_key",
            "listed_at",
        )
    )
    compiler = rows.query.get_compiler(using=rows.db)
    return list(compiler.results_iter(tuple_expected=True, chunk_size=10_000))


def refresh_statistics() -> None:
    """On PostgreSQL, the placements' table analysed when its statistics count fewer rows
    than it has (its first boards, or boards that grew many times over): until autovacuum
    does it, up to a minute later, the planner took a page of a 66,666-row board for one
    row and read it by scanning the whole board (20 ms rather than 1)."""
    if connection.vendor != "postgresql":
        return
    table = BoardPlacement._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
        (estimated,) = cursor.fetchone()
        cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
        (counted,) = cursor.fetchone()
        if counted > 2 * max(estimated, 0) + 1000:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")


def board_orders(
    rows: list[tuple[Any, ...]], metric_keys: list[str]
) -> Iterator[tuple[str, str, bool, np.ndarray]]:
    """(board, column, descending, positions in that order) for each board with rows and for
    both together (`BoardOrder.BOTH`: their overall positions), each column and both
    directions. `rows` are (board, position, overall position, values' JSON text, model key,
    team key, listed at) of both boards. Each column is laid out once for every row; a
    group's rows are then taken in the order of its positions (rank order; both boards:
    rank, then submission, the rankings API's order), so a stable sort on a column keeps
    equal values in that order. A metric holding anything but numbers (none that a
    recompute wrote) gets no order: its pages sort in the database."""
    if not rows:
        return
    board, position, overall, values, model, team, listed = (
        list(column) for column in zip(*rows, strict=True)
    )
    sortable = dict(_metric_columns(decoded_json(values), metric_keys))
    sortable["model"] = (_code_points(model), np.zeros(len(model), dtype=bool))
    sortable["team"] = (_code_points(team), np.array([key == "" for key in team]))
    sortable["date"] = _instants(listed)
    on_board = np.array(board)
    groups = [
        (kind.value, np.flatnonzero(on_board == kind.value), np.array(position, dtype=np.int64))
        for kind in BoardKind
    ]
    groups.append((BoardOrder.BOTH, np.arange(len(rows)), np.array(overall, dtype=np.int64)))
    for name, members, places in groups:
        if len(members) == 0:
            continue
        members = members[np.argsort(places[members], kind="stable")]
        placed = places[members]
        for key, (column, missing) in sortable.items():
            for descending in (False, True):
                order = _sorted(column[members], missing[members], descending)
                yield name, key, descending, placed[order]


def _sorted(column: np.ndarray, missing: np.ndarray, descending: bool) -> np.ndarray:
    """The indexes of `column` in its order (the other way round if `descending`), missing
    values last, equal ones as they come (a stable sort)."""
    directed = -column if descending else column
    last = np.inf if column.dtype.kind == "f" else np.iinfo(column.dtype).max
    return np.argsort(np.where(missing, last, directed), kind="stable")


def _metric_columns(
    values: list[Any], metric_keys: list[str]
) -> Iterator[tuple[str, tuple[np.ndarray, np.ndarray]]]:
    """Each metric's shown values as doubles, and where they are missing (absent or null):
    all at once when the rows allow (`core.bulk.numbers_table`: a board recomputed from
    clean runs), else row by row."""
    table = numbers_table(values, (float, int))
    for key in metric_keys:
        if table is not None:
            if key in table.columns:
                numbers = table.matrix[:, table.columns[key]]
            else:
                numbers = np.full(len(values), np.nan)
            missing = np.isnan(numbers)
            yield key, (np.where(missing, 0.0, numbers), missing)
            continue
        found = [row.get(key) if isinstance(row, dict) else None for row in values]
        if not set(map(type, found)) <= {float, int, type(None)}:
            continue
        try:
            column = np.array([0.0 if value is None else float(value) for value in found])
        except OverflowError:  # an integer past a double's range
            continue
        yield key, (column, np.array([value is None for value in found]))


def _code_points(keys: list[str]) -> np.ndarray:
    """Each text's place among the distinct texts in code-point order (Python's)."""
    place = {key: index for index, key in enumerate(sorted(set(keys)))}
    return np.array([place[key] for key in keys], dtype=np.int64)


def _instants(moments: list[datetime | None]) -> tuple[np.ndarray, np.ndarray]:
    """Each date as whole microseconds since 1970 (exact: a float would round them), and
    where there is none."""
    step = timedelta(microseconds=1)
    missing = np.array([moment is None for moment in moments])
    column = np.array(
        [0 if moment is None else (moment - _EPOCH) // step for moment in moments],
        dtype=np.int64,
    )
    return column, missing


def enqueue_board_orders(benchmark_id: int) -> None:
    # Imported here, as in enqueue_scoring: django_q reads its settings at import.
    from django_q.tasks import async_task

    async_task(
        "submissions.tasks.task_write_board_orders", benchmark_id, q_options={"group": "boards"}
    )
