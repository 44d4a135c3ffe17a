"""MedVidBench's definition must agree with the scorer and the spec (spec 4, 5, 6, 7)."""

import dataclasses

import pytest

from benchmark.plugins import get_plugin
from plugins.medvidbench.definition import MEDVIDBENCH, SCORING_DATA_DIR
from plugins.medvidbench.scoring.tasks import JUDGE_METRICS, METRIC_NAMES, METRIC_TASK

pytestmark = pytest.mark.unit


def test_the_metrics_are_the_scorers_in_the_official_column_order():
    assert tuple(metric.key for metric in MEDVIDBENCH.metrics) == METRIC_NAMES


def test_each_metric_belongs_to_the_scorers_task():
    assert {metric.key: metric.task for metric in MEDVIDBENCH.metrics} == {
        key: task.value for key, task in METRIC_TASK.items()
    }


def test_the_judge_metrics_are_the_scorers():
    judged = tuple(metric.key for metric in MEDVIDBENCH.metrics if metric.is_judge_metric)

    assert judged == JUDGE_METRICS


def test_every_metric_is_higher_is_better_with_three_decimals():
    assert {(metric.direction, metric.display_decimals) for metric in MEDVIDBENCH.metrics} == {
        ("higher", 3)
    }


def test_the_ranking_policy_is_the_about_texts():
    assert (MEDVIDBENCH.tie_method, MEDVIDBENCH.ranking_scope, MEDVIDBENCH.ranking_decimals) == (
        "min",
        "global",
        3,
    )


def test_the_judge_rubric_is_the_official_prompt():
    rubric = MEDVIDBENCH.judge_rubric()

    assert rubric == (SCORING_DATA_DIR / "medvidbench_judge_prompt.txt").read_text("utf-8")
    for placeholder in ("{task}", "{ground_truth}", "{prediction}"):
        assert rubric.count(placeholder) == 1


def test_the_about_text_names_the_scorers_rubric_aspects():
    assert (
        "R2 Medical Terminology Accuracy, R3 Anatomical/Instrument Detail, R8 Specificity and "
        "Detail Level, R5 Clinical Context Relevance and R4 Action/State Accuracy"
        in " ".join(MEDVIDBENCH.about.split())
    )


def test_the_citation_is_one_bibtex_entry():
    assert MEDVIDBENCH.citation.startswith("@inproceedings{su2026medgrpo,\n")
    assert MEDVIDBENCH.citation.count("{") == MEDVIDBENCH.citation.count("}")


def test_each_plugin_carries_its_definition():
    assert get_plugin("medvidbench").definition is MEDVIDBENCH
    assert MEDVIDBENCH.plugin == "medvidbench"


def test_a_definition_defaults_to_mean_rank_and_refuses_an_order_it_cannot_rank():
    assert (MEDVIDBENCH.ranking_method, MEDVIDBENCH.ranking_order) == ("mean_rank", ())

    with pytest.raises(ValueError, match=r"^benchmark 'medvidbench'") as refused:
        dataclasses.replace(MEDVIDBENCH, ranking_method="lexicographic", ranking_order=("IoU",))

    assert str(refused.value) == (
        "benchmark 'medvidbench': The ranking order names ['IoU'], which is not among the "
        f"metrics ranked: {list(METRIC_NAMES)}."
    )
    with pytest.raises(ValueError, match="needs an order"):
        dataclasses.replace(MEDVIDBENCH, ranking_method="lexicographic")
