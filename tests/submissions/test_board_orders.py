"""The boards' stored orders (issue 16, `BoardOrder`): each sortable column's order, computed
in Python after a recompute, is the database's order of the same rows (`board_ordering`) on
random boards with ties, missing and cleaned values, teams and no teams, equal dates, both
ways, on each board; a sorted page of a whole board reads its rows through it, and never
through the order of an older build."""

import numpy as np
import pytest
from rest_framework.test import APIClient

from benchmark.services import ensure_plugin_benchmark
from submissions import board_orders, services
from submissions.board_json import write_board_json
from submissions.enums import BoardKind
from submissions.models import BoardEntry, BoardOrder, Submission
from submissions.selectors import (
    BoardFilter,
    BoardSort,
    board_entries,
    board_ordering,
    board_page,
    stored_order_page,
    stored_order_rows,
)
from tests.api.test_board_json import rankings

from .test_board_recompute import random_board

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def stored_positions(benchmark, board, key, descending) -> list[int]:
    order = BoardOrder.objects.get(benchmark=benchmark, board=board, key=key, descending=descending)
    return np.frombuffer(order.positions, dtype=BoardOrder.POSITION_TYPE).tolist()


def database_positions(benchmark, board, key, descending) -> list[int]:
    """The board's positions in the database's order, or both boards' overall positions in the
    rankings API's (`board=all`: the board's order, then the submission)."""
    sort = board_ordering(BoardSort(key, descending))
    if board == BoardOrder.BOTH:
        entries = board_entries(benchmark, BoardKind.values).order_by(*sort, "submission_id")
        return list(entries.values_list("overall_position", flat=True))
    entries = board_entries(benchmark, board).order_by(*sort)
    return list(entries.values_list("position", flat=True))


def page_keys(benchmark, board, sort, number, size=7) -> list[int]:
    page = board_page(
        benchmark,
        board=board,
        sort=sort,
        board_filter=BoardFilter(),
        page=number,
        metrics=list(benchmark.metrics.all()),
        page_size=size,
    )
    return [row.submission_id for row in page.rows]


@pytest.mark.parametrize("seed", [1, 2])
def test_every_stored_order_is_the_databases_order_of_the_rows(seed):
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, seed, count=70)
    # Entries with no team (none named, no institution), which sort last either way.
    unnamed = Submission.objects.filter(benchmark=benchmark, team_name="").order_by("pk")[::2]
    Submission.objects.filter(pk__in=[row.pk for row in unnamed]).update(institution="")
    services.recompute_board(benchmark)
    assert BoardEntry.objects.filter(benchmark=benchmark, team_key="").count() > 5

    written = board_orders.write_board_orders(benchmark)

    keys = [*benchmark.metrics.values_list("key", flat=True), "model", "team", "date"]
    assert written == 3 * len(keys) * 2  # each board and both, every column, both ways
    for board in [*BoardKind.values, BoardOrder.BOTH]:
        for key in keys:
            for descending in (False, True):
                assert stored_positions(benchmark, board, key, descending) == (
                    database_positions(benchmark, board, key, descending)
                ), (board, key, descending)


def test_a_sorted_page_reads_the_stored_order_and_never_an_older_builds():
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, 3, count=40)
    services.recompute_board(benchmark)
    board, sort = BoardKind.COMMUNITY.value, BoardSort("STG_mIoU", descending=True)
    count = board_entries(benchmark, board).count()
    pages = range(1, (count + 6) // 7 + 1)
    in_database = [page_keys(benchmark, board, sort, number) for number in pages]
    assert (
        stored_order_rows(board_entries(benchmark, board), benchmark, board, sort, 0, 7) is None
    )  # not written yet

    board_orders.write_board_orders(benchmark)

    assert (
        stored_order_rows(board_entries(benchmark, board), benchmark, board, sort, 0, 7) is not None
    )
    assert [page_keys(benchmark, board, sort, number) for number in pages] == in_database
    # A newer build (the same rows rewritten): the orders of the one before are not read,
    # and a writer that read the older rows writes nothing over them.
    services.recompute_board(benchmark)
    assert stored_order_rows(board_entries(benchmark, board), benchmark, board, sort, 0, 7) is None
    assert [page_keys(benchmark, board, sort, number) for number in pages] == in_database
    assert board_orders.write_board_orders(benchmark) > 0
    assert (
        stored_order_rows(board_entries(benchmark, board), benchmark, board, sort, 0, 7) is not None
    )


def test_a_writer_that_read_an_older_build_writes_nothing(monkeypatch):
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, 5, count=12)
    services.recompute_board(benchmark)
    read = board_orders.board_orders

    def rebuilt_meanwhile(rows, metric_keys):
        services.recompute_board(benchmark)  # the rows read are replaced before the write
        return read(rows, metric_keys)

    monkeypatch.setattr(board_orders, "board_orders", rebuilt_meanwhile)

    assert board_orders.write_board_orders(benchmark) == 0
    assert not BoardOrder.objects.filter(benchmark=benchmark).exists()


def test_the_rankings_api_pages_a_sorted_board_through_its_stored_order_with_the_same_bytes():
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, 6, count=30)
    services.recompute_board(benchmark)
    client = APIClient()
    asks = [
        {"board": board, "sort": sort, "direction": direction, "page": page, "page_size": 4}
        for board in [*BoardKind.values, "all"]
        for sort in ("STG_mIoU", "model", "team", "date")
        for direction in ("asc", "desc")
        for page in (1, 2)
    ]
    sorted_in_database = [rankings(client, benchmark, **params) for params in asks]

    board_orders.write_board_orders(benchmark)
    write_board_json(benchmark)  # the rows' stored JSON too: the page splices it

    entries = board_entries(benchmark, "community")
    assert stored_order_page(entries, benchmark, "community", BoardSort("date"), 0, 4)
    both = board_entries(benchmark, BoardKind.values)
    assert stored_order_page(both, benchmark, BoardOrder.BOTH, BoardSort("team", True), 4, 4)
    through_orders = [rankings(client, benchmark, **params) for params in asks]
    for params, before, after in zip(asks, sorted_in_database, through_orders, strict=True):
        assert after == before, params
