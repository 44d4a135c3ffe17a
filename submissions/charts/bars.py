"""The entry page's metric bars (issue 12, point 6): each metric as a horizontal bar from the
start of its scale, its 95% interval as a whisker across the bar's end, and the board's best
value as a mark, one row per metric. Geometry only: `metric_bars` turns numbers into shapes
in SVG user units, `submissions/_chart_bars.html` draws them.

Each row is stacked so the chart stays legible when it is scaled down to a phone's width: the
metric's name and its printed value on one line, the bar below, the scale's ends under it.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import colours

WIDTH = 420
PALETTE = {
    "bar": colours.BAR_FILL,
    "track": colours.TRACK_FILL,
    "track_stroke": colours.TRACK_STROKE,
    "whisker": colours.WHISKER,
    "best": colours.BEST_MARK,
    "text": colours.TEXT,
    "muted": colours.MUTED_TEXT,
}
ROW_HEIGHT = 60
LEGEND_HEIGHT = 30
TEXT_OFFSET = 15  # baseline of the name and value line, from the row's top
TRACK_OFFSET = 23  # top of the bar's track, from the row's top
TRACK_HEIGHT = 14
AXIS_OFFSET = 52  # baseline of the scale's end labels, from the row's top
MARK_OVERHANG = 4  # the best mark reaches this far above and below the track
CAP_HALF = 4  # half the height of the whisker's end caps


@dataclass(frozen=True)
class MetricBarInput:
    """One metric as the chart takes it. `scale` is the metric's range (0..1 for a share, the
    judge's 0..5 for a caption score); values outside it are drawn at its ends. The texts are
    formatted by the caller (it knows the metric's decimals)."""

    key: str
    value: float | None
    interval: tuple[float, float] | None
    best: float | None
    scale: tuple[float, float]
    value_text: str  # "0.412 [0.380, 0.445]", "pending", "—"
    scale_texts: tuple[str, str] = ("0", "1")


@dataclass(frozen=True)
class MetricBar:
    """One row's shapes. Absent parts are None: no bar without a value, no whisker without an
    interval, no mark without a best value on the board."""

    key: str
    value_text: str
    top: float
    text_y: float
    track_x: float
    track_y: float
    track_width: float
    track_height: float
    bar_width: float | None
    whisker: tuple[float, float] | None  # x from, x to
    whisker_y: float
    cap_top: float
    cap_bottom: float
    best_x: float | None
    mark_top: float
    mark_bottom: float
    axis_y: float
    scale_texts: tuple[str, str]
    clipped: bool  # a value or interval end outside the scale, drawn at its end


@dataclass(frozen=True)
class MetricBars:
    width: int
    height: int
    rows: tuple[MetricBar, ...]
    legend_y: float
    palette: dict[str, str]  # the fills and strokes, as SVG presentation attributes


def scale_position(value: float, scale: tuple[float, float], x: float, width: float) -> float:
    """Where `value` falls on a track from `x` to `x + width` that shows `scale`, clamped to
    the track."""
    low, high = scale
    if high <= low:
        raise ValueError(f"a scale must grow: {scale}")
    share = (value - low) / (high - low)
    return round(x + width * min(1.0, max(0.0, share)), 2)


def _outside(value: float | None, scale: tuple[float, float]) -> bool:
    return value is not None and not scale[0] <= value <= scale[1]


def metric_bars(metrics: list[MetricBarInput], *, width: int = WIDTH) -> MetricBars:
    """The bar chart of `metrics`, one row each, in the given order, below a legend."""
    track_x, track_width = 1.0, width - 2.0  # a pixel each side, so the outline is not cut
    rows = []
    for index, metric in enumerate(metrics):
        top = LEGEND_HEIGHT + index * ROW_HEIGHT
        track_y = top + TRACK_OFFSET
        middle = track_y + TRACK_HEIGHT / 2

        def at(value: float, metric: MetricBarInput = metric) -> float:
            return scale_position(value, metric.scale, track_x, track_width)

        bar_width = None if metric.value is None else at(metric.value) - track_x
        whisker = None
        if metric.interval is not None:
            whisker = (at(metric.interval[0]), at(metric.interval[1]))
        rows.append(
            MetricBar(
                key=metric.key,
                value_text=metric.value_text,
                top=top,
                text_y=top + TEXT_OFFSET,
                track_x=track_x,
                track_y=track_y,
                track_width=track_width,
                track_height=TRACK_HEIGHT,
                bar_width=bar_width,
                whisker=whisker,
                whisker_y=middle,
                cap_top=middle - CAP_HALF,
                cap_bottom=middle + CAP_HALF,
                best_x=None if metric.best is None else at(metric.best),
                mark_top=track_y - MARK_OVERHANG,
                mark_bottom=track_y + TRACK_HEIGHT + MARK_OVERHANG,
                axis_y=top + AXIS_OFFSET,
                scale_texts=metric.scale_texts,
                clipped=any(
                    _outside(value, metric.scale)
                    for value in (metric.value, metric.best, *(metric.interval or ()))
                ),
            )
        )
    return MetricBars(
        width=width,
        height=LEGEND_HEIGHT + len(rows) * ROW_HEIGHT,
        rows=tuple(rows),
        legend_y=16,
        palette=PALETTE,
    )
