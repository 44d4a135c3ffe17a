"""The rank-interval chart's geometry (submissions/charts/rank_intervals.py): pure, no database."""

import ast
from pathlib import Path

import pytest

from submissions.charts import rank_intervals
from submissions.charts.rank_intervals import (
    NARROW,
    PLOT_LEFT,
    PLOT_RIGHT,
    ROW_HEIGHT,
    TOP,
    ChartEntry,
    rank_interval_chart,
    short_label,
    tick_step,
)

pytestmark = pytest.mark.unit


def entries(*rows):
    """(rank, best, worst, tier) -> ChartEntry named after its rank."""
    return [
        ChartEntry(f"Model {rank}", rank, best, worst, tier, key=rank)
        for rank, best, worst, tier in rows
    ]


def test_dots_and_whiskers_sit_on_a_rank_axis_from_1_to_the_worst_place_shown():
    chart = rank_interval_chart(entries((1, 1, 2, 1), (2, 1, 3, 1), (3, 2, 5, 2)))

    assert chart.max_rank == 5  # the worst place, beyond the last rank
    step = (PLOT_RIGHT - PLOT_LEFT) / 4
    assert [(row.x_rank, row.x_best, row.x_worst) for row in chart.rows] == [
        (PLOT_LEFT, PLOT_LEFT, PLOT_LEFT + step),
        (PLOT_LEFT + step, PLOT_LEFT, PLOT_LEFT + 2 * step),
        (PLOT_LEFT + 2 * step, PLOT_LEFT + step, PLOT_RIGHT),
    ]
    assert [row.y for row in chart.rows] == [TOP + 11, TOP + 33, TOP + 55]
    assert [row.key for row in chart.rows] == [1, 2, 3]
    assert [row.interval_text for row in chart.rows] == [
        "1\N{EN DASH}2",
        "1\N{EN DASH}3",
        "2\N{EN DASH}5",
    ]
    assert chart.height == TOP + 3 * ROW_HEIGHT + rank_intervals.BOTTOM
    assert chart.view_box == f"0 0 {chart.width} {chart.height}"
    assert [tick.label for tick in chart.ticks] == ["1", "2", "3", "4", "5"]
    assert [tick.x for tick in chart.ticks] == [row.x_rank for row in chart.rows] + [
        PLOT_LEFT + 3 * step,
        PLOT_RIGHT,
    ]


def test_every_coordinate_lies_inside_the_drawing():
    chart = rank_interval_chart(
        entries(*[(rank, max(1, rank - 3), rank + 4, 1) for rank in range(1, 31)])
    )
    for row in chart.rows:
        for x in (row.x_rank, row.x_best, row.x_worst):
            assert PLOT_LEFT <= x <= PLOT_RIGHT
        assert row.x_best <= row.x_rank <= row.x_worst
        assert chart.plot_top < row.y < chart.plot_bottom <= chart.height


def test_tiers_become_alternating_bands_over_their_rows():
    chart = rank_interval_chart(
        entries((1, 1, 1, 1), (2, 2, 4, 2), (3, 2, 4, 2), (4, 3, 4, 2), (5, 5, 5, 3))
    )

    assert [(band.tier, band.y, band.height, band.shaded) for band in chart.bands] == [
        (1, TOP, ROW_HEIGHT, True),
        (2, TOP + ROW_HEIGHT, 3 * ROW_HEIGHT, False),
        (3, TOP + 4 * ROW_HEIGHT, ROW_HEIGHT, True),
    ]
    assert chart.bands[1].label_y == TOP + ROW_HEIGHT + 1.5 * ROW_HEIGHT + 4


def test_rows_without_a_tier_or_interval_get_a_dot_only():
    chart = rank_interval_chart(entries((1, None, None, None), (2, None, None, None)))

    assert chart.bands == []
    assert [(row.x_best, row.x_worst, row.interval_text) for row in chart.rows] == [
        (None, None, "no rank interval"),
        (None, None, "no rank interval"),
    ]
    assert [row.x_rank for row in chart.rows] == [PLOT_LEFT, PLOT_RIGHT]


def test_a_single_entry_sits_in_the_middle():
    chart = rank_interval_chart(entries((1, 1, 1, 1)))
    assert chart.max_rank == 1
    assert chart.rows[0].x_rank == chart.rows[0].x_best == (PLOT_LEFT + PLOT_RIGHT) / 2
    assert [tick.label for tick in chart.ticks] == ["1"]


def test_a_large_board_is_cut_to_its_first_rows():
    board = entries(*[(rank, rank, rank + 1, rank) for rank in range(1, 1001)])
    chart = rank_interval_chart(board, total=1000, limit=30)

    assert (chart.shown, chart.total, chart.truncated) == (30, 1000, True)
    assert [row.rank for row in chart.rows] == list(range(1, 31))
    assert chart.max_rank == 31
    assert not rank_interval_chart(board[:3]).truncated


@pytest.mark.parametrize(
    ("max_rank", "step", "labels"),
    [
        (4, 1, ["1", "2", "3", "4"]),
        (10, 1, [str(rank) for rank in range(1, 11)]),
        (11, 2, ["1", "2", "4", "6", "8", "10"]),
        (31, 5, ["1", "5", "10", "15", "20", "25", "30"]),
        (100, 10, ["1", *[str(rank) for rank in range(10, 101, 10)]]),
        (1000, 100, ["1", *[str(rank) for rank in range(100, 1001, 100)]]),
    ],
)
def test_ticks_are_few_and_round(max_rank, step, labels):
    assert tick_step(max_rank) == step
    chart = rank_interval_chart([ChartEntry("A", 1, 1, max_rank, 1)])
    assert [tick.label for tick in chart.ticks] == labels
    assert len(chart.ticks) <= rank_intervals.MAX_TICKS + 1


def test_long_names_are_shortened_for_the_drawing_only():
    name = "An extraordinarily long model name, fine-tuned on everything"
    chart = rank_interval_chart([ChartEntry(name, 1, 1, 1, 1)])

    assert chart.rows[0].label == short_label(name) == name[:29].rstrip() + "…"
    assert len(chart.rows[0].label) <= rank_intervals.MAX_LABEL_CHARS
    assert chart.rows[0].full_label == name
    assert short_label("Short") == "Short"


def test_the_chart_module_imports_no_django():
    tree = ast.parse(Path(rank_intervals.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "django" not in imported


def test_the_narrow_layout_fits_a_phone_with_shorter_names_and_fewer_ticks():
    board = entries(*[(rank, rank, rank + 2, 1 + rank // 10) for rank in range(1, 31)])
    board[0] = ChartEntry("An extraordinarily long model name", 1, 1, 3, 1, key=1)
    chart = rank_interval_chart(board, layout=NARROW)

    assert (chart.layout, chart.width) == ("narrow", 360)
    assert chart.rows[0].label == "An extraordinar…"
    assert [tick.label for tick in chart.ticks] == ["1", "10", "20", "30"]
    assert [band.label for band in chart.bands] == ["T1", "T2", "T3", "T4"]
    for row in chart.rows:
        assert NARROW.plot_left <= row.x_best <= row.x_rank <= row.x_worst <= NARROW.plot_right
    assert NARROW.label_right < NARROW.plot_left < NARROW.plot_right < NARROW.tier_label_x < 360
    wide = rank_interval_chart(board)
    assert [band.label for band in wide.bands] == ["tier 1", "tier 2", "tier 3", "tier 4"]
    assert [row.y for row in wide.rows] == [row.y for row in chart.rows]
