"""The model facts' vocabulary and its one check (benchmark/facts.py, issue 15): what each fact
takes, what a refusal says, how a board shows a fact. Plain Python, no database."""

import math
from pathlib import Path

import pytest

from benchmark import facts
from benchmark.definitions import MODEL_FACT_KEYS
from benchmark.facts import (
    FactError,
    FactsError,
    check_model_facts,
    clean_fact,
    fact_text,
    filterable_facts,
    parameters_text,
)
from tests.benchmark.scoring.test_boundary import imported_modules

pytestmark = pytest.mark.unit

ALL = list(MODEL_FACT_KEYS)


def test_the_vocabulary_has_every_known_fact_in_the_definitions_order():
    assert tuple(facts.FACTS) == MODEL_FACT_KEYS
    assert [fact.key for fact in filterable_facts(ALL)] == ["type", "precision", "domain_specific"]
    assert filterable_facts(["licence", "parameters"]) == []


def test_the_module_imports_no_django():
    path = Path(facts.__file__)
    modules = [module for _, module in imported_modules(path.read_text(), "benchmark.facts")]
    assert [
        module for module in modules if module.split(".")[0] in {"django", "rest_framework"}
    ] == []
    assert not [module for module in modules if module.startswith(("benchmark.", "submissions"))]


@pytest.mark.parametrize(
    ("key", "raw", "stored"),
    [
        ("type", "fine-tuned", "fine-tuned"),
        ("type", " pretrained ", "pretrained"),
        ("parameters", "7", 7.0),
        ("parameters", "0.5", 0.5),
        ("parameters", "70B", 70.0),
        ("parameters", "1.3 b", 1.3),
        ("parameters", 8, 8.0),
        ("parameters", "", None),
        ("licence", " apache-2.0 ", "apache-2.0"),
        ("licence", "Apache 2.0", "Apache 2.0"),
        ("precision", "int4", "int4"),
        ("domain_specific", "yes", "yes"),
        ("domain_specific", False, "no"),
    ],
)
def test_a_fact_is_stored_cleaned(key, raw, stored):
    assert clean_fact(key, raw) == stored


@pytest.mark.parametrize(
    ("key", "raw", "message"),
    [
        ("type", "", "Model type: required; one of pretrained, fine-tuned, preference-tuned."),
        ("type", "Fine-Tuned", "Model type: 'Fine-Tuned' is not one of pretrained, fine-tuned, preference-tuned."),
        ("precision", None, "Precision: required; one of float32, bfloat16, float16, int8, int4."),
        ("precision", "fp8", "Precision: 'fp8' is not one of float32, bfloat16, float16, int8, int4."),
        ("domain_specific", "maybe", "Domain-specific: 'maybe' is not one of yes, no."),
        ("parameters", "0", "Parameters: '0' is not a positive number of billions, e.g. 7 or 0.5."),
        ("parameters", "-2", "Parameters: '-2' is not a positive number of billions, e.g. 7 or 0.5."),
        ("parameters", "nan", "Parameters: 'nan' is not a positive number of billions, e.g. 7 or 0.5."),
        ("parameters", math.inf, "Parameters: inf is not a positive number of billions, e.g. 7 or 0.5."),
        ("parameters", True, "Parameters: True is not a positive number of billions, e.g. 7 or 0.5."),
        ("parameters", "7000000000", "Parameters: 7e+09 billion is more than any model has; give the count in billions (7 for a 7B model)."),
        ("licence", "", "Licence: required; a short text of at most 50 characters, e.g. apache-2.0."),
        ("licence", "mit\napache", "Licence: a short text of at most 50 characters, e.g. apache-2.0, without line breaks or control characters."),
        ("licence", "mit\u202e", "Licence: a short text of at most 50 characters, e.g. apache-2.0, without line breaks or control characters."),
        ("licence", 3, "Licence: 3 is not a short text of at most 50 characters, e.g. apache-2.0."),
    ],
)  # fmt: skip
def test_a_refused_fact_names_itself_and_what_it_takes(key, raw, message):
    with pytest.raises(FactError) as raised:
        clean_fact(key, raw)

    assert (raised.value.field, str(raised.value)) == (key, message)


def test_check_model_facts_lists_every_problem_and_refuses_facts_not_asked():
    with pytest.raises(FactsError) as raised:
        check_model_facts(["type", "precision"], {"type": "tuned", "colour": "grey"})

    assert raised.value.problems == {
        "colour": "'colour' is not a model fact this benchmark asks for; it asks for type, "
        "precision.",
        "type": "Model type: 'tuned' is not one of pretrained, fine-tuned, preference-tuned.",
        "precision": "Precision: required; one of float32, bfloat16, float16, int8, int4.",
    }


def test_check_model_facts_keeps_the_asked_ones_and_partial_skips_the_missing():
    given = {"type": "pretrained", "parameters": "", "licence": "mit", "precision": "float16"}

    assert check_model_facts(ALL, {**given, "domain_specific": "no"}) == {
        "type": "pretrained",
        "licence": "mit",
        "precision": "float16",
        "domain_specific": "no",
    }
    assert check_model_facts(ALL, {"precision": "int8"}, partial=True) == {"precision": "int8"}
    assert check_model_facts([], {}) == {}


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (7.0, "7B"),
        (0.5, "0.5B"),
        (70, "70B"),
        (1.3, "1.3B"),
        (0.125, "0.125B"),
        (None, ""),
        (math.nan, ""),
    ],
)
def test_parameters_read_as_billions(value, shown):
    assert parameters_text(value) == shown


def test_a_fact_as_a_board_shows_it():
    assert fact_text("domain_specific", "yes") == "domain-specific"
    assert fact_text("domain_specific", "no") == "general"
    assert fact_text("parameters", 7.0) == "7B"
    assert fact_text("type", "fine-tuned") == "fine-tuned"
    assert fact_text("licence", "") == ""
