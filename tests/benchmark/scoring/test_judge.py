"""The LLM judge's protocol (spec 5): the rubric, the items, and aggregation.

Every expected metric is written out by hand, summed in the order the official scorer sums
(the aspects R2, R3, R8, R5, R4; the datasets in order of first appearance), so the floats
compare exactly.
"""

import hashlib
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins.medvidbench.definition import SCORING_DATA_DIR
from plugins.medvidbench.scoring import Task, evaluate
from plugins.medvidbench.scoring.judge import (
    JudgeItem,
    Rubric,
    RubricError,
    VerdictError,
    aggregate,
    build_items,
    load_rubric,
    with_judge,
)
from plugins.medvidbench.scoring.tasks import DVC_F1, DVC_LLM, RC_LLM, TAG_MIOU_03, VS_LLM

from .factories import gt_record, make_test_set

pytestmark = pytest.mark.unit

ASPECTS = ("R2", "R3", "R8", "R5", "R4")
OFFICIAL_PATTERNS = [
    r"{aspect}:\s*(\d+)",
    r"{aspect}\s*=\s*(\d+)",
    r"{aspect}\s*:\s*(\d+)",
    r"{aspect}\s+(\d+)",
    r"\*\*{aspect}\*\*\s*:\s*(\d+)",
]


@pytest.fixture(scope="module")
def rubric():
    return load_rubric(SCORING_DATA_DIR / "medvidbench_judge_prompt.txt")


def scores(r2, r3, r8, r5, r4):
    return {"R2": r2, "R3": r3, "R8": r8, "R5": r5, "R4": r4}


def minimal_rubric(**changes):
    """A valid small rubric, with `changes` applied (to see what each check rejects)."""
    fields = {
        "template": "{task} | {ground_truth} | {prediction}",
        "aspects": ("R1",),
        "patterns": (r"{aspect}:\s*(\d+)",),
        "score_min": 1,
        "score_max": 5,
        "task_labels": {
            "dense_captioning": "dense captioning",
            "video_summary": "video summary",
            "region_caption": "region caption",
        },
    }
    return Rubric(**{**fields, **changes})


def dvc_record(segments, *, dataset="AVOS"):
    struc = [[{"start": s, "end": e, "caption": c} for s, e, c in segments]]
    return gt_record("dense_captioning_gpt", "reference", struc, dataset=dataset)


def verdicts_by(items, scores_of):
    """Verdicts keyed by item.key, from `{(sample, threshold): scores or None}`; an item
    absent from `scores_of` is absent from the verdicts too (a failed item)."""
    return {
        item.key: scores_of[(item.sample, item.threshold)]
        for item in items
        if (item.sample, item.threshold) in scores_of
    }


# --- the rubric ------------------------------------------------------------------------------


# sha256 of the official `create_llm_judge_prompt("the surgeon cuts", "the surgeon dissects",
# task_type)` in eval_caption_llm_judge.py: the prompt must be the same bytes.
@pytest.mark.parametrize(
    ("task", "label", "digest"),
    [
        (
            Task.DENSE_CAPTIONING,
            "dense captioning",
            "70908a68788f0e24738d66825b98b98b753d16c76e56f084a36c851df2d49adb",
        ),
        (
            Task.VIDEO_SUMMARY,
            "video summary",
            "1cf31497d8a22ebe31a5f94ada8794e49e18cfd22ba5c804e88fcd5149a082d0",
        ),
        (
            Task.REGION_CAPTION,
            "region caption",
            "608747f57eeadbf6cf23fcaaabd99d84cf0775d39bf63a1f3375d8df8c53423c",
        ),
    ],
)
def test_prompt_is_the_official_template_with_the_task_label(rubric, task, label, digest):
    prompt = rubric.prompt(task, ground_truth="the surgeon dissects", prediction="the surgeon cuts")

    assert prompt.startswith(
        f"You are an expert medical evaluator. Assess the quality of the predicted {label}"
        " against the ground truth.\n\n**Ground Truth:** the surgeon dissects\n\n"
        "**Prediction:** the surgeon cuts\n\nEvaluate the prediction on these 5 aspects"
        " (scale 1-5):\n\n**R2 - Medical Terminology Accuracy (1-5):**\n"
    )
    assert prompt.endswith("Example response:\nR2: 4\nR3: 3\nR8: 5\nR5: 4\nR4: 5\n")
    assert hashlib.sha256(prompt.encode()).hexdigest() == digest


def test_prompt_accepts_the_task_value_as_a_string(rubric):
    by_value = rubric.prompt("region_caption", ground_truth="g", prediction="p")

    assert by_value == rubric.prompt(Task.REGION_CAPTION, ground_truth="g", prediction="p")


def test_prompt_leaves_placeholders_and_braces_inside_the_texts_as_written(rubric):
    prompt = rubric.prompt(
        Task.VIDEO_SUMMARY, ground_truth="{prediction} and {task}", prediction="{ground_truth} {}"
    )

    assert (
        "**Ground Truth:** {prediction} and {task}\n\n**Prediction:** {ground_truth} {}\n\n"
        in prompt
    )
    assert prompt.count("{") == 4


def test_item_prompt_puts_the_reference_as_ground_truth(rubric):
    item = JudgeItem(VS_LLM, Task.VIDEO_SUMMARY, 0, "AVOS", prediction="P text", reference="G text")

    assert "**Ground Truth:** G text\n\n**Prediction:** P text\n" in item.prompt(rubric)


@pytest.mark.parametrize(
    "answer",
    [
        "R2: 4\nR3: 3\nR8: 5\nR5: 2\nR4: 1",
        "R2 = 4\nR3 = 3\nR8 = 5\nR5 = 2\nR4 = 1",
        "R2 : 4\nR3 : 3\nR8 : 5\nR5 : 2\nR4 : 1",
        "R2 4\nR3 3\nR8 5\nR5 2\nR4 1",
        "**R2**: 4\n**R3**: 3\n**R8**: 5\n**R5**: 2\n**R4**: 1",
        "R2:4, R3:3, R8:5, R5:2, R4:1",
    ],
    ids=["colon", "equals", "spaced-colon", "space", "bold", "inline"],
)
def test_parse_reads_each_official_answer_form(rubric, answer):
    assert rubric.parse(answer) == scores(4, 3, 5, 2, 1)


def test_parse_takes_the_first_pattern_that_matches_not_the_first_occurrence(rubric):
    # "R2 = 2" comes first in the text, but the pattern "R2:" is tried first; likewise
    # "R3 : 5" (third pattern) beats "R3 1" (fourth).
    answer = "R2 = 2\nR2: 5\nR3 1\nR3 : 5\nR8: 3\nR5: 3\nR4: 3"

    assert rubric.parse(answer) == scores(5, 5, 3, 3, 3)


def test_parse_names_the_missing_aspects(rubric):
    with pytest.raises(VerdictError, match=r"^no score for R8, R4$"):
        rubric.parse("R2: 4\nR3: 3\nR5: 2")


@pytest.mark.parametrize("bad", [0, 6, 10])
def test_parse_rejects_a_score_outside_one_to_five(rubric, bad):
    with pytest.raises(VerdictError, match=rf"^scores outside 1-5: R8={bad}$"):
        rubric.parse(f"R2: 4\nR3: 3\nR8: {bad}\nR5: 2\nR4: 1")


@pytest.mark.parametrize("answer", ["", None])
def test_parse_rejects_an_empty_answer(rubric, answer):
    with pytest.raises(VerdictError, match="empty"):
        rubric.parse(answer)


def test_medvidbench_rubric_settings_are_the_official_ones(rubric):
    assert rubric.settings() == {
        "aspects": list(ASPECTS),
        "aspect_names": {
            "R2": "Medical Terminology Accuracy",
            "R3": "Anatomical/Instrument Detail",
            "R8": "Specificity and Detail Level",
            "R5": "Clinical Context Relevance",
            "R4": "Action/State Accuracy",
        },
        "patterns": OFFICIAL_PATTERNS,
        "score_min": 1,
        "score_max": 5,
        "task_labels": {
            "dense_captioning": "dense captioning",
            "video_summary": "video summary",
            "region_caption": "region caption",
        },
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"template": "{task} {prediction}"}, r"lacks \{ground_truth\}"),
        ({"template": "{ground_truth} {prediction}"}, r"lacks \{task\}"),
        ({"template": "{task} {ground_truth}"}, r"lacks \{prediction\}"),
        ({"aspects": ()}, "at least one aspect"),
        ({"patterns": ()}, "at least one answer pattern"),
        ({"patterns": (r"R1:\s*(\d+)",)}, r"lacks \{aspect\}"),
        ({"patterns": (r"{aspect}:\s*\d+",)}, "exactly one group"),
        ({"patterns": (r"{aspect}(:)\s*(\d+)",)}, "exactly one group"),
        ({"patterns": (r"{aspect}:\s*(\d+",)}, "not a regex"),
        ({"score_min": 0}, "score range"),
        ({"score_min": 5, "score_max": 4}, "score range"),
        ({"task_labels": {"video_summary": "v", "region_caption": "r"}}, "dense_captioning"),
    ],
)
def test_rubric_that_cannot_work_is_refused(changes, message):
    with pytest.raises(RubricError, match=message):
        minimal_rubric(**changes)


def test_rubric_settings_round_trip(rubric):
    again = Rubric.from_dict(rubric.settings(), template=rubric.template)

    assert again == rubric
    assert again.version == rubric.version
    assert again.parse("R2: 1 R3: 2 R8: 3 R5: 4 R4: 5") == scores(1, 2, 3, 4, 5)


def test_rubric_from_incomplete_settings_is_refused(rubric):
    settings_without_patterns = {k: v for k, v in rubric.settings().items() if k != "patterns"}

    with pytest.raises(RubricError, match="incomplete"):
        Rubric.from_dict(settings_without_patterns, template=rubric.template)


def test_version_is_stable_and_changes_with_a_pattern_or_the_template(rubric):
    reloaded = load_rubric(SCORING_DATA_DIR / "medvidbench_judge_prompt.txt")
    fewer_patterns = replace(rubric, patterns=rubric.patterns[:-1])
    other_template = replace(rubric, template=rubric.template + "\n")

    assert reloaded.version == rubric.version
    assert len(rubric.version) == 16
    assert fewer_patterns.version != rubric.version
    assert other_template.version != rubric.version
    assert other_template.version != fewer_patterns.version


# --- the items -------------------------------------------------------------------------------


def test_video_summary_and_region_caption_give_one_item_per_judged_sample():
    test_set = make_test_set(
        gt_record("video_summary_gpt", "The surgeon dissects the gallbladder."),
        gt_record("region_caption_gemini", "A grasper holds tissue.", dataset="CoPESD"),
        gt_record("video_summary_gpt", "The surgeon sutures."),
        gt_record("region_caption_gemini", "A hook cauterises."),
        gt_record("video_summary_gpt", ""),
    )
    predictions = ["A cholecystectomy.", "Grasper.", "", "   ", "Something."]

    assert build_items(test_set, predictions) == [
        JudgeItem(
            VS_LLM,
            Task.VIDEO_SUMMARY,
            0,
            "AVOS",
            "A cholecystectomy.",
            "The surgeon dissects the gallbladder.",
        ),
        JudgeItem(RC_LLM, Task.REGION_CAPTION, 1, "CoPESD", "Grasper.", "A grasper holds tissue."),
        # Row 2's empty prediction is dropped; row 3's spaces are judged (the official scorer
        # tests truthiness only); row 4's empty reference leaves nothing to judge.
        JudgeItem(RC_LLM, Task.REGION_CAPTION, 3, "AVOS", "   ", "A hook cauterises."),
    ]


def test_items_only_for_the_judged_tasks():
    test_set = make_test_set(
        gt_record("tal", "0-10 seconds", [{"spans": [{"start": 0, "end": 10}]}]),
        gt_record("video_summary_gpt", "Summary."),
    )

    items = build_items(test_set, ["0-10 seconds", "A summary."])

    assert [(item.metric, item.sample) for item in items] == [(VS_LLM, 1)]


def test_items_need_predictions_aligned_with_the_test_set():
    test_set = make_test_set(gt_record("video_summary_gpt", "Summary."))

    with pytest.raises(ValueError, match="aligned"):
        build_items(test_set, ["a", "b"])


def test_dense_captioning_pairs_a_perfect_match_at_all_three_thresholds():
    test_set = make_test_set(dvc_record([(0.0, 10.0, "the surgeon incises")]))

    items = build_items(test_set, ["0.0-10.0 seconds: Phase 1: the surgeon cuts"])

    assert items == [
        JudgeItem(
            DVC_LLM,
            Task.DENSE_CAPTIONING,
            0,
            "AVOS",
            "Phase 1: the surgeon cuts",
            "the surgeon incises",
            threshold=threshold,
            pair=0,
        )
        for threshold in (0.3, 0.5, 0.7)
    ]
    assert [item.key for item in items] == [
        "DVC_llm/0/0.3/0",
        "DVC_llm/0/0.5/0",
        "DVC_llm/0/0.7/0",
    ]


@pytest.mark.parametrize(
    ("predicted", "thresholds"),
    [
        ("0.0-10.0", [0.3, 0.5]),  # 10 / (10 + 20 - 10) = 0.5 exactly: >= 0.5, < 0.7
        ("0.0-6.0", [0.3]),  # 6 / 20 = 0.3 exactly
        ("0.0-14.0", [0.3, 0.5, 0.7]),  # 14 / 20 = 0.7 exactly
        ("0.0-5.0", []),  # 5 / 20 = 0.25
        ("10.0-34.0", []),  # 10 / (24 + 20 - 10) = 10 / 34, below 0.3
    ],
)
def test_dense_captioning_pairs_when_plain_iou_reaches_the_threshold(predicted, thresholds):
    # The reference 0-20; IoU = inter / (len1 + len2 - inter), in seconds.
    test_set = make_test_set(dvc_record([(0.0, 20.0, "reference")]))

    items = build_items(test_set, [f"{predicted} seconds: caption"])

    assert [item.threshold for item in items] == thresholds


def test_dense_captioning_pairs_with_the_reference_of_highest_iou():
    test_set = make_test_set(
        dvc_record([(0.0, 30.0, "long"), (0.0, 12.0, "close"), (8.0, 10.0, "inside")])
    )

    items = build_items(test_set, ["0.0-10.0 seconds: cut"])

    # IoUs: 10/30, 10/12, 2/10: "close" wins at 0.3, 0.5 and 0.7 (10/12 >= 0.7).
    assert [(item.threshold, item.reference) for item in items] == [
        (0.3, "close"),
        (0.5, "close"),
        (0.7, "close"),
    ]


@pytest.mark.parametrize(
    ("references", "winner"),
    [
        ([(0.0, 20.0, "first"), (0.0, 5.0, "second")], "first"),
        ([(0.0, 5.0, "first"), (0.0, 20.0, "second")], "first"),
    ],
)
def test_dense_captioning_first_reference_wins_a_tie(references, winner):
    # Both references have IoU 0.5 with 0-10 (10 / 20 and 5 / 10).
    test_set = make_test_set(dvc_record(references))

    items = build_items(test_set, ["0.0-10.0 seconds: cut"])

    assert [(item.threshold, item.reference) for item in items] == [
        (0.3, winner),
        (0.5, winner),
    ]


def test_dense_captioning_does_not_flatten_overlapping_events():
    test_set = make_test_set(dvc_record([(0.0, 10.0, "ref a"), (5.0, 15.0, "ref b")]))

    items = build_items(test_set, ["0.0-10.0 seconds: a\n5.0-15.0 seconds: b"])

    # Flattened, the events would be 0-5, 5-10, 10-15 and none would reach 0.7.
    assert [(item.threshold, item.pair, item.prediction, item.reference) for item in items] == [
        (0.3, 0, "a", "ref a"),
        (0.3, 1, "b", "ref b"),
        (0.5, 0, "a", "ref a"),
        (0.5, 1, "b", "ref b"),
        (0.7, 0, "a", "ref a"),
        (0.7, 1, "b", "ref b"),
    ]
    assert len({item.key for item in items}) == 6


def test_dense_captioning_two_events_may_pair_with_one_reference():
    test_set = make_test_set(dvc_record([(0.0, 10.0, "ref")]))

    items = build_items(test_set, ["0.0-10.0 seconds: a\n0.0-8.0 seconds: b"])

    # 8 / 10 = 0.8 for the second event: both pair at every threshold.
    assert [(item.threshold, item.prediction, item.reference) for item in items] == [
        (0.3, "a", "ref"),
        (0.3, "b", "ref"),
        (0.5, "a", "ref"),
        (0.5, "b", "ref"),
        (0.7, "a", "ref"),
        (0.7, "b", "ref"),
    ]


def test_dense_captioning_drops_repeated_predicted_spans():
    test_set = make_test_set(dvc_record([(0.0, 10.0, "ref")]))

    items = build_items(test_set, ["0.0-10.0 seconds: first\n0.0-10.0 seconds: again"])

    assert [(item.threshold, item.prediction) for item in items] == [
        (0.3, "first"),
        (0.5, "first"),
        (0.7, "first"),
    ]


@pytest.mark.parametrize(
    ("segments", "prediction"),
    [
        ([(0.0, 10.0, "ref")], "the surgeon cuts"),  # no parseable event
        ([(0.0, 10.0, "ref")], ""),  # empty prediction
        ([], "0.0-10.0 seconds: cut"),  # no reference segment
        ([(0.0, 10.0, "ref")], "50.0-60.0 seconds: cut"),  # no overlap
    ],
)
def test_dense_captioning_without_pairs_gives_no_items(segments, prediction):
    test_set = make_test_set(dvc_record(segments))

    assert build_items(test_set, [prediction]) == []


# --- aggregation: video summary and region caption -------------------------------------------


def test_video_summary_pools_the_aspect_means_over_datasets_and_excludes_failures(rubric):
    test_set = make_test_set(
        gt_record("video_summary_gpt", "s0", dataset="AVOS"),
        gt_record("video_summary_gpt", "s1", dataset="CoPESD"),
        gt_record("video_summary_gpt", "s2", dataset="AVOS"),
        gt_record("video_summary_gpt", "s3", dataset="AVOS"),
        gt_record("video_summary_gpt", "s4", dataset="CoPESD"),
        gt_record("video_summary_gpt", "s5", dataset="CoPESD"),
    )
    items = build_items(test_set, ["p0", "p1", "p2", "p3", "p4", ""])
    verdicts = {
        "VS_llm/0": scores(4, 3, 5, 4, 5),
        "VS_llm/1": scores(1, 1, 1, 1, 1),
        "VS_llm/2": scores(2, 2, 2, 2, 2),
        "VS_llm/3": None,  # every attempt failed
        # VS_llm/4 absent: failed too
    }

    outcome = aggregate(test_set, items, verdicts, rubric)

    # Per aspect, over the three judged items (R2, R3, R8, R5, R4):
    r2, r3, r8, r5, r4 = (
        (4 + 1 + 2) / 3,
        (3 + 1 + 2) / 3,
        (5 + 1 + 2) / 3,
        (4 + 1 + 2) / 3,
        (5 + 1 + 2) / 3,
    )
    assert outcome.aspects[VS_LLM] == {"R2": r2, "R3": r3, "R8": r8, "R5": r5, "R4": r4}
    assert outcome.metrics[VS_LLM] == (r2 + r3 + r8 + r5 + r4) / 5
    assert outcome.metrics[VS_LLM] == pytest.approx(2.4)
    # Pooled, not the mean of the dataset values ((3.1 + 1.0) / 2 = 2.05).
    assert outcome.per_dataset[VS_LLM] == {
        "AVOS": ((4 + 2) / 2 + (3 + 2) / 2 + (5 + 2) / 2 + (4 + 2) / 2 + (5 + 2) / 2) / 5,
        "CoPESD": (1 + 1 + 1 + 1 + 1) / 5,
    }
    assert outcome.counts[VS_LLM] == {"items": 5, "judged": 3, "failed": 2}
    assert outcome.unavailable == []


def test_region_caption_is_aggregated_apart_from_video_summary(rubric):
    test_set = make_test_set(
        gt_record("region_caption_gemini", "r0"),
        gt_record("video_summary_gpt", "v1"),
        gt_record("region_caption_gemini", "r2"),
    )
    items = build_items(test_set, ["p0", "p1", "p2"])
    verdicts = {
        "RC_llm/0": scores(5, 4, 3, 2, 1),
        "VS_llm/1": scores(1, 1, 1, 1, 1),
        "RC_llm/2": scores(3, 3, 3, 3, 4),
    }

    outcome = aggregate(test_set, items, verdicts, rubric)

    assert outcome.metrics == {
        DVC_LLM: None,  # no dense-captioning sample
        VS_LLM: (1 + 1 + 1 + 1 + 1) / 5,
        RC_LLM: ((5 + 3) / 2 + (4 + 3) / 2 + (3 + 3) / 2 + (2 + 3) / 2 + (1 + 4) / 2) / 5,
    }
    assert outcome.counts[RC_LLM] == {"items": 2, "judged": 2, "failed": 0}
    assert outcome.counts[DVC_LLM] == {"items": 0, "judged": 0, "failed": 0}


# Bug in judge.py: `aggregate` computes `_aspect_means(judged, ...)` before its `if judged`
# guard, so a task whose predictions are all empty divides by zero instead of scoring 0.0.
def test_caption_metric_is_zero_when_every_prediction_is_empty(rubric):
    test_set = make_test_set(
        gt_record("video_summary_gpt", "s0"), gt_record("region_caption_gemini", "r1")
    )
    items = build_items(test_set, ["", ""])

    outcome = aggregate(test_set, items, {}, rubric)

    assert items == []
    assert outcome.metrics == {DVC_LLM: None, VS_LLM: 0.0, RC_LLM: 0.0}
    assert outcome.counts[VS_LLM] == {"items": 0, "judged": 0, "failed": 0}
    assert outcome.unavailable == []


def test_caption_metric_is_unavailable_when_every_item_failed(rubric):
    test_set = make_test_set(
        gt_record("video_summary_gpt", "s0"),
        gt_record("video_summary_gpt", "s1"),
        gt_record("region_caption_gemini", "r2"),
    )
    items = build_items(test_set, ["p0", "p1", "p2"])

    outcome = aggregate(
        test_set, items, {"VS_llm/0": None, "RC_llm/2": scores(2, 2, 2, 2, 2)}, rubric
    )

    assert outcome.metrics[VS_LLM] is None
    assert outcome.metrics[RC_LLM] == (2 + 2 + 2 + 2 + 2) / 5
    assert outcome.counts[VS_LLM] == {"items": 2, "judged": 0, "failed": 2}
    assert VS_LLM not in outcome.per_dataset
    assert outcome.unavailable == [VS_LLM]


def test_caption_metric_is_none_without_samples_of_its_task(rubric):
    test_set = make_test_set(gt_record("tal", "0-10", [{"spans": [{"start": 0, "end": 10}]}]))

    outcome = aggregate(test_set, build_items(test_set, ["0-10"]), {}, rubric)

    assert outcome.metrics == {DVC_LLM: None, VS_LLM: None, RC_LLM: None}
    assert outcome.unavailable == []


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(*[st.integers(min_value=1, max_value=5)] * 5) | st.none(),
        min_size=1,
        max_size=8,
    ).filter(lambda rows: any(row is not None for row in rows))
)
def test_video_summary_is_the_mean_of_the_aspect_means(rubric, rows):
    test_set = make_test_set(*[gt_record("video_summary_gpt", "ref") for _ in rows])
    items = build_items(test_set, ["prediction"] * len(rows))
    verdicts = {
        item.key: None if row is None else dict(zip(ASPECTS, row, strict=True))
        for item, row in zip(items, rows, strict=True)
    }
    judged = [row for row in rows if row is not None]
    aspect_means = [sum(row[i] for row in judged) / len(judged) for i in range(5)]

    outcome = aggregate(test_set, items, verdicts, rubric)

    # numpy's mean, as the official scorer takes it (Python's sum() compensates rounding)
    assert outcome.metrics[VS_LLM] == float(np.mean(aspect_means))
    assert outcome.counts[VS_LLM] == {
        "items": len(rows),
        "judged": len(judged),
        "failed": len(rows) - len(judged),
    }


# --- aggregation: dense captioning -----------------------------------------------------------


def test_dense_captioning_thresholds_datasets_and_weights(rubric):
    test_set = make_test_set(
        # AVOS: three samples, one with an empty prediction (it still weighs).
        dvc_record([(0.0, 10.0, "A")], dataset="AVOS"),  # IoU 1: paired at 0.3, 0.5, 0.7
        dvc_record([(0.0, 20.0, "B")], dataset="AVOS"),  # IoU 0.5: paired at 0.3, 0.5
        dvc_record([(0.0, 10.0, "-")], dataset="AVOS"),  # empty prediction
        # CoPESD: one sample, paired at 0.3 only.
        dvc_record([(0.0, 10.0, "C")], dataset="CoPESD"),  # IoU 0.4
        # NurViD: one sample without any pair.
        dvc_record([(0.0, 10.0, "D")], dataset="NurViD"),
        gt_record(  # not a dense-captioning sample: no weight
            "tal", "0-10 seconds", [{"spans": [{"start": 0, "end": 10}]}], dataset="NurViD"
        ),
    )
    predictions = [
        "0.0-10.0 seconds: a",
        "0.0-10.0 seconds: b",
        "",
        "0.0-4.0 seconds: c",
        "50.0-60.0 seconds: d",
        "0-10 seconds",
    ]
    items = build_items(test_set, predictions)
    verdicts = verdicts_by(
        items,
        {
            (0, 0.3): scores(5, 4, 3, 2, 1),
            (1, 0.3): scores(3, 4, 5, 2, 1),
            (0, 0.5): scores(4, 4, 4, 4, 4),
            (1, 0.5): None,  # failed
            (0, 0.7): scores(2, 2, 2, 2, 3),
            (3, 0.3): scores(5, 5, 4, 4, 3),
        },
    )

    outcome = aggregate(test_set, items, verdicts, rubric)

    avos_03 = ((5 + 3) / 2 + (4 + 4) / 2 + (3 + 5) / 2 + (2 + 2) / 2 + (1 + 1) / 2) / 5
    avos_05 = (4 + 4 + 4 + 4 + 4) / 5
    avos_07 = (2 + 2 + 2 + 2 + 3) / 5
    avos = (avos_03 + avos_05 + avos_07) / 3
    copesd_03 = (5 + 5 + 4 + 4 + 3) / 5
    copesd = copesd_03  # the thresholds without a pair score 0 and are left out, not / 3
    assert outcome.thresholds == {
        "AVOS": {"0.3": avos_03, "0.5": avos_05, "0.7": avos_07},
        "CoPESD": {"0.3": copesd_03, "0.5": 0.0, "0.7": 0.0},
        "NurViD": {"0.3": 0.0, "0.5": 0.0, "0.7": 0.0},
    }
    assert outcome.per_dataset[DVC_LLM] == {"AVOS": avos, "CoPESD": copesd, "NurViD": 0.0}
    # Weighted by the dense-captioning samples: AVOS 3, CoPESD 1, NurViD 1.
    assert outcome.metrics[DVC_LLM] == (avos * 3 + copesd * 1 + 0.0 * 1) / (3 + 1 + 1)
    assert outcome.metrics[DVC_LLM] == pytest.approx(2.68)  # (3 * 9.2 / 3 + 4.2 + 0) / 5
    assert outcome.counts[DVC_LLM] == {"items": 6, "judged": 5, "failed": 1}


def test_dense_captioning_threshold_whose_items_all_failed_is_left_out(rubric):
    test_set = make_test_set(dvc_record([(0.0, 10.0, "A")]))
    items = build_items(test_set, ["0.0-10.0 seconds: a"])
    verdicts = verdicts_by(
        items, {(0, 0.3): scores(4, 4, 4, 4, 4), (0, 0.5): scores(2, 2, 2, 2, 2)}
    )

    outcome = aggregate(test_set, items, verdicts, rubric)

    assert outcome.thresholds == {"AVOS": {"0.3": 4.0, "0.5": 2.0, "0.7": 0.0}}
    assert outcome.metrics[DVC_LLM] == ((4 + 4 + 4 + 4 + 4) / 5 + (2 + 2 + 2 + 2 + 2) / 5) / 2
    assert outcome.counts[DVC_LLM] == {"items": 3, "judged": 2, "failed": 1}


def test_dense_captioning_averages_only_the_aspect_means_above_zero(rubric):
    # A zero cannot come out of `Rubric.parse`, but the rule is the official one: an aspect
    # mean of 0 is left out of the threshold's mean.
    test_set = make_test_set(dvc_record([(0.0, 10.0, "A")]))
    items = build_items(test_set, ["0.0-4.0 seconds: a"])  # IoU 0.4: paired at 0.3 only
    verdicts = verdicts_by(items, {(0, 0.3): scores(4, 0, 0, 2, 3)})

    outcome = aggregate(test_set, items, verdicts, rubric)

    assert outcome.thresholds == {"AVOS": {"0.3": (4 + 2 + 3) / 3, "0.5": 0.0, "0.7": 0.0}}
    assert outcome.metrics[DVC_LLM] == (4 + 2 + 3) / 3


def test_dense_captioning_is_zero_when_nothing_pairs(rubric):
    test_set = make_test_set(
        dvc_record([(0.0, 10.0, "A")]), dvc_record([(0.0, 10.0, "B")], dataset="CoPESD")
    )
    items = build_items(test_set, ["", "90.0-99.0 seconds: far away"])

    outcome = aggregate(test_set, items, {}, rubric)

    assert items == []
    assert outcome.metrics[DVC_LLM] == 0.0
    assert outcome.per_dataset[DVC_LLM] == {"AVOS": 0.0, "CoPESD": 0.0}
    assert outcome.unavailable == []


def test_dense_captioning_is_unavailable_when_every_item_failed(rubric):
    test_set = make_test_set(dvc_record([(0.0, 10.0, "A")]))
    items = build_items(test_set, ["0.0-10.0 seconds: a"])

    outcome = aggregate(test_set, items, {items[0].key: None}, rubric)

    assert outcome.metrics[DVC_LLM] is None
    assert outcome.counts[DVC_LLM] == {"items": 3, "judged": 0, "failed": 3}
    assert outcome.unavailable == [DVC_LLM]


# --- the result ------------------------------------------------------------------------------


def test_with_judge_fills_the_judge_metrics_and_keeps_the_others(rubric):
    test_set = make_test_set(
        gt_record("tal", "0-10 seconds", [{"spans": [{"start": 0, "end": 10}]}]),
        dvc_record([(0.0, 10.0, "A")]),
        gt_record("video_summary_gpt", "s2", dataset="CoPESD"),
        gt_record("video_summary_gpt", "s3", dataset="CoPESD"),
    )
    predictions = ["0-10 seconds", "0.0-10.0 seconds: a", "p2", "p3"]
    result = evaluate(test_set, predictions)
    items = build_items(test_set, predictions)
    verdicts = verdicts_by(
        items,
        {
            (1, 0.3): scores(5, 5, 5, 5, 5),
            (1, 0.5): scores(3, 3, 3, 3, 3),
            (1, 0.7): scores(4, 4, 4, 4, 4),
            (2, None): scores(2, 3, 4, 5, 1),
        },
    )
    outcome = aggregate(test_set, items, verdicts, rubric)

    judged = with_judge(result, outcome)

    dvc = ((5 + 5 + 5 + 5 + 5) / 5 + (3 + 3 + 3 + 3 + 3) / 5 + (4 + 4 + 4 + 4 + 4) / 5) / 3
    vs = (2 + 3 + 4 + 5 + 1) / 5
    assert judged.metrics == {
        **result.metrics,
        DVC_LLM: dvc,
        VS_LLM: vs,
        RC_LLM: None,
    }
    assert judged.metrics[TAG_MIOU_03] == result.metrics[TAG_MIOU_03] == 1.0
    assert judged.per_dataset == {
        **result.per_dataset,
        DVC_LLM: {"AVOS": dvc},
        VS_LLM: {"CoPESD": vs},
    }
    assert judged.per_dataset[DVC_F1] == result.per_dataset[DVC_F1]
    assert judged.counts == {
        **result.counts,
        DVC_LLM: {"scored": 3, "total": 3},
        VS_LLM: {"scored": 1, "total": 2},
    }
    assert RC_LLM not in judged.counts
    assert judged.parsed == result.parsed
    assert result.metrics[VS_LLM] is None  # the input is left as it was


def test_with_judge_leaves_an_unavailable_metric_empty(rubric):
    test_set = make_test_set(gt_record("video_summary_gpt", "s0"))
    result = evaluate(test_set, ["p0"])
    items = build_items(test_set, ["p0"])

    judged = with_judge(result, aggregate(test_set, items, {}, rubric))

    assert judged.metrics[VS_LLM] is None
    assert VS_LLM not in judged.counts
    assert VS_LLM not in judged.per_dataset


def test_means_are_summed_as_numpy_does_not_as_python_sum():
    # Python >= 3.12's sum() compensates rounding; the official scorer's np.mean of five values
    # adds them plainly, left to right. These differ in the last bit here.
    from plugins.medvidbench.scoring.judge import _mean_of

    values = [1.0, 1.0, 4 / 3, 4 / 3, 4 / 3]
    assert sum(values) / 5 != float(np.mean(values))

    assert _mean_of(values) == float(np.mean(values))
