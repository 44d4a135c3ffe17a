"""The board's rank-interval chart (issue 12, point 6), in the style of Chatbot Arena's: one line
per entry in board order, a dot at its rank and a whisker from its best to its worst place in
the 95% rank interval, the statistical tiers as alternating bands.

Pure geometry (plain Python, no Django): `rank_interval_chart` takes the rows as plain values
and returns every coordinate the template `submissions/_rank_chart.html` draws, so the layout
is unit-tested without rendering. Coordinates are in the SVG's user units; the page scales the
drawing to its width (static/css/podium.css, "board tiers and compare").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# The wide layout, in user units (the viewBox): the model names on the left, the plot, the
# tier labels on the right. 12-unit text in a 760-unit drawing stays readable down to a ~600 px
# wide chart; below that the page draws the narrow layout instead (`NARROW`).
WIDTH = 760
LABEL_RIGHT = 214  # model names end here (text-anchor="end")
PLOT_LEFT = 230
PLOT_RIGHT = 690
TIER_LABEL_X = 700
TOP = 34  # the rank axis and its numbers sit above the first row
ROW_HEIGHT = 22
BOTTOM = 12
MAX_LABEL_CHARS = 30
MAX_TICKS = 10
DEFAULT_LIMIT = 30


@dataclass(frozen=True)
class Layout:
    """Where things go across the drawing. A phone gets its own narrow layout (shorter names,
    fewer ticks, "T2" for "tier 2") drawn at about its own size, rather than the wide one
    shrunk to unreadable text or scrolled sideways; CSS shows one of the two."""

    name: str  # "wide" or "narrow": the SVG's class and the suffix of its ids
    width: int
    label_right: int
    plot_left: int
    plot_right: int
    tier_label_x: int
    max_label_chars: int
    max_ticks: int
    tier_prefix: str


WIDE = Layout(
    "wide",
    WIDTH,
    LABEL_RIGHT,
    PLOT_LEFT,
    PLOT_RIGHT,
    TIER_LABEL_X,
    MAX_LABEL_CHARS,
    MAX_TICKS,
    "tier ",
)
NARROW = Layout("narrow", 360, 118, 128, 326, 334, 16, 5, "T")


@dataclass(frozen=True)
class ChartEntry:
    """One board row as the chart needs it. `best`/`worst` are None when the row has no rank
    interval (the chart then draws its dot only)."""

    label: str
    rank: int
    best: int | None
    worst: int | None
    tier: int | None
    key: int | None = None  # the caller's id for the row (the board: the submission id)


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class ChartRow:
    label: str  # shortened to MAX_LABEL_CHARS
    full_label: str
    key: int | None
    rank: int
    best: int | None
    worst: int | None
    tier: int | None
    y: float  # the row's centre line
    x_rank: float
    x_best: float | None
    x_worst: float | None

    @property
    def text_y(self) -> float:
        """The baseline that centres 12-unit text on the row's line."""
        return self.y + 4

    @property
    def cap_top(self) -> float:
        """The whisker's end caps span 4 units either side of the line."""
        return self.y - 4

    @property
    def cap_bottom(self) -> float:
        return self.y + 4

    @property
    def interval_text(self) -> str:
        if self.best is None or self.worst is None:
            return "no rank interval"
        return f"{self.best}\N{EN DASH}{self.worst}"


@dataclass(frozen=True)
class TierBand:
    """The rows of one tier (consecutive in board order): a background band, shaded for every
    other tier so neighbouring tiers are told apart, with its label at the right."""

    tier: int
    y: float
    height: float
    shaded: bool
    label: str  # "tier 2" (wide) or "T2" (narrow)

    @property
    def label_y(self) -> float:
        return self.y + self.height / 2 + 4


@dataclass(frozen=True)
class RankChart:
    layout: str  # the layout's name
    width: int
    height: int
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: float
    label_right: int
    tier_label_x: int
    axis_y: int  # the baseline of the rank numbers above the plot
    max_rank: int
    ticks: list[Tick]
    rows: list[ChartRow]
    bands: list[TierBand]
    shown: int
    total: int

    @property
    def truncated(self) -> bool:
        return self.shown < self.total

    @property
    def view_box(self) -> str:
        return f"0 0 {self.width} {self.height}"


def short_label(label: str, limit: int = MAX_LABEL_CHARS) -> str:
    """`label` cut to `limit` characters with an ellipsis (the full name is the row's tooltip
    and in the table fallback)."""
    return label if len(label) <= limit else label[: limit - 1].rstrip() + "…"


def tick_step(max_rank: int, max_ticks: int = MAX_TICKS) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that puts at most `max_ticks` multiples of
    itself on 1..max_rank."""
    step, factors = 1, (2, 2.5, 2)  # 1 -> 2 -> 5 -> 10 -> 20 -> 50 -> 100 ...
    index = 0
    while max_rank // step > max_ticks:
        step = round(step * factors[index % 3])
        index += 1
    return step


def rank_ticks(max_rank: int, x_of, max_ticks: int = MAX_TICKS) -> list[Tick]:
    """Rank 1, then the multiples of `tick_step` up to `max_rank` (1 and 2 never crowd: a step
    of 1 or 2 starts at 1 anyway)."""
    step = tick_step(max_rank, max_ticks)
    ranks = [1] + [rank for rank in range(step, max_rank + 1, step) if rank != 1]
    return [Tick(x_of(rank), str(rank)) for rank in ranks]


def rank_interval_chart(
    entries: Sequence[ChartEntry],
    *,
    total: int | None = None,
    limit: int = DEFAULT_LIMIT,
    layout: Layout = WIDE,
) -> RankChart:
    """The chart of the first `limit` of `entries` (in board order; `total` is the board's
    size, for "top 30 of 1,000") in `layout`. The rank axis runs from 1 to the largest rank or
    worst place shown, so a whisker is never cut off."""
    left, right = layout.plot_left, layout.plot_right
    shown = list(entries[:limit])
    total = len(entries) if total is None else total
    max_rank = max([1] + [max(entry.rank, entry.worst or 0) for entry in shown])
    span = max(max_rank - 1, 1)

    def x_of(rank: int) -> float:
        if max_rank == 1:
            return (left + right) / 2
        return round(left + (rank - 1) * (right - left) / span, 2)

    rows = []
    for index, entry in enumerate(shown):
        has_interval = entry.best is not None and entry.worst is not None
        rows.append(
            ChartRow(
                label=short_label(entry.label, layout.max_label_chars),
                full_label=entry.label,
                key=entry.key,
                rank=entry.rank,
                best=entry.best,
                worst=entry.worst,
                tier=entry.tier,
                y=TOP + ROW_HEIGHT * index + ROW_HEIGHT / 2,
                x_rank=x_of(entry.rank),
                x_best=x_of(entry.best) if has_interval else None,  # type: ignore[arg-type]
                x_worst=x_of(entry.worst) if has_interval else None,  # type: ignore[arg-type]
            )
        )
    bands = _tier_bands(shown, layout.tier_prefix)
    plot_bottom = TOP + ROW_HEIGHT * len(shown)
    return RankChart(
        layout=layout.name,
        width=layout.width,
        height=plot_bottom + BOTTOM,
        plot_left=left,
        plot_right=right,
        plot_top=TOP,
        plot_bottom=plot_bottom,
        label_right=layout.label_right,
        tier_label_x=layout.tier_label_x,
        axis_y=TOP - 10,
        max_rank=max_rank,
        ticks=rank_ticks(max_rank, x_of, layout.max_ticks),
        rows=rows,
        bands=bands,
        shown=len(shown),
        total=total,
    )


def _tier_bands(entries: Sequence[ChartEntry], prefix: str) -> list[TierBand]:
    """One band per run of consecutive rows sharing a tier (rows without a tier get none)."""
    bands: list[TierBand] = []
    start = 0
    for index in range(1, len(entries) + 1):
        if index < len(entries) and entries[index].tier == entries[start].tier:
            continue
        tier = entries[start].tier
        if tier is not None:
            bands.append(
                TierBand(
                    tier=tier,
                    y=TOP + ROW_HEIGHT * start,
                    height=ROW_HEIGHT * (index - start),
                    shaded=len(bands) % 2 == 0,
                    label=f"{prefix}{tier}",
                )
            )
        start = index
    return bands
