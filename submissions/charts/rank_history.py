"""An entry's rank over time (issue 33, point 3): one point per board snapshot the entry is on,
oldest on the left, rank 1 at the top, joined by a line (broken where the entry was absent from
a snapshot between two points). A point's shape says its board: filled on the Official board,
hollow on the Community board, so a verification reads as a change of shape, not only of
colour.

Pure geometry (plain Python, no Django), like `rank_intervals`: `rank_history_chart` returns
every coordinate `submissions/charts/rank_history.html` draws. The snapshots are spaced evenly
(one step per snapshot, not to scale in time: a day of verifications would otherwise pile its
points on one spot); the table beside the chart has their dates. A phone gets its own narrow
drawing (`NARROW`) at about its own size, as the rank-interval chart does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from .rank_intervals import tick_step


@dataclass(frozen=True)
class HistoryLayout:
    name: str  # "wide" or "narrow": the SVG's class and the suffix of its ids
    width: int
    plot_left: int
    plot_right: int
    max_ticks: int


WIDE = HistoryLayout("wide", 640, 56, 620, 6)
NARROW = HistoryLayout("narrow", 340, 50, 326, 5)
# The rank numbers end this far left of the plot, clear of a point on its left edge.
TICK_GAP = 14
LEGEND_Y = 16
PLOT_TOP = 40
PLOT_HEIGHT = 150
DATE_OFFSET = 22  # the date labels' baseline below the plot
HEIGHT = PLOT_TOP + PLOT_HEIGHT + DATE_OFFSET + 10


@dataclass(frozen=True)
class HistoryInput:
    """The entry in one snapshot: `after_gap` when it was absent from a snapshot between this
    one and its previous point (the line breaks there)."""

    snapshot_id: int
    taken_at: datetime
    board: str  # "official" or "community"
    rank: int
    after_gap: bool = False


@dataclass(frozen=True)
class HistoryPoint:
    snapshot_id: int
    taken_at: datetime
    board: str
    rank: int
    x: float
    y: float

    @property
    def official(self) -> bool:
        return self.board == "official"


@dataclass(frozen=True)
class RankTick:
    y: float
    label: str

    @property
    def text_y(self) -> float:
        return self.y + 4


@dataclass(frozen=True)
class RankHistoryChart:
    layout: str
    width: int
    height: int
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: int
    date_y: int
    legend_y: int
    points: list[HistoryPoint]
    segments: list[str]  # each a polyline's "x,y x,y ..."
    ticks: list[RankTick]
    best: int
    worst: int

    @property
    def tick_x(self) -> int:
        return self.plot_left - TICK_GAP

    @property
    def view_box(self) -> str:
        return f"0 0 {self.width} {self.height}"

    @property
    def description(self) -> str:
        """The chart in words (its `<desc>`): the table below has every point."""
        first, last = self.first, self.last
        boards = {point.board for point in self.points}
        where = (
            "the Official board"
            if boards == {"official"}
            else ("the Community board" if boards == {"community"} else "both boards")
        )
        return (
            f"Rank in {len(self.points)} snapshots, on {where}, from rank {first.rank} on "
            f"{first.taken_at:%Y-%m-%d} to rank {last.rank} on {last.taken_at:%Y-%m-%d}; "
            f"best {min(point.rank for point in self.points)}, worst "
            f"{max(point.rank for point in self.points)}. Rank 1 is at the top. The table "
            "below has every snapshot's date, board and rank."
        )

    @property
    def first(self) -> HistoryPoint:
        return self.points[0]

    @property
    def last(self) -> HistoryPoint:
        return self.points[-1]


def rank_history_chart(
    history: Sequence[HistoryInput], *, layout: HistoryLayout = WIDE
) -> RankHistoryChart:
    """The chart of `history` (oldest first, at least one point). The rank axis runs from the
    best rank shown to the worst, padded to at least three ranks so one flat line sits in the
    middle rather than on an edge."""
    if not history:
        raise ValueError("a rank history chart needs at least one point")
    best = min(point.rank for point in history)
    worst = max(point.rank for point in history)
    if worst - best < 2:
        best, worst = max(1, best - 1), max(1, best - 1) + 2
    left, right = layout.plot_left, layout.plot_right
    bottom = PLOT_TOP + PLOT_HEIGHT

    def y_of(rank: int) -> float:
        return round(PLOT_TOP + (rank - best) * PLOT_HEIGHT / (worst - best), 2)

    def x_of(index: int) -> float:
        if len(history) == 1:
            return (left + right) / 2
        return round(left + index * (right - left) / (len(history) - 1), 2)

    points = [
        HistoryPoint(
            item.snapshot_id, item.taken_at, item.board, item.rank, x_of(i), y_of(item.rank)
        )
        for i, item in enumerate(history)
    ]
    segments: list[list[HistoryPoint]] = []
    for item, point in zip(history, points, strict=True):
        if not segments or item.after_gap:
            segments.append([])
        segments[-1].append(point)
    step = tick_step(worst - best + 1, layout.max_ticks)
    ranks = [best] + [rank for rank in range(best + 1, worst + 1) if (rank - best) % step == 0]
    if ranks[-1] != worst and worst - ranks[-1] >= step / 2:
        ranks.append(worst)
    return RankHistoryChart(
        layout=layout.name,
        width=layout.width,
        height=HEIGHT,
        plot_left=left,
        plot_right=right,
        plot_top=PLOT_TOP,
        plot_bottom=bottom,
        date_y=bottom + DATE_OFFSET,
        legend_y=LEGEND_Y,
        points=points,
        segments=[
            " ".join(f"{point.x},{point.y}" for point in segment)
            for segment in segments
            if len(segment) > 1
        ],
        ticks=[RankTick(y_of(rank), str(rank)) for rank in ranks],
        best=best,
        worst=worst,
    )
