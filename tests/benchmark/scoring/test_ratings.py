"""Bradley-Terry ratings with bootstrap intervals (issue 15, point 3; docs/ratings.md)."""

import ast
import hashlib
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from benchmark.scoring import ratings as ratings_module
from benchmark.scoring.bradley_terry import _solve, fit_strengths, natural_log
from benchmark.scoring.ratings import (
    ABOVE,
    BELOW,
    FITTED,
    UNDETERMINED,
    Battle,
    RatingError,
    existence_problems,
    full_ratings,
    rate_battles,
    replicate_ratings,
    round_status,
    tally_battles,
)

pytestmark = pytest.mark.unit

ELO_LOG10_3 = 400 * math.log10(3)
ELO_LOG10_2 = 400 * math.log10(2)


def repeat(model_a, model_b, winner, times):
    return [Battle(model_a, model_b, winner)] * times


def exact(battles, anchor=None):
    """Full-precision ratings by model name."""
    tally = tally_battles(battles)
    index = None if anchor is None else tally.models.index(anchor)
    full, _ = full_ratings(tally, anchor=index)
    return dict(zip(tally.models, full.tolist(), strict=True))


def random_battles(models=12, battles=3000, seed=0, tie_rate=0.15, spread=250.0):
    """Battles drawn from known ratings (every pair possible), with ties."""
    rng = random.Random(seed)
    names = [f"model-{number:02d}" for number in range(models)]
    truth = {name: rng.gauss(0, spread) for name in names}
    rows = []
    for _ in range(battles):
        a, b = rng.sample(names, 2)
        if rng.random() < tie_rate:
            winner = "tie"
        else:
            p_a = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
            winner = "model_a" if rng.random() < p_a else "model_b"
        rows.append(Battle(a, b, winner))
    return rows


def observed_and_expected(battles, rating):
    """Per model: wins counting a tie as half, and sum_j n_ij P_ij at `rating`."""
    observed = dict.fromkeys(rating, 0.0)
    expected = dict.fromkeys(rating, 0.0)
    for a, b, winner in battles:
        observed[a] += {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[winner]
        observed[b] += {"model_a": 0.0, "model_b": 1.0, "tie": 0.5}[winner]
        p_a = 1 / (1 + 10 ** ((rating[b] - rating[a]) / 400))
        expected[a] += p_a
        expected[b] += 1 - p_a
    return observed, expected


# ---- hand-solved cases ------------------------------------------------------------------


def test_three_wins_in_four_put_a_400_log10_3_above_b_around_a_mean_of_1000():
    battles = repeat("A", "B", "model_a", 3) + repeat("A", "B", "model_b", 1)

    rating = exact(battles)
    assert rating["A"] - rating["B"] == pytest.approx(ELO_LOG10_3, abs=1e-9)
    assert (rating["A"] + rating["B"]) / 2 == pytest.approx(1000, abs=1e-9)
    result = rate_battles(battles, rounds=100)
    assert [(row.model, row.rating) for row in result.models] == [
        ("A", round(1000 + ELO_LOG10_3 / 2, 2)),
        ("B", round(1000 - ELO_LOG10_3 / 2, 2)),
    ]
    assert (result["A"].rating, result["B"].rating) == (1095.42, 904.58)


def test_a_consistent_three_model_chain_is_solved_by_strengths_4_2_1():
    # A beats B 2:1, B beats C 2:1, A beats C 4:1: strengths 4, 2, 1 fit every pair exactly.
    battles = (
        repeat("A", "B", "model_a", 2)
        + repeat("A", "B", "model_b", 1)
        + repeat("B", "C", "model_a", 2)
        + repeat("C", "B", "model_a", 1)
        + repeat("C", "A", "model_b", 4)
        + repeat("A", "C", "model_b", 1)
    )

    rating = exact(battles)
    assert rating["A"] == pytest.approx(1000 + ELO_LOG10_2, abs=1e-9)
    assert rating["B"] == pytest.approx(1000, abs=1e-9)
    assert rating["C"] == pytest.approx(1000 - ELO_LOG10_2, abs=1e-9)


def test_a_balanced_cycle_rates_every_model_1000():
    battles = (
        repeat("A", "B", "model_a", 2)
        + repeat("B", "C", "model_a", 2)
        + repeat("C", "A", "model_a", 2)
        + repeat("A", "B", "model_b", 1)
        + repeat("B", "C", "model_b", 1)
        + repeat("C", "A", "model_b", 1)
    )

    result = rate_battles(battles, rounds=200)
    assert [row.rating for row in result.models] == [1000.0, 1000.0, 1000.0]
    assert [row.battles for row in result.models] == [6, 6, 6]


def test_a_tie_counts_as_half_a_win_for_each_side():
    # One win and two ties (2 of 3 counted wins) is the same likelihood as two wins in three.
    with_ties = [Battle("A", "B", "model_a"), Battle("A", "B", "tie"), Battle("B", "A", "tie")]
    with_wins = [*repeat("A", "B", "model_a", 2), Battle("A", "B", "model_b")]

    assert exact(with_ties) == pytest.approx(exact(with_wins), abs=1e-9)
    assert exact(with_ties)["A"] - exact(with_ties)["B"] == pytest.approx(ELO_LOG10_2, abs=1e-9)


def test_only_ties_rate_both_models_1000():
    result = rate_battles(repeat("A", "B", "tie", 5), rounds=100)
    assert [(row.rating, row.ci_low, row.ci_high) for row in result.models] == [
        (1000.0, 1000.0, 1000.0),
        (1000.0, 1000.0, 1000.0),
    ]
    assert result.degenerate_rounds == 0


# ---- the optimality condition -------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_observed_wins_equal_expected_wins_at_the_fitted_ratings(seed):
    battles = random_battles(models=15, battles=4000, seed=seed)

    rating = exact(battles)
    observed, expected = observed_and_expected(battles, rating)
    assert sum(rating.values()) / len(rating) == pytest.approx(1000, abs=1e-9)
    for model in rating:
        assert observed[model] == pytest.approx(expected[model], abs=1e-8), model


def test_the_optimality_condition_holds_for_ratings_thousands_of_points_apart():
    # A chain in which each model beats the next 999 times in 1,000: 1,200 points a link.
    battles = []
    for link in range(6):
        battles += repeat(f"m{link}", f"m{link + 1}", "model_a", 999)
        battles.append(Battle(f"m{link}", f"m{link + 1}", "model_b"))

    rating = exact(battles)
    observed, expected = observed_and_expected(battles, rating)
    for link in range(6):
        assert rating[f"m{link}"] - rating[f"m{link + 1}"] == pytest.approx(
            400 * math.log10(999), abs=1e-8
        )
    for model in rating:
        assert observed[model] == pytest.approx(expected[model], abs=1e-8)


def test_the_solver_solves_symmetric_positive_definite_systems():
    rng = np.random.default_rng(3)
    size, rounds = 7, 5
    matrices = rng.random((rounds, size, size))
    matrices = matrices @ matrices.transpose(0, 2, 1) + size * np.eye(size)
    rhs = rng.random((rounds, size))

    solution = _solve(np.ascontiguousarray(matrices.transpose(1, 2, 0)), rhs.T.copy())
    assert np.allclose(np.einsum("rij,jr->ri", matrices, solution), rhs, atol=1e-12)


def test_natural_log_agrees_with_the_c_library_to_the_last_bits():
    values = np.exp(np.random.default_rng(4).uniform(-690, 690, 20_000))
    values = np.concatenate([values, [1.0, 0.5, 2.0, 1e-300, 1e300, 0.7071067811865476]])

    ours = natural_log(values)
    reference = np.array([math.log(value) for value in values.tolist()])
    assert ours[values.size - 6] == 0.0
    assert np.max(np.abs(ours - reference) / np.maximum(np.abs(reference), 1e-300)) < 4e-16
    assert ratings_module.ELO_PER_NAT * math.log(2) == pytest.approx(ELO_LOG10_2, abs=1e-12)


# ---- anchoring -------------------------------------------------------------------------


def test_an_anchor_sits_at_exactly_1000_and_keeps_every_difference():
    battles = random_battles(models=8, battles=2000, seed=5)

    centred = exact(battles)
    anchored = exact(battles, anchor="model-03")
    assert anchored["model-03"] == 1000.0
    for model in centred:
        assert anchored[model] - anchored["model-00"] == pytest.approx(
            centred[model] - centred["model-00"], abs=1e-9
        )
    result = rate_battles(battles, anchor="model-03", rounds=200)
    anchor_row = result["model-03"]
    assert (anchor_row.rating, anchor_row.ci_low, anchor_row.ci_high) == (1000.0, 1000.0, 1000.0)
    assert result.anchor == "model-03"


def test_an_unknown_anchor_is_refused():
    with pytest.raises(RatingError, match="the anchor 'Z' is not one of the 2 models"):
        rate_battles([Battle("A", "B", "tie")], anchor="Z")


# ---- the bootstrap -------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_ratings_and_another_seed_other_intervals():
    battles = random_battles(models=10, battles=1500, seed=6)

    first = rate_battles(battles, rounds=200, seed=7)
    again = rate_battles(battles, rounds=200, seed=7)
    other = rate_battles(battles, rounds=200, seed=8)
    assert first == again
    assert [row.rating for row in other.models] == [row.rating for row in first.models]
    assert [(row.ci_low, row.ci_high) for row in other.models] != [
        (row.ci_low, row.ci_high) for row in first.models
    ]


def sandwich_standard_errors(battles, rating):
    """The large-sample standard error of each centred rating, H^+ J H^+ (the robust
    "sandwich": H the information, J the sum of each battle's score outer product), which the
    battle bootstrap estimates. The test's own reference, so linear algebra is fine here."""
    models = sorted(rating)
    index = {model: number for number, model in enumerate(models)}
    information = np.zeros((len(models), len(models)))
    scores = np.zeros((len(models), len(models)))
    for a, b, winner in battles:
        p_a = 1 / (1 + 10 ** ((rating[b] - rating[a]) / 400))
        score = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[winner] - p_a
        direction = np.zeros(len(models))
        direction[index[a]], direction[index[b]] = 1.0, -1.0
        information += p_a * (1 - p_a) * np.outer(direction, direction)
        scores += score * score * np.outer(direction, direction)
    inverse = np.linalg.pinv(information, rcond=1e-9, hermitian=True)
    variance = inverse @ scores @ inverse
    errors = ratings_module.ELO_PER_NAT * np.sqrt(np.diag(variance))
    return dict(zip(models, errors.tolist(), strict=True))


def test_every_interval_contains_its_rating_and_is_as_wide_as_large_sample_theory_says():
    battles = random_battles(models=10, battles=5000, seed=9)
    tally = tally_battles(battles)
    full, start = full_ratings(tally)
    rating = dict(zip(tally.models, full.tolist(), strict=True))

    result = rate_battles(battles, rounds=1000)
    replicates = replicate_ratings(tally, range(1000), seed=0, anchor=None, full=full, start=start)
    standard_error = sandwich_standard_errors(battles, rating)
    for number, model in enumerate(tally.models):
        row = result[model]
        assert row.ci_low < row.rating < row.ci_high, row
        # B = 1,000 estimates a standard deviation to about 2%; 10% leaves room for the
        # small-sample difference between the bootstrap and the asymptotic formula.
        assert np.std(replicates[number]) == pytest.approx(standard_error[model], rel=0.1)
        assert row.ci_high - row.ci_low == pytest.approx(3.92 * standard_error[model], rel=0.15)
    assert result.degenerate_rounds == 0
    assert {row.unbounded_rounds for row in result.models} == {0}


def test_the_battle_count_is_each_models_number_of_battles():
    battles = [
        Battle("A", "B", "model_a"),
        Battle("B", "A", "tie"),
        Battle("C", "A", "model_b"),
        Battle("B", "C", "model_b"),
        Battle("C", "B", "model_b"),
        Battle("A", "C", "model_b"),
    ]

    result = rate_battles(battles, rounds=100)
    assert {row.model: row.battles for row in result.models} == {"A": 4, "B": 4, "C": 4}


def test_shuffled_and_side_swapped_battles_give_identical_bytes():
    battles = random_battles(models=9, battles=1200, seed=10)
    rng = random.Random(11)
    flipped = {"model_a": "model_b", "model_b": "model_a", "tie": "tie"}
    shuffled = [
        Battle(b, a, flipped[winner]) if rng.random() < 0.5 else Battle(a, b, winner)
        for a, b, winner in battles
    ]
    rng.shuffle(shuffled)

    first = json.dumps(rate_battles(battles, rounds=300).to_dict())
    second = json.dumps(rate_battles(shuffled, rounds=300).to_dict())
    assert first == second


def test_a_round_depends_on_its_number_not_on_b_or_the_batch_sizes(monkeypatch):
    tally = tally_battles(random_battles(models=9, battles=800, seed=12))
    full, start = full_ratings(tally)

    def replicates(rounds):
        return replicate_ratings(tally, rounds, seed=3, anchor=None, full=full, start=start)

    whole = replicates(range(120))
    monkeypatch.setattr(ratings_module, "FIT_BATCH_CELLS", 81 * 7)  # 7 rounds a batch
    batched = replicates(range(120))
    later = replicates(range(50, 80))
    assert np.array_equal(whole, batched)
    assert np.array_equal(whole[:, 50:80], later)


def test_a_fixed_battle_set_gives_the_pinned_output():
    # A change of numpy's PCG64 stream, of `Generator.integers` or of the fit changes every
    # published interval: this fails first, and docs/ratings.md says what then to do.
    result = rate_battles(random_battles(models=6, battles=600, seed=13), rounds=100, seed=1)

    text = json.dumps(result.to_dict(), sort_keys=True)
    assert result["model-00"].rating == 986.96, text
    assert hashlib.sha256(text.encode()).hexdigest() == PINNED_SHA256, text


PINNED_SHA256 = "b84bc445d0c59ab6d5b719ef1b27de88781dfd4b1129885a02715e21fbfd0f4f"


def test_too_few_rounds_a_negative_seed_and_bad_battles_are_refused():
    battles = [Battle("A", "B", "model_a"), Battle("A", "B", "model_b")]
    with pytest.raises(RatingError, match="38 rounds: 38 replicates are too few"):
        rate_battles(battles, rounds=38)
    with pytest.raises(RatingError, match="seed must be a non-negative integer, not -1"):
        rate_battles(battles, seed=-1)
    with pytest.raises(RatingError, match="there are no battles to rate"):
        rate_battles([])
    with pytest.raises(RatingError, match=r"battle 2, field 'winner': expected \"model_a\""):
        rate_battles([*battles, ("A", "B", "draw")])
    with pytest.raises(RatingError, match='battle 0: model_a and model_b are both "A"'):
        rate_battles([("A", "A", "tie")])


# ---- existence ------------------------------------------------------------------------


def problems_of(battles):
    with pytest.raises(RatingError) as raised:
        rate_battles(battles, rounds=100)
    assert "no finite ratings" in str(raised.value)
    return raised.value.problems


def test_a_model_that_never_lost_or_tied_is_named_unbounded_above():
    battles = random_battles(models=5, battles=400, seed=14)
    battles += repeat("champion", "model-00", "model_a", 3)
    battles.append(Battle("model-01", "champion", "model_b"))

    assert problems_of(battles) == [
        "model 'champion' never lost or tied: its rating is unbounded above"
    ]


def test_a_model_that_never_won_or_tied_is_named_unbounded_below():
    battles = random_battles(models=5, battles=400, seed=15) + repeat(
        "model-02", "last", "model_a", 4
    )

    assert problems_of(battles) == ["model 'last' never won or tied: its rating is unbounded below"]


def test_two_models_one_of_which_won_everything_are_both_named():
    assert problems_of(repeat("A", "B", "model_a", 3)) == [
        "model 'A' never lost or tied: its rating is unbounded above",
        "model 'B' never won or tied: its rating is unbounded below",
    ]


def test_groups_that_never_met_are_named():
    battles = random_battles(models=4, battles=300, seed=16)
    battles += [Battle("x", "y", "model_a"), Battle("x", "y", "model_b")]

    assert problems_of(battles) == [
        "models 'x', 'y' never met any of the other 4 models: their ratings cannot be "
        "compared with the rest"
    ]


def test_a_model_strictly_between_two_groups_is_named_with_both():
    battles = (
        random_battles(models=4, battles=300, seed=17)
        + repeat("top", "middle", "model_a", 2)
        + repeat("middle", "model-01", "model_a", 2)
    )

    assert problems_of(battles) == [
        "model 'middle' lost every battle against 'top' and won every battle against "
        "'model-01', with no tie between them: its distances to both are unbounded",
        "model 'top' never lost or tied: its rating is unbounded above",
    ]


def test_a_group_that_won_every_battle_against_the_rest_is_named_as_a_group():
    battles = random_battles(models=5, battles=400, seed=18)
    battles += [Battle("p", "q", "model_a"), Battle("p", "q", "model_b")]
    battles += repeat("p", "model-00", "model_a", 2) + repeat("model-03", "q", "model_b", 1)

    assert problems_of(battles) == [
        "models 'p', 'q' never lost to or tied with a model outside them: their ratings are "
        "unbounded above the rest"
    ]


def test_a_strongly_connected_graph_has_no_problem():
    assert existence_problems(["a", "b"], np.array([[False, True], [True, False]])) == []


# ---- rounds without a finite maximum ---------------------------------------------------------


def graph(size, edges):
    adjacency = np.zeros((size, size), dtype=bool)
    for winner, loser in edges:
        adjacency[winner, loser] = True
    return adjacency


def test_a_round_fits_its_main_component_and_places_the_rest_above_below_or_nowhere():
    # 0-1-2-3 strongly connected (the main component), 4 beat 0 only, 2 beat 5 only, 6 lost
    # to 4 only (below 4, which is above the main component: not comparable with it).
    edges = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 0), (2, 5), (4, 6)]
    status = round_status(graph(7, edges), anchor=None)
    assert status.tolist() == [FITTED] * 4 + [ABOVE, BELOW, UNDETERMINED]

    anchored = round_status(graph(7, edges), anchor=4)
    assert anchored.tolist() == [BELOW] * 4 + [FITTED, BELOW, BELOW]


def test_without_a_majority_component_only_clean_winners_and_losers_are_placed():
    # 0 beat 1, 1 beat 2 (3 models, no component holds more than one): 0 above, 2 below.
    assert round_status(graph(3, [(0, 1), (1, 2)]), anchor=None).tolist() == [
        ABOVE,
        UNDETERMINED,
        BELOW,
    ]


def test_rounds_that_lose_the_maximum_make_the_interval_end_they_reach_unbounded():
    battles = repeat("A", "B", "model_a", 3) + repeat("A", "B", "model_b", 1)

    result = rate_battles(battles, rounds=1000)
    # A resample without B's one win (0.75**4 of the rounds, about 316) has A at +inf and B
    # at -inf: more than the 25 rounds beyond each end of a 95% interval.
    assert 250 < result.degenerate_rounds < 400
    assert (result["A"].ci_low, result["A"].ci_high) == (904.58, None)
    assert (result["B"].ci_low, result["B"].ci_high) == (None, 1095.42)
    assert result["A"].unbounded_rounds == result.degenerate_rounds


def test_a_thinly_rated_model_widens_its_own_interval_not_the_others():
    battles = random_battles(models=8, battles=3000, seed=19)
    battles += repeat("newcomer", "model-00", "model_a", 6)
    battles.append(Battle("newcomer", "model-01", "model_b"))

    result = rate_battles(battles, rounds=1000)
    newcomer = result["newcomer"]
    assert newcomer.ci_high is None  # about 37% of the rounds drop its one loss
    assert newcomer.ci_low is not None
    assert 300 < newcomer.unbounded_rounds < 450
    for row in result.models:
        if row.model != "newcomer":
            assert row.unbounded_rounds == 0
            assert row.ci_low < row.rating < row.ci_high


# ---- the numeric path --------------------------------------------------------------------

NUMERIC_MODULES = ["benchmark/scoring/ratings.py", "benchmark/scoring/bradley_terry.py"]
# BLAS and numpy's SIMD transcendental ufuncs differ between CPUs in the last bits.
FORBIDDEN_NAMES = {
    "linalg",
    "matmul",
    "dot",
    "vdot",
    "inner",
    "einsum",
    "tensordot",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "power",
    "float_power",
    "sqrt",
}


@pytest.mark.parametrize("module", NUMERIC_MODULES)
def test_the_numeric_path_uses_neither_blas_nor_simd_transcendentals(module):
    tree = ast.parse((Path(__file__).resolve().parents[3] / module).read_text())
    found = [
        (node.lineno, node.attr)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES
    ]
    found += [
        (node.lineno, type(node.op).__name__)
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult | ast.Pow)
    ]
    assert found == []


def test_fit_strengths_reports_its_steps_and_starts_where_told():
    tally = tally_battles(random_battles(models=6, battles=500, seed=20))
    wins = tally.wins(np.bincount(tally.battle_kinds)[:, None])
    included = np.ones((6, 1), dtype=bool)

    strengths, steps = fit_strengths(wins, included)
    again, no_steps = fit_strengths(wins, included, strengths[:, 0])
    assert steps[0] > 3
    assert no_steps[0] == 0
    assert np.array_equal(again, strengths)
    assert strengths.max() == 1.0
