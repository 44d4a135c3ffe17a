"""The entry page's per-dataset heatmap (issue 12, point 6): one row per metric, one column per
source dataset, each cell coloured by the value's share of the metric's scale (0..1; the
judge's scores over their 0..5) and printed, with a legend of the scale. Geometry only:
`dataset_heatmap` turns values into shapes in SVG user units, `_chart_heatmap.html` draws them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import colours

ROW_LABEL_WIDTH = 112
COLUMN_LABEL_HEIGHT = 74  # room for the datasets' names, written at an angle
CELL_WIDTH = 60
CELL_HEIGHT = 28
LEGEND_GAP = 18
LEGEND_HEIGHT = 40
LEGEND_STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)
LEGEND_SWATCH = 40
LABEL_ANGLE = -40  # degrees, the column labels' slant


@dataclass(frozen=True)
class HeatCell:
    x: float
    y: float
    width: float
    height: float
    fill: str
    stroke: str  # "" for none
    text: str
    text_fill: str
    text_x: float
    text_y: float
    tooltip: str  # "TAG_mIoU@0.3 on AVOS: 0.412"


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class LegendStep:
    x: float
    y: float
    width: float
    height: float
    fill: str
    text: str
    text_x: float
    text_y: float


@dataclass(frozen=True)
class Heatmap:
    width: int
    height: int
    rows: tuple[Label, ...]
    columns: tuple[Label, ...]
    column_angle: int
    cells: tuple[HeatCell, ...]
    legend: tuple[LegendStep, ...]
    legend_caption: Label
    text_colour: str


def dataset_heatmap(
    metrics: Sequence[str],
    datasets: Sequence[str],
    shares: Mapping[tuple[str, str], float | None],
    texts: Mapping[tuple[str, str], str],
) -> Heatmap:
    """The heatmap of `metrics` (rows) by `datasets` (columns). `shares[(metric, dataset)]` is
    the value's share of its metric's scale (None or absent: no value, a white cell with a
    dash); `texts` the value as printed. Shares outside 0..1 get the scale's end colour."""
    top = COLUMN_LABEL_HEIGHT
    cells = []
    for row, metric in enumerate(metrics):
        for column, dataset in enumerate(datasets):
            x = ROW_LABEL_WIDTH + column * CELL_WIDTH
            y = top + row * CELL_HEIGHT
            share = shares.get((metric, dataset))
            text = texts.get((metric, dataset), "—") if share is not None else "—"
            if share is None:
                fill, stroke, text_fill = colours.MISSING_FILL, colours.MISSING_STROKE, colours.TEXT
            else:
                fill = colours.scale_colour(share)
                stroke, text_fill = "", colours.text_colour_on(fill)
            cells.append(
                HeatCell(
                    x=x,
                    y=y,
                    width=CELL_WIDTH,
                    height=CELL_HEIGHT,
                    fill=fill,
                    stroke=stroke,
                    text=text,
                    text_fill=text_fill,
                    text_x=x + CELL_WIDTH / 2,
                    text_y=y + CELL_HEIGHT / 2 + 4,
                    tooltip=f"{metric} on {dataset}: {'no value' if share is None else text}",
                )
            )
    grid_bottom = top + len(metrics) * CELL_HEIGHT
    rows = tuple(
        Label(ROW_LABEL_WIDTH - 6, top + index * CELL_HEIGHT + CELL_HEIGHT / 2 + 4, metric)
        for index, metric in enumerate(metrics)
    )
    columns = tuple(
        Label(ROW_LABEL_WIDTH + index * CELL_WIDTH + CELL_WIDTH / 2, top - 8, dataset)
        for index, dataset in enumerate(datasets)
    )
    legend_top = grid_bottom + LEGEND_GAP
    legend_x = ROW_LABEL_WIDTH
    legend = []
    for index, step in enumerate(LEGEND_STEPS):
        x = legend_x + index * LEGEND_SWATCH
        fill = colours.scale_colour(step)
        legend.append(
            LegendStep(
                x=x,
                y=legend_top,
                width=LEGEND_SWATCH,
                height=14,
                fill=fill,
                text=f"{step:g}",
                text_x=x + LEGEND_SWATCH / 2,
                text_y=legend_top + 28,
            )
        )
    caption_x = legend_x + len(LEGEND_STEPS) * LEGEND_SWATCH + 10
    grid_width = ROW_LABEL_WIDTH + len(datasets) * CELL_WIDTH
    return Heatmap(
        width=int(max(grid_width, caption_x + 190)) + 2,
        height=int(legend_top + LEGEND_HEIGHT),
        rows=rows,
        columns=columns,
        column_angle=LABEL_ANGLE,
        cells=tuple(cells),
        legend=tuple(legend),
        legend_caption=Label(caption_x, legend_top + 11, "share of the metric's scale"),
        text_colour=colours.TEXT,
    )
