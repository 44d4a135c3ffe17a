"""Pure helpers of the board pages: sort parsing, row sorting, header links, About blocks."""

from datetime import UTC, datetime

import pytest

from benchmark.enums import MetricDirection
from benchmark.models import Metric
from submissions.selectors import (
    BoardRow,
    BoardSort,
    TextBlock,
    about_blocks,
    board_columns,
    parse_board_sort,
    sort_board_rows,
)

pytestmark = pytest.mark.unit

METRICS = [
    Metric(key="acc", label="Accuracy"),
    Metric(key="error_rate", label="Error rate", direction=MetricDirection.LOWER),
]


def row(rank, name, acc, team="", day=1):
    return BoardRow(
        submission_id=rank,
        rank=rank,
        medal=0,
        mean_rank=float(rank),
        wins=0,
        model_name=name,
        model_url="",
        team=team,
        is_verified=False,
        is_baseline=False,
        is_imported=False,
        verified_at=None,
        listed_at=datetime(2026, 4, day, tzinfo=UTC),
        values={"acc": acc},
        cells=[],
    )


ROWS = [row(1, "beta", 0.5, "Lab"), row(2, "Alpha", None, day=3), row(3, "gamma", 0.5, "ant", 2)]


@pytest.mark.parametrize(
    ("key", "direction", "expected"),
    [
        (None, None, BoardSort("rank", descending=False)),
        ("acc", None, BoardSort("acc", descending=True)),  # best first
        ("error_rate", None, BoardSort("error_rate", descending=False)),  # lower is better
        ("date", None, BoardSort("date", descending=True)),  # newest first
        ("acc", "asc", BoardSort("acc", descending=False)),
        ("acc", "sideways", BoardSort("acc", descending=True)),
        ("unknown", "desc", BoardSort()),
    ],
)
def test_a_sort_parameter_is_read_or_ignored(key, direction, expected):
    assert parse_board_sort(key, direction, METRICS) == expected


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        (BoardSort(), [1, 2, 3]),
        (BoardSort("rank", descending=True), [3, 2, 1]),
        # Equal values keep rank order; a missing value goes last either way.
        (BoardSort("acc", descending=True), [1, 3, 2]),
        (BoardSort("acc", descending=False), [1, 3, 2]),
        (BoardSort("model", descending=False), [2, 1, 3]),
        (BoardSort("team", descending=False), [3, 1, 2]),
        (BoardSort("date", descending=True), [2, 3, 1]),
    ],
)
def test_sorting_reorders_rows_and_never_changes_a_rank(sort, expected):
    assert [r.rank for r in sort_board_rows(ROWS, sort)] == expected


def test_each_heading_links_to_its_one_click_sort():
    columns = board_columns(METRICS, BoardSort("acc", descending=True))
    assert [(c.key, c.href, c.aria_sort) for c in columns] == [
        ("rank", "?sort=rank&dir=asc", ""),
        ("model", "?sort=model&dir=asc", ""),
        ("team", "?sort=team&dir=asc", ""),
        ("acc", "?sort=acc&dir=asc", "descending"),
        ("error_rate", "?sort=error_rate&dir=asc", ""),
        ("date", "?sort=date&dir=desc", ""),
    ]
    assert columns[4].label_parts == ["error_", "rate"]


def test_about_text_becomes_headings_lists_and_paragraphs():
    text = "Intro sentence.\n\nTest set\n\n- one\n- two\n\nTiebreakers, in order:\n1. wins\n2. name"
    assert about_blocks(text) == [
        TextBlock("paragraph", ["Intro sentence."]),
        TextBlock("heading", ["Test set"]),
        TextBlock("list", ["one", "two"]),
        TextBlock("paragraph", ["Tiebreakers, in order:"]),
        TextBlock("numbered", ["wins", "name"]),
    ]
