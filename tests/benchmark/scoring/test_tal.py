import pytest

from plugins.medvidbench.scoring.metrics.tal import greedy_matched_iou, hull_iou, score_tal
from plugins.medvidbench.scoring.parsers import parse_tal
from plugins.medvidbench.scoring.tasks import TAG_MIOU_03, TAG_MIOU_05

from .factories import gt_record, make_test_set

pytestmark = pytest.mark.unit


def tal_record(spans, **kwargs):
    text = ", ".join(f"{s}-{e}" for s, e in spans) + " seconds."
    return gt_record("tal", text, [{"spans": [{"start": s, "end": e} for s, e in spans]}], **kwargs)


def score(records, predictions):
    test_set = make_test_set(*records)
    return score_tal(list(zip(test_set.samples, predictions, strict=True)))


def test_parse_every_dash_pair_is_a_segment():
    assert parse_tal("22.0-78.0, 89.0 - 94.0 seconds.") == [(22.0, 78.0), (89.0, 94.0)]


def test_parse_from_to_fallback_rounds_to_two_decimals():
    assert parse_tal("It happens from 12.126s to 117.004 seconds") == [(12.13, 117.0)]


def test_parse_dash_pairs_take_precedence_over_from_to():
    assert parse_tal("from 1 to 2, then 3-4") == [(3.0, 4.0)]


def test_parse_clock_times_keep_the_stray_from_to_match_too():
    # The official code keeps both fallback forms: "00 to 00" is read as (0, 0).
    assert parse_tal("00:00:00 to 00:00:08") == [(0.0, 0.0), (0.0, 8.0)]


def test_parse_prose_without_numbers_yields_nothing():
    assert parse_tal("The surgeon ties a knot near the end.") == []


def test_hull_iou_divides_by_the_hull_not_the_union():
    assert hull_iou((0, 10), (5, 20)) == 5 / 20
    assert hull_iou((0, 10), (20, 30)) == 0.0
    assert hull_iou((3, 3), (3, 3)) == 0.0


def test_greedy_match_at_0_5_can_exceed_0_3():
    reference = [(0, 10), (5, 15)]
    predicted = [(5, 15)]
    # @0.3 the first reference span takes the only prediction at IoU 1/3 ...
    assert greedy_matched_iou(predicted, reference, 0.3) == pytest.approx(1 / 3)
    # ... @0.5 it cannot, so the second reference span keeps it at IoU 1.
    assert greedy_matched_iou(predicted, reference, 0.5) == 1.0


def test_greedy_match_uses_each_prediction_once_and_first_wins_ties():
    reference = [(0, 10), (0, 10)]
    predicted = [(0, 10), (0, 10), (0, 5)]
    assert greedy_matched_iou(predicted, reference, 0.5) == 1.0
    assert greedy_matched_iou([(0, 10)], reference, 0.5) == 1.0  # second span finds nothing


def test_sample_value_is_mean_of_kept_ious_only():
    reference = [(0, 10), (20, 30)]
    predicted = [(0, 10), (50, 60)]
    assert greedy_matched_iou(predicted, reference, 0.3) == 1.0


def test_metric_is_mean_over_all_samples_unparseable_counting_zero():
    outcome = score(
        [tal_record([(0, 10)]), tal_record([(0, 10)], dataset="CholecT50")],
        ["0.0-10.0 seconds.", "I cannot tell."],
    )
    assert outcome.metrics[TAG_MIOU_03].value == 0.5
    assert outcome.metrics[TAG_MIOU_03].per_dataset == {"AVOS": 1.0, "CholecT50": 0.0}
    assert outcome.metrics[TAG_MIOU_03].scored == 2
    assert outcome.parsed == [True, False]


def test_spans_of_all_items_are_pooled():
    record = gt_record(
        "tal",
        "0-10, 20-30",
        [{"spans": [{"start": 0, "end": 10}]}, {"spans": [{"start": 20, "end": 30}]}],
    )
    outcome = score([record], ["20-30"])
    # Only the second span matches; the mean is over kept IoUs: 1.0.
    assert outcome.metrics[TAG_MIOU_05].value == 1.0


def test_iou_is_taken_in_frames_so_float_rounding_follows_the_fps():
    # In seconds this pair has IoU exactly 0.5; times 3 frames/s the float product
    # lands just below 0.5, so the official scorer (which multiplies) rejects it @0.5.
    predicted, reference = (0.1, 0.5), (0.1, 0.9)
    assert hull_iou(predicted, reference) >= 0.5
    frames = [tuple(float(t * 3.0) for t in span) for span in (predicted, reference)]
    assert hull_iou(*frames) < 0.5
    outcome = score([tal_record([reference], fps="3.0")], ["0.1-0.5"])
    assert outcome.metrics[TAG_MIOU_05].value == 0.0
    assert outcome.metrics[TAG_MIOU_03].value == pytest.approx(0.5)
