import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins.medvidbench.scoring.metrics.stg import box_iou, score_stg, stg_sample_ious
from plugins.medvidbench.scoring.parsers import parse_stg
from plugins.medvidbench.scoring.tasks import STG_MIOU

from .factories import gt_record, make_test_set

pytestmark = pytest.mark.unit

A = [0, 0, 10, 10]
B = [10, 0, 20, 10]  # touches A: IoU(A, B) = 0
HALF = [5, 0, 15, 10]  # overlaps A by half its width


def stg_record(boxes: dict, **kwargs):
    return gt_record("stg", "reference", [{"bbox_dict": boxes}], **kwargs)


def stg_value(records, predictions):
    test_set = make_test_set(*records)
    return score_stg(list(zip(test_set.samples, predictions, strict=True))).metrics[STG_MIOU]


def test_perfect_keyed_answer_scores_one():
    metric = stg_value(
        [stg_record({"1.0": A, "2.0": B})],
        ["1.0 seconds: [0, 0, 10, 10] 2.0 seconds: [10, 0, 20, 10]"],
    )
    assert metric.value == 1.0


def test_box_iou_uses_absolute_pixels_without_plus_one():
    iou = box_iou(np.array([A], dtype=float), np.array([HALF], dtype=float))
    assert iou.tolist() == [50 / 150]


def test_degenerate_boxes_use_the_union_floor_and_score_zero():
    iou = box_iou(np.array([[3, 3, 3, 3]], dtype=float), np.array([[3, 3, 3, 3]], dtype=float))
    assert iou.tolist() == [0.0]


def test_two_decimal_reference_key_misses_and_reuses_the_previous_box():
    # The answer gives the right box for 2.25 s, but the lookup key is "2.2".
    metric = stg_value(
        [stg_record({"1.0": A, "2.25": B})],
        ["1.0 seconds: [0, 0, 10, 10] 2.25 seconds: [10, 0, 20, 10]"],
    )
    assert metric.value == 0.5  # (IoU(A, A) + IoU(A, B)) / 2


def test_keyed_answers_match_integer_like_reference_keys():
    metric = stg_value(
        [stg_record({"1": A, "3": B})], ["1 seconds: [0, 0, 10, 10] 3 seconds: [10, 0, 20, 10]"]
    )
    assert metric.value == 1.0


def test_bare_boxes_are_keyed_by_reference_keys_so_integer_keys_miss():
    metric = stg_value([stg_record({"1.0": A, "3": B})], ["[[0, 0, 10, 10]] [[10, 0, 20, 10]]"])
    # "1.0" is found; "3" is looked up as "3.0", misses, and reuses A.
    assert metric.value == 0.5


def test_bare_boxes_must_be_four_integers():
    prediction = parse_stg("[[0, 0, 10, 10]] [[1.5, 2, 3, 4]] [[1, 2, 3]] [[1, 2, 3, 4,]]")
    assert prediction.keyed is None
    assert prediction.bare == [[0, 0, 10, 10]]


def test_malformed_box_reuses_the_last_valid_box():
    prediction = parse_stg(
        "1.0 seconds: [0, 0, 10, 10] 2.0 seconds: [1, 2, 3] 3 seconds: [nan, 1, 2, 3]"
    )
    assert prediction.keyed == {"1.0": [0.0, 0.0, 10.0, 10.0], "2.0": A, "3.0": A}


def test_malformed_first_box_is_dropped_and_scores_zero():
    metric = stg_value(
        [stg_record({"1.0": A, "2.0": A})], ["1.0 seconds: [oops] 2.0 seconds: [0, 0, 10, 10]"]
    )
    assert metric.value == 0.5  # first key missing -> [0,0,0,0] (no previous box), second exact


def test_all_zero_box_counts_as_missing_and_reuses_the_previous_box():
    metric = stg_value(
        [stg_record({"1.0": A, "2.0": A})],
        ["1.0 seconds: [0, 0, 10, 10] 2.0 seconds: [0, 0, 0, 0]"],
    )
    assert metric.value == 1.0


def test_samples_without_a_valid_reference_box_are_left_out_of_the_mean():
    metric = stg_value(
        [stg_record({"1.0": A}), stg_record({"1.0": None}, dataset="CoPESD")],
        ["1.0 seconds: [0, 0, 10, 10]", "1.0 seconds: [0, 0, 10, 10]"],
    )
    assert (metric.value, metric.scored, metric.total) == (1.0, 1, 2)
    assert metric.per_dataset == {"AVOS": 1.0}


def test_unparseable_answers_count_zero():
    metric = stg_value(
        [stg_record({"1.0": A}), stg_record({"1.0": A})],
        ["1.0 seconds: [0, 0, 10, 10]", "The instrument is in the upper left."],
    )
    assert metric.value == 0.5


def test_box_dict_may_be_the_first_item_or_the_whole_struc_info():
    first_item = gt_record("stg", "r", [{"1.0": A}])
    whole = gt_record("stg", "r", {"bbox_dict": {"1.0": A}})
    metric = stg_value([first_item, whole], ["1.0 seconds: [0, 0, 10, 10]"] * 2)
    assert (metric.value, metric.scored) == (1.0, 2)


def test_bare_boxes_beyond_float_range_are_ignored():
    assert parse_stg("[[" + "9" * 400 + ", 1, 2, 3]] [[0, 0, 10, 10]]").bare == [[0, 0, 10, 10]]


def test_more_bare_boxes_than_reference_timestamps_ignores_the_extra_ones():
    metric = stg_value(
        [stg_record({"1.0": A})], ["[[0, 0, 10, 10]] [[10, 0, 20, 10]] [[1, 1, 2, 2]]"]
    )
    assert metric.value == 1.0


# Coordinates in a small range, so boxes mostly overlap (IoUs neither 0 nor 1), ints and
# floats, some boxes inverted or empty: the arithmetic must not differ.
box_values = st.one_of(st.integers(-2, 20), st.floats(-2, 20, allow_nan=False))
any_box = st.lists(box_values, min_size=4, max_size=4)
sample_pairs = st.lists(st.tuples(any_box, any_box), min_size=1, max_size=20)


def one_by_one(samples):
    """Each sample's mean IoU as `stg_sample_iou` takes it, as exact hex."""
    return [
        float(
            box_iou(
                np.array([box for box, _ in pairs], dtype=np.float64),
                np.array([reference for _, reference in pairs], dtype=np.float64),
            ).mean()
        ).hex()
        for pairs in samples
    ]


def one_pass(samples):
    return [value.hex() for value in stg_sample_ious(samples)]


@settings(max_examples=300, deadline=None)
@given(st.lists(sample_pairs, max_size=12))
def test_the_samples_ious_in_one_pass_are_each_samples_bit_for_bit(samples):
    # A sample of 8 boxes or more takes numpy's pairwise summation, shorter ones a plain loop.
    assert one_pass(samples) == one_by_one(samples)


def test_long_samples_ious_in_one_pass_are_each_samples_bit_for_bit():
    # Samples of 1 to 40 overlapping boxes: most means of 8 or more values differ in their
    # last bit between numpy's pairwise summation and a running sum, so a pass that summed
    # otherwise than `stg_sample_iou` would fail here.
    generator = np.random.default_rng(0)
    samples = []
    for size in generator.integers(1, 40, size=200).tolist():
        corners = generator.uniform(0, 100, size=(size, 2, 2))
        sides = generator.uniform(1, 60, size=(size, 2, 2))
        boxes = np.concatenate([corners, corners + sides], axis=2).tolist()
        samples.append([(predicted, reference) for predicted, reference in boxes])
    assert one_pass(samples) == one_by_one(samples)
