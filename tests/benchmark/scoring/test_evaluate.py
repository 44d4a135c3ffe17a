"""End to end over a small mixed test set: loaders, the seven metrics, the result object."""

import json

import pytest

from plugins.medvidbench.scoring import (
    METRIC_NAMES,
    SCORER_VERSION,
    ScoreResult,
    evaluate,
    load_predictions,
)
from plugins.medvidbench.scoring.result import UnparsedExample

from .factories import gt_record, make_test_set, rows_for

pytestmark = pytest.mark.unit


@pytest.fixture
def test_set():
    return make_test_set(
        gt_record("tal", "0.0-10.0 seconds.", [{"spans": [{"start": 0, "end": 10}]}]),
        gt_record(
            "tal", "0.0-10.0 seconds.", [{"spans": [{"start": 0, "end": 10}]}], dataset="CoPESD"
        ),
        gt_record("stg", "1.0 seconds: [0, 0, 10, 10]", [{"bbox_dict": {"1.0": [0, 0, 10, 10]}}]),
        gt_record("next_action", "tying"),
        gt_record(
            "dense_captioning_gpt",
            "0.0-10.0 seconds: cut",
            [[{"start": 0, "end": 10, "caption": "cut"}]],
        ),
        gt_record(
            "cvs_assessment",
            "Two structures: 2",
            [{"cvs_scores": {"two_structures": 2}}],
            dataset="Cholec80_CVS",
        ),
        gt_record(
            "skill_assessment",
            "Time and motion: 3/5",
            [{"skill_level": "I", "skill_scores": {"Time and motion": 3}}],
            dataset="JIGSAWS",
        ),
        gt_record("video_summary_gpt", "The surgeon dissects."),
        gt_record("region_caption_gemini", "A grasper holds the gallbladder."),
    )


PERFECT = [
    "0.0-10.0 seconds.",
    "0.0-10.0 seconds.",
    "1.0 seconds: [0, 0, 10, 10]",
    "tying",
    "0.0-10.0 seconds: cut",
    "Two structures: 2",
    "Time and motion: 3/5",
    "The surgeon dissects.",
    "A grasper holds the gallbladder.",
]


def refuse(pairs):
    raise AssertionError("no embedding needed for exact labels")


def test_perfect_predictions_score_one_on_every_automatic_metric(test_set):
    result = evaluate(
        test_set, load_predictions(rows_for(test_set, PERFECT), test_set), nearest_class=refuse
    )
    assert result.metrics == {
        "CVS_acc": 1.0,
        "NAP_acc": 1.0,
        "SA_acc": 1.0,
        "STG_mIoU": 1.0,
        "TAG_mIoU@0.3": 1.0,
        "TAG_mIoU@0.5": 1.0,
        "DVC_F1": 1.0,
        "DVC_llm": None,
        "VS_llm": None,
        "RC_llm": None,
    }
    assert result.scorer_version == SCORER_VERSION
    assert result.unparsed_examples == {}
    assert result.parsed["tal"] == {"total": 2, "parsed": 2}


def test_unparsed_answers_are_reported_with_the_submitters_own_text(test_set):
    predictions = list(PERFECT)
    predictions[1] = "It starts near the beginning."
    predictions[7] = "   "
    result = evaluate(test_set, predictions, nearest_class=refuse)
    assert result.metrics["TAG_mIoU@0.3"] == 0.5
    assert result.per_dataset["TAG_mIoU@0.3"] == {"AVOS": 1.0, "CoPESD": 0.0}
    assert result.parsed["tal"] == {"total": 2, "parsed": 1}
    assert result.parsed["video_summary"] == {"total": 1, "parsed": 0}
    assert result.unparsed_examples == {
        "tal": [
            UnparsedExample(
                row=1, id=test_set.samples[1].id, prediction="It starts near the beginning."
            )
        ],
        "video_summary": [UnparsedExample(row=7, id=test_set.samples[7].id, prediction="   ")],
    }
    assert "0.0-10.0" not in json.dumps(result.to_dict()["unparsed_examples"])  # no reference text


def test_a_task_absent_from_the_test_set_is_missing_not_zero():
    test_set = make_test_set(gt_record("next_action", "tying"))
    result = evaluate(test_set, ["tying"], nearest_class=refuse)
    assert result.metrics["NAP_acc"] == 1.0
    assert [name for name, value in result.metrics.items() if value is None] == [
        name for name in METRIC_NAMES if name != "NAP_acc"
    ]


def test_result_round_trips_through_json(test_set):
    result = evaluate(test_set, PERFECT, nearest_class=refuse)
    assert list(result.to_dict()["metrics"]) == list(METRIC_NAMES)
    assert ScoreResult.from_dict(json.loads(result.to_json())) == result


def test_predictions_must_be_aligned(test_set):
    with pytest.raises(ValueError, match="aligned"):
        evaluate(test_set, PERFECT[:-1])


def test_samples_skipped_for_their_reference_are_not_counted_as_unparsed():
    test_set = make_test_set(gt_record("next_action", "dancing"), gt_record("next_action", "tying"))
    result = evaluate(
        test_set, ["dancing", "I think tying"], nearest_class=lambda pairs: [1] * len(pairs)
    )
    assert result.parsed["next_action"] == {"total": 1, "parsed": 0}
    assert [example.row for example in result.unparsed_examples["next_action"]] == [1]
    assert result.counts["NAP_acc"] == {"scored": 1, "total": 2}


def test_a_result_read_back_from_a_store_that_reorders_keys_keeps_its_metric_order():
    test_set = make_test_set(gt_record("next_action", "tying"))
    data = evaluate(test_set, ["tying"]).to_dict()
    data["metrics"] = dict(sorted(data["metrics"].items()))  # as PostgreSQL's jsonb returns it

    result = ScoreResult.from_dict(data)

    assert tuple(result.metrics) == METRIC_NAMES
    assert result.metrics["NAP_acc"] == 1.0


NOT_A_LABEL = [*PERFECT[:3], "tie a knot", *PERFECT[4:]]


def test_an_error_in_the_next_action_metric_reaches_the_caller(test_set):
    def broken(pairs):
        raise RuntimeError("the encoder is gone")

    predictions = load_predictions(rows_for(test_set, NOT_A_LABEL), test_set)
    with pytest.raises(RuntimeError, match="the encoder is gone"):
        evaluate(test_set, predictions, nearest_class=broken)
