"""The geometry of an entry's rank over time (issue 33, point 3), without rendering: rank 1 at
the top, one step per snapshot, the line broken where the entry was absent."""

from datetime import UTC, datetime, timedelta

import pytest

from submissions.charts.rank_history import (
    NARROW,
    PLOT_HEIGHT,
    PLOT_TOP,
    WIDE,
    HistoryInput,
    rank_history_chart,
)

pytestmark = pytest.mark.unit

DAY = datetime(2026, 8, 15, tzinfo=UTC)


def points(*ranks, gap_before=None, board="official"):
    return [
        HistoryInput(index + 1, DAY + timedelta(days=index), board, rank, index == gap_before)
        for index, rank in enumerate(ranks)
    ]


def test_rank_one_is_at_the_top_and_the_worst_at_the_bottom_one_step_per_snapshot():
    chart = rank_history_chart(points(3, 1, 5))

    assert [point.y for point in chart.points] == [
        PLOT_TOP + PLOT_HEIGHT / 2,
        PLOT_TOP,
        PLOT_TOP + PLOT_HEIGHT,
    ]
    assert [point.x for point in chart.points] == [WIDE.plot_left, 338.0, WIDE.plot_right]
    assert [tick.label for tick in chart.ticks] == ["1", "2", "3", "4", "5"]
    assert len(chart.segments) == 1


def test_a_flat_line_sits_inside_a_padded_axis():
    chart = rank_history_chart(points(4, 4), layout=NARROW)

    assert (chart.best, chart.worst) == (3, 5)
    assert {point.y for point in chart.points} == {PLOT_TOP + PLOT_HEIGHT / 2}
    assert chart.width == NARROW.width


def test_the_line_breaks_where_the_entry_was_absent():
    chart = rank_history_chart(points(2, 3, 1, 2, gap_before=2))

    assert len(chart.segments) == 2
    assert chart.segments[0].count(",") == 2  # two points
    assert "Rank in 4 snapshots, on the Official board, from rank 2 on 2026-08-15" in (
        chart.description
    )


def test_no_point_is_an_error():
    with pytest.raises(ValueError, match="at least one point"):
        rank_history_chart([])
