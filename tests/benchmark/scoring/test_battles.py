"""Battles: the position-swap rule, who meets whom, which questions a pairing is judged on."""

from __future__ import annotations

import itertools
import random

import pytest

from benchmark.scoring.battles import (
    Opponent,
    battle_winner,
    choose_opponents,
    choose_questions,
    first_shown,
)


@pytest.mark.parametrize(
    ("first_round", "swapped_round", "winner"),
    [
        ("first", "second", "model_a"),  # A preferred in both positions
        ("second", "first", "model_b"),  # B preferred in both positions
        ("first", "first", "tie"),  # the first position wins whatever it shows
        ("second", "second", "tie"),  # the second position wins whatever it shows
        ("tie", "second", "tie"),
        ("first", "tie", "tie"),
        ("tie", "tie", "tie"),
    ],
)
def test_a_preference_that_follows_the_position_is_a_tie(first_round, swapped_round, winner):
    assert battle_winner(first_round, swapped_round) == winner


def test_a_verdict_that_is_not_one_is_refused():
    with pytest.raises(ValueError, match="'A'"):
        battle_winner("A", "first")


def _ladder(n):
    return [Opponent(f"m{i:02d}", 1200.0 - 10 * i) for i in range(n)]


def test_a_newcomer_meets_k_opponents_one_from_each_stratum_of_the_ladder():
    others = _ladder(20)
    chosen = choose_opponents("new", others, 4, seed=7)
    assert len(chosen) == 4 == len(set(chosen))
    strata = [{f"m{i:02d}" for i in range(s * 5, s * 5 + 5)} for s in range(4)]
    assert all(len(stratum & set(chosen)) == 1 for stratum in strata)


def test_opponents_depend_on_the_inputs_only_not_their_order():
    others = _ladder(30)
    chosen = choose_opponents("new", others, 5, seed=3)
    shuffled = others[:]
    random.Random(1).shuffle(shuffled)
    assert choose_opponents("new", shuffled, 5, seed=3) == chosen
    picks = {tuple(choose_opponents("new", others, 5, seed=s)) for s in range(10)}
    assert len(picks) > 1  # the seed matters


def test_with_few_others_a_newcomer_meets_them_all_but_never_itself():
    others = [Opponent("b", 1000.0), Opponent("new", None), Opponent("a", None)]
    assert choose_opponents("new", others, 5) == ["a", "b"]
    with pytest.raises(ValueError, match="at least one"):
        choose_opponents("new", others, 0)
    with pytest.raises(ValueError, match="once"):
        choose_opponents("new", [Opponent("a"), Opponent("a")], 1)


def test_a_pairing_gets_the_same_questions_whichever_model_is_a():
    questions = [f"q{i}" for i in range(50)]
    picked = choose_questions("x", "y", questions, 10, seed=2)
    assert len(picked) == 10
    assert picked == [q for q in questions if q in picked]  # in the given order
    assert choose_questions("y", "x", questions, 10, seed=2) == picked
    assert choose_questions("x", "z", questions, 10, seed=2) != picked
    assert choose_questions("x", "y", questions, None) == questions
    assert choose_questions("x", "y", questions, 80) == questions


def test_first_shown_is_one_of_the_pair_and_spread_over_battles():
    firsts = [first_shown("a", "b", f"q{i}") for i in range(200)]
    assert set(firsts) == {"a", "b"}
    assert 60 < firsts.count("a") < 140
    assert all(
        first_shown(x, y, "q") == first_shown(y, x, "q")
        for x, y in itertools.permutations("abc", 2)
    )
