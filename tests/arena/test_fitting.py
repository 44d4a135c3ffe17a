"""A category's fit from its battles (arena/fitting.py, pure): everyone rated when the ratings
exist; the main component rated and the rest pending with the reason when some do not; nobody
rated without a main component, an anchor outside it or too few rounds; an interval with an
unbounded end reported, never bounded by a made-up number."""

import ast

import pytest

from arena.fitting import CategoryOutcome, fit_category, main_component
from benchmark.scoring.ratings import rate_battles

pytestmark = pytest.mark.unit

# A, B and C beat each other round (each lost once and won once): a strongly connected board.
ROUND = [
    ("A", "B", "model_a"),
    ("B", "C", "model_a"),
    ("C", "A", "model_a"),
    ("A", "B", "model_b"),
    ("B", "C", "model_b"),
    ("C", "A", "model_b"),
    ("A", "B", "model_a"),
    ("B", "C", "tie"),
]


def test_no_battles_rate_nobody_and_leave_nobody_pending():
    assert fit_category([]) == CategoryOutcome()


def test_when_every_rating_exists_everyone_is_rated_as_rate_battles_rates_them():
    outcome = fit_category(ROUND, rounds=200, seed=3)

    assert outcome.rated == rate_battles(ROUND, rounds=200, seed=3).models
    assert (outcome.pending, outcome.reason, outcome.battles) == ((), "", 8)


def test_a_newcomer_that_never_lost_or_tied_is_pending_and_the_rest_are_rated_among_themselves():
    battles = [*ROUND, ("D", "A", "model_a"), ("D", "B", "model_a"), ("C", "D", "model_b")]

    outcome = fit_category(battles, rounds=200, seed=3)

    assert outcome.pending == ("D",)
    assert outcome.reason == "model 'D' never lost or tied: its rating is unbounded above"
    assert outcome.rated == rate_battles(ROUND, rounds=200, seed=3).models
    assert outcome.battles == len(ROUND)


def test_a_model_that_only_lost_is_pending_below():
    battles = [*ROUND, ("E", "C", "model_b")]

    outcome = fit_category(battles, rounds=200)

    assert outcome.pending == ("E",)
    assert outcome.reason == "model 'E' never won or tied: its rating is unbounded below"
    assert [row.model for row in outcome.rated] == [
        row.model for row in fit_category(ROUND, rounds=200).rated
    ]


def test_two_models_where_one_won_everything_have_no_main_component_so_both_are_pending():
    battles = [("A", "B", "model_a"), ("B", "A", "model_b")]

    outcome = fit_category(battles)

    assert main_component(battles) == frozenset()
    assert outcome.rated == ()
    assert outcome.pending == ("A", "B")
    assert outcome.reason.startswith(
        "no group of models is larger than every other and has a finite rating: "
    )
    assert "model 'A' never lost or tied" in outcome.reason


def test_an_anchor_outside_the_main_component_leaves_everyone_pending():
    battles = [*ROUND, ("D", "A", "model_a")]

    outcome = fit_category(battles, anchor="D", rounds=200)

    assert outcome.rated == ()
    assert outcome.pending == ("A", "B", "C", "D")
    assert outcome.reason.startswith("the anchor 'D' is not in the largest group")


def test_an_anchor_without_battles_or_too_few_rounds_leave_everyone_pending_with_the_reason():
    unknown = fit_category(ROUND, anchor="Z", rounds=200)
    few = fit_category(ROUND, rounds=10)

    assert unknown.pending == few.pending == ("A", "B", "C")
    assert unknown.reason == "the anchor 'Z' is not one of the 3 models of the battles"
    assert few.reason.startswith("cannot read an interval from 10 rounds")


def test_a_rating_whose_interval_has_an_unbounded_end_is_reported():
    # A beats B 3 times in 4: the rating exists, but about a third of the resamples lose B's
    # one win (docs/ratings.md's example): A's upper end and B's lower end are unbounded.
    battles = [("A", "B", "model_a")] * 3 + [("A", "B", "model_b")]

    outcome = fit_category(battles)

    assert [(row.model, row.ci_low is None, row.ci_high is None) for row in outcome.rated] == [
        ("A", False, True),
        ("B", True, False),
    ]
    assert outcome.unbounded == {"A": "above", "B": "below"}


def test_the_fit_module_imports_no_django(repo_root):
    tree = ast.parse((repo_root / "arena" / "fitting.py").read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }

    assert imported <= {"__future__", "collections", "dataclasses", "numpy", "benchmark"}
