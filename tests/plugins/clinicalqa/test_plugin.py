"""The plugin as the platform sees it: the protocol, its entry point, the definition
(categories, rating metric, model facts, hosted evaluation), the result's shape, the file
guide and the template."""

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from benchmark.definitions import MODEL_FACT_KEYS
from benchmark.plugins import (
    BenchmarkPlugin,
    Contributions,
    ScoredResult,
    get_plugin,
    registered,
    wording_for,
)
from plugins.clinicalqa.plugin import SCORER_VERSION, plugin

from .factories import as_bytes, make_test_set, mc, oe, rows_for

pytestmark = pytest.mark.unit

PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"


@pytest.fixture
def test_set():
    return make_test_set(mc("mc-1", "A"), mc("mc-2", "B"), oe("oe-1"), mc("mc-3", "C"))


def scored(test_set, answers):
    checked = plugin.check_predictions(
        as_bytes(rows_for(answers)), test_set, options={}, max_prediction_chars=None
    )
    return plugin.score(test_set, checked, options={})


def test_the_plugin_satisfies_the_protocol():
    assert isinstance(plugin, BenchmarkPlugin)
    assert plugin.key == "clinicalqa" == plugin.definition.plugin == plugin.definition.slug
    assert (plugin.judge_step, plugin.judge, plugin.submission_options) == (False, None, ())
    assert plugin.published_rows() == ()
    wording = wording_for(plugin)
    assert (wording.item, wording.breakdown, wording.resampled) == (
        "question",
        "category",
        "questions",
    )


def test_the_entry_point_is_declared_in_pyproject():
    entry_points = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["entry-points"][
        "podium.benchmarks"
    ]
    assert entry_points["clinicalqa"] == "plugins.clinicalqa.plugin:plugin"
    module, _, name = entry_points["clinicalqa"].partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is plugin


def test_registered_for_a_block_it_is_found_by_key():
    with registered(plugin):
        assert get_plugin("clinicalqa") is plugin


def test_the_definition_has_two_categories_and_a_rating_metric():
    definition = plugin.definition
    assert definition.name == "Demo clinical QA"
    assert "Synthetic demo data" in definition.description
    assert "invented for the demo" in definition.about
    assert [(metric.key, metric.task, metric.is_rating) for metric in definition.metrics] == [
        ("accuracy", "multiple_choice", False),
        ("open_ended_rating", "open_ended", True),
    ]
    assert [
        (category.key, category.label, category.metrics, category.ranking)
        for category in definition.categories
    ] == [
        ("close_ended", "Close-ended", ("accuracy",), "metrics"),
        ("open_ended", "Open-ended", ("open_ended_rating",), "rating"),
    ]
    close_ended, open_ended = definition.categories
    assert close_ended.judge_note == ""
    assert open_ended.judge_note.startswith("The demo's stand-in judge is the judge here")
    assert definition.model_facts == MODEL_FACT_KEYS
    assert definition.hosted_evaluation is True


def test_the_result_has_the_accuracy_and_leaves_the_rating_to_the_platform(test_set):
    result, contributions = scored(
        test_set, {"mc-1": "A", "mc-2": "no idea", "oe-1": "Rest.", "mc-3": "Answer: D"}
    )
    assert isinstance(result, ScoredResult)
    assert isinstance(contributions, Contributions)
    assert result.metrics == {"accuracy": 1 / 3}
    assert "open_ended_rating" not in result.metrics
    assert result.scorer_version == SCORER_VERSION
    document = result.to_dict()
    assert document == {
        "scorer_version": SCORER_VERSION,
        "test_set_checksum": test_set.checksum,
        "records": 4,
        "metrics": {"accuracy": 1 / 3},
        "per_dataset": {"accuracy": {"multiple_choice": 1 / 3}},
        "counts": {"accuracy": {"scored": 3, "total": 3}},
        "parsed": {"multiple_choice": {"parsed": 2, "total": 3}},
        "unparsed_examples": {
            "multiple_choice": [{"row": 1, "id": "mc-2", "prediction": "no idea"}]
        },
        "summary": {
            "metrics": {"accuracy": 1 / 3},
            "multiple_choice": {"items": 3, "correct": 1, "unreadable": 1},
            "open_ended": {"items": 1, "empty": 0},
        },
    }
    assert json.loads(json.dumps(document)) == document
    # Nothing of the test set's answers or references reaches the stored result.
    stored = json.dumps(document)
    for secret in ("Rest and fluids", "the liver", "Which organ", '"A"', '"C"'):
        assert secret not in stored
    assert plugin.cli_report(result) == document["summary"]


def test_the_contributions_through_the_protocol(test_set):
    result, contributions = scored(test_set, {"mc-1": "A", "mc-2": "B", "oe-1": "", "mc-3": "D"})
    weights = np.ones((3, len(test_set)), dtype=np.int64)
    weights[1] = [0, 1, 5, 1]  # mc-2 right, mc-3 wrong
    values = contributions.replicate_values(weights)
    assert list(values) == ["accuracy"]
    assert values["accuracy"].tolist() == [result.metrics["accuracy"], 0.5, 2 / 3]
    again = plugin.contributions_from_bytes(contributions.to_bytes())
    assert np.array_equal(
        again.replicate_values(weights, ["accuracy"])["accuracy"], values["accuracy"]
    )
    assert plugin.replicate_clusters(test_set) == [0, 1, 2, 3]


def test_a_test_set_without_multiple_choice_counts_nothing():
    test_set = make_test_set(oe("oe-1"))
    result, _ = scored(test_set, {"oe-1": "Rest."})
    document = result.to_dict()
    assert (
        document["metrics"],
        document["per_dataset"],
        document["counts"],
        document["parsed"],
    ) == ({"accuracy": None}, {}, {}, {})


def test_template_rows_and_row_label(test_set):
    assert list(plugin.template_rows(test_set)) == [
        {"id": "mc-1", "answer": ""},
        {"id": "mc-2", "answer": ""},
        {"id": "oe-1", "answer": ""},
        {"id": "mc-3", "answer": ""},
    ]
    # Rows are matched by id: a position names no item, the messages name the id.
    assert plugin.row_label(test_set, 0) == ""


def test_the_file_guide_in_category_order():
    guide = plugin.file_guide(
        {
            "records": 56,
            "task_counts": {"open_ended": 16, "multiple_choice": 40},
            "qa_type_counts": {},
            "metrics_by_task": {},
        }
    )
    assert guide.table_rows == (("multiple_choice", "40"), ("open_ended", "16"))
    assert guide.sources == {"multiple_choice": ("multiple_choice",), "open_ended": ("open_ended",)}
    assert guide.template_note.startswith("every id of the 56 questions")
    assert "By id" in guide.matching
    assert any('"Answer: C"' in paragraph for paragraph in guide.paragraphs)
