"""The entry page's chart geometry and colours (submissions/charts/), without a database: where
each shape goes, what is left out when a value is missing, and that every colour is readable."""

import pytest

from submissions.charts import colours
from submissions.charts.bars import (
    LEGEND_HEIGHT,
    ROW_HEIGHT,
    TRACK_HEIGHT,
    TRACK_OFFSET,
    MetricBarInput,
    metric_bars,
    scale_position,
)
from submissions.charts.heatmap import (
    CELL_HEIGHT,
    CELL_WIDTH,
    COLUMN_LABEL_HEIGHT,
    LEGEND_STEPS,
    ROW_LABEL_WIDTH,
    dataset_heatmap,
)

pytestmark = pytest.mark.unit


# --- colours -------------------------------------------------------------------------------------


def test_contrast_ratio_follows_wcag():
    assert colours.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert colours.contrast_ratio("#ffffff", "#000000") == pytest.approx(21.0)
    assert colours.contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    # WCAG's worked value: #767676 on white is just above 4.5:1.
    assert colours.contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


def test_the_scale_runs_from_its_first_stop_to_its_last_and_clamps():
    assert colours.scale_colour(0.0) == "#eff5fb"
    assert colours.scale_colour(1.0) == "#08306b"
    assert colours.scale_colour(0.5) == "#6baed6"
    assert colours.scale_colour(-3.0) == colours.scale_colour(0.0)
    assert colours.scale_colour(7.0) == colours.scale_colour(1.0)
    # Darker as the value grows: the lightness carries the value.
    luminances = [colours.relative_luminance(colours.scale_colour(i / 20)) for i in range(21)]
    assert luminances == sorted(luminances, reverse=True)


def test_text_on_every_heatmap_colour_has_at_least_aa_contrast():
    for step in range(201):
        fill = colours.scale_colour(step / 200)
        assert colours.contrast_ratio(colours.text_colour_on(fill), fill) >= 4.5, fill


def test_the_bar_charts_shapes_stand_out_from_what_they_are_drawn_on():
    """WCAG 1.4.11: graphics that carry meaning need 3:1 against their neighbours."""
    ratio = colours.contrast_ratio
    assert ratio(colours.BAR_FILL, colours.BACKGROUND) >= 3
    assert ratio(colours.WHISKER, colours.BAR_FILL) >= 3
    assert ratio(colours.WHISKER, colours.TRACK_FILL) >= 3
    assert ratio(colours.BEST_MARK, colours.BACKGROUND) >= 3
    assert ratio(colours.TRACK_STROKE, colours.BACKGROUND) >= 3
    assert ratio(colours.TEXT, colours.BACKGROUND) >= 4.5
    assert ratio(colours.MUTED_TEXT, colours.BACKGROUND) >= 4.5


# --- the metric bars -----------------------------------------------------------------------------


def test_a_position_on_the_track_is_the_values_share_of_the_scale_clamped():
    assert scale_position(0.0, (0.0, 1.0), 10, 200) == 10
    assert scale_position(1.0, (0.0, 1.0), 10, 200) == 210
    assert scale_position(0.25, (0.0, 1.0), 10, 200) == 60
    assert scale_position(2.5, (0.0, 5.0), 10, 200) == 110
    assert scale_position(-1.0, (0.0, 1.0), 10, 200) == 10
    assert scale_position(1.5, (0.0, 1.0), 10, 200) == 210
    with pytest.raises(ValueError, match="a scale must grow"):
        scale_position(0.5, (1.0, 1.0), 10, 200)


def bar(key="CVS_acc", value=0.5, interval=(0.4, 0.6), best=0.8, scale=(0.0, 1.0)):
    return MetricBarInput(key, value, interval, best, scale, value_text=f"{key} text")


def test_each_metric_is_a_row_with_its_bar_whisker_and_the_boards_best():
    chart = metric_bars([bar(), bar("DVC_llm", 2.5, (2.0, 3.0), 4.0, (0.0, 5.0))], width=420)

    assert (chart.width, chart.height) == (420, LEGEND_HEIGHT + 2 * ROW_HEIGHT)
    first, second = chart.rows
    # The track spans the width less a pixel each side: 1 .. 419.
    assert (first.track_x, first.track_width) == (1.0, 418.0)
    assert first.bar_width == pytest.approx(209.0)
    assert first.whisker == pytest.approx((168.2, 251.8))
    assert first.best_x == pytest.approx(335.4)
    assert first.track_y == LEGEND_HEIGHT + TRACK_OFFSET
    assert first.whisker_y == first.track_y + TRACK_HEIGHT / 2
    assert first.mark_top < first.track_y < first.track_y + TRACK_HEIGHT < first.mark_bottom
    assert first.value_text == "CVS_acc text"
    assert not first.clipped
    # The judge metric on its 0..5 scale lands at the same places.
    assert second.top == LEGEND_HEIGHT + ROW_HEIGHT
    assert second.bar_width == pytest.approx(first.bar_width)
    assert second.whisker == pytest.approx(first.whisker)
    assert second.best_x == pytest.approx(first.best_x)


def test_a_missing_value_interval_or_best_leaves_its_shape_out():
    pending, imported, alone = metric_bars(
        [
            bar(value=None, interval=None, best=0.8),
            bar(interval=None),
            bar(best=None),
        ]
    ).rows
    assert (pending.bar_width, pending.whisker) == (None, None)
    assert pending.best_x == pytest.approx(335.4)
    assert imported.whisker is None
    assert imported.bar_width == pytest.approx(209.0)
    assert alone.best_x is None
    assert alone.whisker is not None


def test_values_outside_the_scale_are_drawn_at_its_ends_and_flagged():
    (row,) = metric_bars([bar(value=1.2, interval=(1.1, 1.3), best=1.3)]).rows
    assert row.clipped
    assert row.bar_width == pytest.approx(418.0)
    assert row.whisker == pytest.approx((419.0, 419.0))


# --- the heatmap ---------------------------------------------------------------------------------


def test_the_heatmap_has_a_cell_per_metric_and_dataset_coloured_by_its_share():
    metrics = ["CVS_acc", "DVC_llm"]
    datasets = ["AVOS", "CholecT50", "NurViD"]
    shares = {("CVS_acc", "AVOS"): 0.0, ("CVS_acc", "NurViD"): 1.0, ("DVC_llm", "AVOS"): 0.5}
    texts = {("CVS_acc", "AVOS"): "0.000", ("CVS_acc", "NurViD"): "1.000"}
    texts[("DVC_llm", "AVOS")] = "2.500"

    chart = dataset_heatmap(metrics, datasets, shares, texts)

    assert len(chart.cells) == 6
    cells = {(cell.tooltip.split(" on ")[0], cell.tooltip.split(" on ")[1].split(":")[0]): cell
             for cell in chart.cells}  # fmt: skip
    low, high = cells[("CVS_acc", "AVOS")], cells[("CVS_acc", "NurViD")]
    assert (low.x, low.y) == (ROW_LABEL_WIDTH, COLUMN_LABEL_HEIGHT)
    assert (high.x, high.y) == (ROW_LABEL_WIDTH + 2 * CELL_WIDTH, COLUMN_LABEL_HEIGHT)
    assert (low.fill, low.text, low.text_fill) == ("#eff5fb", "0.000", colours.DARK_TEXT)
    assert (high.fill, high.text, high.text_fill) == ("#08306b", "1.000", colours.LIGHT_TEXT)
    middle = cells[("DVC_llm", "AVOS")]
    assert middle.y == COLUMN_LABEL_HEIGHT + CELL_HEIGHT
    assert middle.fill == colours.scale_colour(0.5)
    assert middle.tooltip == "DVC_llm on AVOS: 2.500"
    missing = cells[("CVS_acc", "CholecT50")]
    assert (missing.fill, missing.stroke, missing.text) == ("#ffffff", "#8a939d", "—")
    assert missing.tooltip == "CVS_acc on CholecT50: no value"
    assert [label.text for label in chart.rows] == metrics
    assert [label.text for label in chart.columns] == datasets
    assert chart.width >= ROW_LABEL_WIDTH + 3 * CELL_WIDTH
    assert all(cell.y + cell.height <= chart.height for cell in chart.cells)


def test_the_heatmaps_legend_shows_the_scale_from_zero_to_one():
    chart = dataset_heatmap(["CVS_acc"], ["AVOS"], {("CVS_acc", "AVOS"): 0.3}, {})
    assert [step.text for step in chart.legend] == ["0", "0.25", "0.5", "0.75", "1"]
    assert [step.fill for step in chart.legend] == [
        colours.scale_colour(step) for step in LEGEND_STEPS
    ]
    grid_bottom = COLUMN_LABEL_HEIGHT + CELL_HEIGHT
    assert all(step.y > grid_bottom for step in chart.legend)
    assert all(step.text_y <= chart.height for step in chart.legend)
    assert chart.legend_caption.text == "share of the metric's scale"
