import pytest

from plugins.medvidbench.scoring.metrics.assessment import (
    score_cvs_assessment,
    score_skill_assessment,
)
from plugins.medvidbench.scoring.parsers import parse_cvs, parse_skill_aspects
from plugins.medvidbench.scoring.tasks import CVS_ACC, SA_ACC

from .factories import gt_record, make_test_set

pytestmark = pytest.mark.unit

SCORES = {"Respect for tissue": 2, "Time and motion": 3, "Flow of operation": 4}


def sa_record(scores=SCORES, level="N", answer="reference", dataset="JIGSAWS"):
    return gt_record(
        "skill_assessment",
        answer,
        [{"skill_level": level, "skill_scores": scores}],
        dataset=dataset,
    )


def cvs_record(scores, answer="reference", dataset="Cholec80_CVS"):
    return gt_record("cvs_assessment", answer, [{"cvs_scores": scores}], dataset=dataset)


def run(scorer, records, predictions):
    test_set = make_test_set(*records)
    return scorer(list(zip(test_set.samples, predictions, strict=True)))


def test_skill_parser_splits_on_commas_and_keeps_names_verbatim():
    text = "Respect for tissue: 2/5, Suture/needle handling: 1/5, respect for tissue 3/5"
    assert parse_skill_aspects(text) == {"Respect for tissue": 2, "Suture/needle handling": 1}


def test_skill_aspects_missing_from_the_prediction_are_left_out():
    outcome = run(
        score_skill_assessment, [sa_record()], ["Respect for tissue: 2/5, Time and motion: 1/5"]
    )
    # Respect 1/1 correct, Time 0/1, Flow not named: mean(1.0, 0.0).
    assert outcome.metrics[SA_ACC].value == 0.5


def test_skill_accuracy_is_balanced_over_aspects():
    records = [sa_record(), sa_record()]
    predictions = ["Respect for tissue: 2/5, Time and motion: 3/5", "Respect for tissue: 5/5"]
    # Respect 1 of 2, Time 1 of 1: mean(0.5, 1.0) = 0.75, not the pooled 2/3.
    assert run(score_skill_assessment, records, predictions).metrics[SA_ACC].value == 0.75


def test_skill_prediction_without_any_n_of_5_is_skipped_not_zero():
    outcome = run(
        score_skill_assessment,
        [sa_record(), sa_record()],
        ["A novice surgeon.", "Respect for tissue: 2/5"],
    )
    assert (outcome.metrics[SA_ACC].value, outcome.metrics[SA_ACC].scored) == (1.0, 1)


def test_skill_aspect_names_are_case_sensitive():
    outcome = run(score_skill_assessment, [sa_record()], ["respect for tissue: 2/5"])
    assert outcome.metrics[SA_ACC].value == 0.0  # nothing counted in the only dataset


def test_skill_reference_text_is_used_when_structured_scores_are_missing():
    record = gt_record(
        "skill_assessment", "Respect for tissue: 4/5", [{"skill_level": "E"}], dataset="JIGSAWS"
    )
    assert (
        run(score_skill_assessment, [record], ["Respect for tissue: 4/5"]).metrics[SA_ACC].value
        == 1.0
    )


def test_skill_reference_without_a_level_or_score_text_is_skipped():
    record = gt_record(
        "skill_assessment",
        "unknown",
        [{"skill_level": " ", "skill_scores": SCORES}],
        dataset="JIGSAWS",
    )
    outcome = run(score_skill_assessment, [record, sa_record()], ["Respect for tissue: 2/5"] * 2)
    assert outcome.metrics[SA_ACC].scored == 1


def test_skill_is_the_mean_over_datasets_even_with_one_left_empty():
    records = [sa_record(), sa_record(dataset="Other")]
    outcome = run(score_skill_assessment, records, ["Respect for tissue: 2/5", "no score"])
    assert outcome.metrics[SA_ACC].per_dataset == {"JIGSAWS": 1.0, "Other": 0.0}
    assert outcome.metrics[SA_ACC].value == 0.5


def test_cvs_parser_reads_each_part_by_its_first_matching_name():
    assert parse_cvs("TWO STRUCTURES: 2, Cystic plate:1, Hepatocystic triangle: 0") == {
        "two_structures": 2,
        "cystic_plate": 1,
        "hepatocystic_triangle": 0,
    }
    assert parse_cvs("Two structure: 2, cystic plate - 1") == {}


def test_cvs_components_missing_from_the_prediction_are_left_out():
    record = cvs_record({"two_structures": 2, "cystic_plate": 1, "hepatocystic_triangle": 0})
    outcome = run(score_cvs_assessment, [record], ["Two structures: 2, Cystic plate: 0"])
    assert outcome.metrics[CVS_ACC].value == 0.5


def test_cvs_with_nothing_parsed_scores_zero():
    record = cvs_record({"two_structures": 2, "cystic_plate": 1, "hepatocystic_triangle": 0})
    outcome = run(score_cvs_assessment, [record], ["Two structure: 2"])
    assert outcome.metrics[CVS_ACC].value == 0.0
    assert outcome.parsed == [False]


def test_cvs_reference_text_is_used_when_structured_scores_are_empty():
    record = cvs_record({}, answer="Two structures: 1, Cystic plate: 1, Hepatocystic triangle: 1")
    outcome = run(score_cvs_assessment, [record], ["Hepatocystic triangle: 1"])
    assert outcome.metrics[CVS_ACC].value == 1.0


def test_cvs_is_the_mean_over_datasets_of_component_balanced_accuracy():
    records = [
        cvs_record({"two_structures": 2}),
        cvs_record({"two_structures": 2}),
        cvs_record({"cystic_plate": 1}, dataset="Other"),
    ]
    predictions = ["Two structures: 2", "Two structures: 1", "Cystic plate: 1"]
    outcome = run(score_cvs_assessment, records, predictions)
    assert outcome.metrics[CVS_ACC].per_dataset == {"Cholec80_CVS": 0.5, "Other": 1.0}
    assert outcome.metrics[CVS_ACC].value == 0.75
