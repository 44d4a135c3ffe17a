import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins.medvidbench.scoring.metrics.dense_captioning import (
    activitynet_iou,
    flatten_overlaps,
    flattened_spans,
    score_dense_captioning,
    temporal_f1,
    temporal_f1_many,
)
from plugins.medvidbench.scoring.parsers import (
    CaptionEvent,
    parse_dense_caption_spans,
    parse_dense_captions,
)
from plugins.medvidbench.scoring.tasks import DVC_F1

from .factories import gt_record, make_test_set
from .test_parsers_linear import answers

pytestmark = pytest.mark.unit


def dvc_record(segments, shape="nested", **kwargs):
    segs = [{"start": s, "end": e, "caption": c} for s, e, c in segments]
    struc = {"nested": [segs], "dc_segments": [{"dc_segments": segs}], "flat": segs}[shape]
    return gt_record("dense_captioning_gpt", "reference", struc, **kwargs)


def dvc_metric(records, predictions):
    test_set = make_test_set(*records)
    items = list(zip(test_set.samples, predictions, strict=True))
    return score_dense_captioning(items)


def test_parse_one_event_per_line_and_drop_repeated_spans():
    text = "0.0-10.0 seconds: cut: the surgeon cuts\n0.0-10.0 seconds: again\n10.0-20.0 second: tie"
    assert parse_dense_captions(text) == [
        CaptionEvent(0.0, 10.0, "cut: the surgeon cuts"),
        CaptionEvent(10.0, 20.0, "tie"),
    ]


def test_parse_events_on_one_line_stay_one_event():
    events = parse_dense_captions("0.0-10.0 seconds: cut 10.0-20.0 seconds: tie")
    assert events == [CaptionEvent(0.0, 10.0, "cut 10.0-20.0 seconds: tie")]


def test_parse_zero_shot_fallback_reads_spaced_dashes():
    events = parse_dense_captions("1.0 - 5.0 seconds - the surgeon cuts the suture.")
    assert events == [CaptionEvent(1.0, 5.0, "the surgeon cuts the suture")]


def test_parse_zero_shot_fallback_accepts_an_en_dash_and_bold_labels():
    events = parse_dense_captions("**Start Time:** 2 \u2013 4 seconds **Description:** Cutting.")
    assert events == [CaptionEvent(2.0, 4.0, "Cutting")]


def test_activitynet_iou_union_is_min_of_hull_and_summed_lengths():
    assert activitynet_iou((0, 10), (5, 20)) == pytest.approx(5 / 20)
    assert activitynet_iou((0, 10), (0, 10)) == pytest.approx(1.0)
    assert activitynet_iou((0, 0), (0, 0)) == 0.0


def test_flatten_keeps_the_longest_caption_per_piece():
    pieces = flatten_overlaps([CaptionEvent(0, 10, "a"), CaptionEvent(5, 20, "b")])
    assert pieces == [CaptionEvent(0, 5, "a"), CaptionEvent(5, 10, "b"), CaptionEvent(10, 20, "b")]


def test_overlapping_predictions_are_flattened_before_matching():
    outcome = dvc_metric([dvc_record([(0, 20, "x")])], ["0.0-10.0 seconds: a\n5.0-20.0 seconds: b"])
    # Pieces (0,5) (5,10) (10,20) against (0,20): only (10,20) passes, and only @0.3.
    # P = (1/3 + 0 + 0) / 3, R = (1 + 0 + 0) / 3, F1 = 2PR / (P + R) = 1/6.
    assert outcome.metrics[DVC_F1].value == pytest.approx(1 / 6)


def test_thresholds_are_strict_and_frames_are_truncated():
    # fps 1: 1.9 s -> frame 1, so IoU((0,1),(0,2)) = 0.5, which is not > 0.5.
    assert temporal_f1([(0, 1)], [(0, 2)]) == pytest.approx(1 / 3)
    outcome = dvc_metric([dvc_record([(0.0, 2.0, "x")])], ["0.0-1.9 seconds: x"])
    assert outcome.metrics[DVC_F1].value == pytest.approx(1 / 3)


def test_matching_is_many_to_many():
    # Two predictions both cover the single reference: precision 1, recall 1.
    assert temporal_f1([(0, 10), (0, 9)], [(0, 10)]) == pytest.approx(1.0)


def test_datasets_are_weighted_by_their_sample_count_including_skipped_samples():
    records = [
        dvc_record([(0, 10, "x")], dataset="AVOS"),
        dvc_record([(0, 10, "x")], dataset="AVOS"),
        dvc_record([(0, 10, "x")], dataset="NurViD", shape="dc_segments"),
    ]
    predictions = ["0.0-10.0 seconds: x", "no events here", "50.0-60.0 seconds: x"]
    metric = dvc_metric(records, predictions).metrics[DVC_F1]
    # AVOS: mean of the one scored sample = 1.0, weight 2; NurViD: 0.0, weight 1.
    assert metric.value == pytest.approx(2 / 3)
    assert metric.per_dataset == {"AVOS": 1.0, "NurViD": 0.0}
    assert (metric.scored, metric.total) == (2, 3)


def test_a_dataset_with_nothing_parsed_keeps_its_weight_at_zero():
    records = [
        dvc_record([(0, 10, "x")], dataset="AVOS"),
        dvc_record([(0, 10, "x")], dataset="CoPESD"),
    ]
    metric = dvc_metric(records, ["0.0-10.0 seconds: x", ""]).metrics[DVC_F1]
    assert metric.value == 0.5
    assert metric.per_dataset == {"AVOS": 1.0, "CoPESD": 0.0}


def test_reference_segments_need_start_end_and_caption():
    records = [
        dvc_record([(0, 10, "x")], shape="flat"),
        gt_record("dense_captioning_gemini", "r", [[{"start": 0, "end": 10}]], dataset="CoPESD"),
    ]
    metric = dvc_metric(records, ["0.0-10.0 seconds: x"] * 2).metrics[DVC_F1]
    # The CoPESD sample has no usable reference segment: skipped, its dataset weighs 0.0.
    assert (metric.value, metric.scored) == (0.5, 1)


def test_absurd_times_do_not_crash_the_scorer():
    huge = "9" * 30
    assert temporal_f1([(int(huge), int(huge) + 5)], [(0, 10)]) == 0.0
    assert parse_dense_captions("9" * 400 + "-1.0 seconds: x") == []
    outcome = dvc_metric([dvc_record([(0, 10, "x")])], [f"0.0-{huge} seconds: x"])
    assert outcome.metrics[DVC_F1].value == 0.0


def flatten_by_definition(events):
    """The flattening as the official scorer defines it, one scan of every event per piece
    (O(n^2)): the reference the sweep must equal."""
    points = sorted({event.start for event in events} | {event.end for event in events})
    pieces = []
    for start, end in itertools.pairwise(points):
        covering = [event for event in events if event.start < end and event.end > start]
        if covering:
            longest = max(covering, key=lambda event: event.end - event.start)
            pieces.append(CaptionEvent(start, end, longest.caption))
    return pieces


# Few distinct times, so events share boundaries, nest, tie in length and repeat.
times = st.sampled_from([0.0, 0.5, 1.0, 2.5, 3.0, 7.25, 10.0, 10.5, 40.0])
caption_events = st.builds(CaptionEvent, times, times, st.sampled_from("abcdefgh"))


@settings(max_examples=400, deadline=None)
@given(st.lists(caption_events, max_size=30))
def test_flatten_equals_the_definition_on_any_events(events):
    # Reversed and empty events included: they cover nothing, in both.
    assert flatten_overlaps(events) == flatten_by_definition(events)
    assert flattened_spans(spans_of(events)) == spans_of(flatten_by_definition(events))


def spans_of(events):
    return [(event.start, event.end) for event in events]


@pytest.mark.parametrize(
    "events",
    [
        # Nested: every piece but the outermost's ends is covered by all, the outermost wins.
        [CaptionEvent(i, 200 - i, f"e{i}") for i in range(100)],
        # Equal lengths, staggered: ties go to the first listed.
        [CaptionEvent(i, i + 10, f"e{i}") for i in range(50)],
        # The same span listed twice: the first caption, in both.
        [CaptionEvent(0, 10, "first"), CaptionEvent(0, 10, "second"), CaptionEvent(5, 7, "x")],
        # Listed in reverse order of start.
        [CaptionEvent(30 - i, 31 + i, f"e{i}") for i in range(30)],
    ],
    ids=["nested", "equal-lengths", "repeated-span", "reverse-listed"],
)
def test_flatten_equals_the_definition_on_adversarial_events(events):
    assert flatten_overlaps(events) == flatten_by_definition(events)
    assert flattened_spans(spans_of(events)) == spans_of(flatten_by_definition(events))


def test_the_issues_twenty_thousand_nested_events_flatten_as_defined():
    # The answer from issue 11 (the definition takes ~30 s on it; bench/dvc_overlaps.py times
    # both): every piece lies inside event 0, the longest, so every piece keeps its caption.
    events = [CaptionEvent(float(i), float(40_000 - i), f"step {i}") for i in range(20_000)]
    pieces = flatten_overlaps(events)
    assert len(pieces) == 39_999
    assert {piece.caption for piece in pieces} == {"step 0"}
    assert pieces[19_999] == CaptionEvent(19_999.0, 20_001.0, "step 0")


# Frames from a small range (shared boundaries, ties at the thresholds) up to beyond 64 bits.
frames = st.one_of(st.integers(0, 40), st.integers(0, 2**62), st.integers(2**63, 2**70))
segment_lists = st.lists(st.tuples(frames, frames), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(segment_lists, segment_lists), max_size=8))
def test_temporal_f1_of_many_samples_is_each_samples_bit_for_bit(samples):
    expected = [temporal_f1(predicted, reference).hex() for predicted, reference in samples]
    assert [value.hex() for value in temporal_f1_many(samples)] == expected


def test_temporal_f1_of_many_samples_needs_segments_in_each():
    with pytest.raises(ValueError, match="a prediction and a reference"):
        temporal_f1_many([([(0, 1)], [])])


@settings(max_examples=400, deadline=None)
@given(answers)
def test_the_spans_are_those_of_the_parsed_events(text):
    # Strict events and the zero-shot fallback alike (the tokens hold both forms).
    events = parse_dense_captions(text)
    assert parse_dense_caption_spans(text) == [(event.start, event.end) for event in events]
