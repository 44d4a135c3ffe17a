"""The leaderboard ranking (spec 6), checked on the published rows of spec 7 and by hand."""

import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmark.scoring.bootstrap import replicate_ranks
from benchmark.scoring.ranking import (
    Entry,
    MetricSpec,
    RankedEntry,
    RankingPolicy,
    leading_ranks,
    lexicographic_costs,
    rank_entries,
    round_like_python,
    value_ranks,
)
from plugins.medvidbench.scoring.tasks import METRIC_NAMES, STG_MIOU

pytestmark = pytest.mark.unit

DENSE = RankingPolicy(tie_method="dense")
UNROUNDED = RankingPolicy(decimals=None)
MEDVIDBENCH_METRICS = [MetricSpec(name) for name in METRIC_NAMES]

# Spec 7, as published (columns in METRIC_NAMES order).
PUBLISHED_ROWS = {
    "GPT-4.1*":                     (0.018, 0.250, 0.087, 0.014, 0.096, 0.005, 0.101, 2.438, 2.490, 2.080),
    "Gemini-2.5-Flash*":            (0.101, 0.228, 0.107, 0.047, 0.045, 0.021, 0.084, 2.387, 2.352, 1.912),
    "VideoChat-R1.5-7B*":           (0.000, 0.270, 0.006, 0.000, 0.009, 0.005, 0.026, 1.723, 3.034, 3.086),
    "Qwen2.5VL-7B*":                (0.105, 0.151, 0.010, 0.020, 0.006, 0.068, 0.075, 2.512, 2.452, 2.090),
    "Qwen2.5VL-7B-Surg-CholecT50*": (0.000, 0.302, 0.000, 0.000, 0.019, 0.013, 0.051, 1.945, 2.101, 2.986),
    "uAI-NEXUS-MedVLM-1.0a-7B-SFT": (0.894, 0.442, 0.218, 0.177, 0.142, 0.091, 0.165, 3.665, 3.596, 2.757),
    "uAI-NEXUS-MedVLM-1.0a-7B-RL":  (0.896, 0.405, 0.254, 0.202, 0.216, 0.156, 0.214, 3.797, 4.184, 3.442),
    "Qwen3VL-4B*":                  (0.000, 0.178, 0.006, 0.000, 0.039, 0.034, 0.128, 1.939, 2.926, 2.853),
    "uAI-NEXUS-MedVLM-1.0b-4B-SFT": (0.895, 0.466, 0.270, 0.133, 0.465, 0.403, 0.435, 3.862, 4.180, 3.752),
    "uAI-NEXUS-MedVLM-1.0b-4B-RL":  (0.898, 0.473, 0.285, 0.176, 0.504, 0.441, 0.480, 3.950, 4.227, 3.861),
    "GPT-5.4*":                     (0.164, 0.393, 0.267, 0.004, 0.086, 0.055, 0.178, 3.403, 3.976, 3.714),
    "Gemini-3.1-flash-lite*":       (0.242, 0.406, 0.225, 0.059, 0.072, 0.049, 0.174, 3.198, 3.737, 3.492),
    "Qwen3.5-4B*":                  (0.309, 0.231, 0.276, 0.051, 0.074, 0.040, 0.142, 2.699, 3.491, 3.037),
    "uAI-NEXUS-MedVLM-1.0c-4B-SFT": (0.897, 0.576, 0.354, 0.190, 0.482, 0.429, 0.451, 3.741, 4.238, 3.746),
    "uAI-NEXUS-MedVLM-1.0d-4B-SFT": (0.893, 0.513, 0.290, 0.138, 0.386, 0.319, 0.367, 3.644, 4.246, 3.644),
}  # fmt: skip

# Our order for the 15 rows alone with "min" ties, and each row's mean rank. The first seven
# are the ones spec 7 states; the rest were computed here and checked by hand for GPT-5.4*
# and the last two rows (see the per-metric tests below).
PUBLISHED_ORDER = [
    ("uAI-NEXUS-MedVLM-1.0b-4B-RL", 1.9),
    ("uAI-NEXUS-MedVLM-1.0c-4B-SFT", 2.1),
    ("uAI-NEXUS-MedVLM-1.0b-4B-SFT", 3.7),
    ("uAI-NEXUS-MedVLM-1.0d-4B-SFT", 3.9),
    ("uAI-NEXUS-MedVLM-1.0a-7B-RL", 4.7),
    ("uAI-NEXUS-MedVLM-1.0a-7B-SFT", 6.7),
    ("GPT-5.4*", 7.4),
    ("Gemini-3.1-flash-lite*", 7.6),
    ("Qwen3.5-4B*", 8.6),
    ("GPT-4.1*", 11.4),
    ("Qwen2.5VL-7B*", 11.8),
    ("Gemini-2.5-Flash*", 11.9),
    ("Qwen3VL-4B*", 12.2),
    ("VideoChat-R1.5-7B*", 12.5),
    ("Qwen2.5VL-7B-Surg-CholecT50*", 12.8),
]


def published_entries():
    return [
        Entry(key=name, name=name, values=dict(zip(METRIC_NAMES, row, strict=True)))
        for name, row in PUBLISHED_ROWS.items()
    ]


def by_name(ranked):
    return {row.name: row for row in ranked}


def entries_from(columns, names=None):
    """Entries keyed 0.. from {metric: [value per entry]}."""
    count = len(next(iter(columns.values())))
    names = names or [f"model-{index}" for index in range(count)]
    return [
        Entry(key=index, name=names[index], values={m: v[index] for m, v in columns.items()})
        for index in range(count)
    ]


def metrics_of(columns, lower_is_better=()):
    return [MetricSpec(key, higher_is_better=key not in lower_is_better) for key in columns]


# The published board (spec 7).


def test_the_fifteen_published_rows_rank_in_the_order_and_mean_ranks_spec_7_states():
    ranked = rank_entries(published_entries(), MEDVIDBENCH_METRICS)

    assert [(row.name, round(row.mean_rank, 1)) for row in ranked] == PUBLISHED_ORDER
    assert [row.rank for row in ranked] == list(range(1, 16))
    # Mean ranks are tenths exactly: a sum of ten integer ranks over 10.
    assert all(row.mean_rank * 10 == row.rank_sum for row in ranked)


def test_the_leader_wins_six_metrics_and_its_ranks_match_a_hand_count():
    leader = rank_entries(published_entries(), MEDVIDBENCH_METRICS)[0]

    assert leader.wins == 6
    # NAP 0.473 < 0.576, 0.513; SA 0.285 < 0.354, 0.290; STG 0.176 < 0.202, 0.190, 0.177;
    # VS 4.227 < 4.246, 4.238. First on the six others.
    assert list(leader.metric_ranks.values()) == [1, 3, 3, 4, 1, 1, 1, 1, 3, 1]
    assert leader.rank_sum == 19


def test_gpt_5_4_ranks_by_hand_including_a_shared_zero():
    rows = by_name(rank_entries(published_entries(), MEDVIDBENCH_METRICS))

    # CVS 0.164: six uAI rows, 0.309 and 0.242 above it. STG 0.004: eleven rows above it,
    # and the three 0.000 rows share the next rank, 13, which nobody gets after them.
    assert rows["GPT-5.4*"].metric_ranks == dict(
        zip(METRIC_NAMES, [9, 8, 6, 12, 8, 8, 6, 7, 6, 4], strict=True)
    )
    assert [
        rows[name].metric_ranks[STG_MIOU] for name in ("Qwen3VL-4B*", "VideoChat-R1.5-7B*")
    ] == [
        13,
        13,
    ]
    assert rows["Qwen2.5VL-7B-Surg-CholecT50*"].metric_ranks == dict(
        zip(METRIC_NAMES, [13, 9, 15, 13, 13, 13, 14, 13, 15, 10], strict=True)
    )


def test_dense_ties_keep_the_published_order_but_lift_the_last_row():
    ranked = rank_entries(published_entries(), MEDVIDBENCH_METRICS, DENSE)

    assert [row.name for row in ranked] == [name for name, _ in PUBLISHED_ORDER]
    last = ranked[-1]
    # SA: two rows share 0.006 (rank 13 both ways); 0.000 is 15th with "min", 14th dense.
    assert last.metric_ranks["SA_acc"] == 14
    assert round(last.mean_rank, 1) == 12.7


def test_refinerank_comes_out_fifth_not_the_eleventh_place_spec_7_reports():
    # Spec 7 gives only RefineRank's STG (0.421), and its rank 11 on the union board of the
    # day, whose community rows we do not have. Assumed here: 1.0a-7B-RL's other nine values.
    base = PUBLISHED_ROWS["uAI-NEXUS-MedVLM-1.0a-7B-RL"]
    refine_values = {**dict(zip(METRIC_NAMES, base, strict=True)), STG_MIOU: 0.421}
    refine = Entry(key="RefineRank", name="RefineRank", values=refine_values)

    rows = by_name(rank_entries([*published_entries(), refine], MEDVIDBENCH_METRICS))

    assert rows["RefineRank"].metric_ranks[STG_MIOU] == 1
    assert rows["RefineRank"].rank == 5
    assert rows["uAI-NEXUS-MedVLM-1.0a-7B-RL"].rank == 6
    assert rows["RefineRank"].mean_rank == pytest.approx(4.7)


def test_refinerank_with_its_judge_metrics_pending_still_does_not_reach_eleventh():
    # Step 1 alone publishes a community row without the three judge metrics (spec 8).
    base = dict(zip(METRIC_NAMES, PUBLISHED_ROWS["uAI-NEXUS-MedVLM-1.0a-7B-RL"], strict=True))
    pending = {**base, STG_MIOU: 0.421, "DVC_llm": None, "VS_llm": None, "RC_llm": None}
    refine = Entry(key="RefineRank", name="RefineRank", values=pending)

    min_rows = by_name(rank_entries([*published_entries(), refine], MEDVIDBENCH_METRICS))
    dense_rows = by_name(rank_entries([*published_entries(), refine], MEDVIDBENCH_METRICS, DENSE))

    assert (min_rows["RefineRank"].rank, dense_rows["RefineRank"].rank) == (8, 9)


# Tiebreakers, each on a hand-made tie that the levels before it leave tied.


def test_more_metrics_won_beats_a_higher_normalized_sum_and_an_earlier_name():
    # m1, m2: A first, B second. m3: B first, A last. Rank sums 1+1+3 = 2+2+1 = 5.
    columns = {"m1": [0.9, 0.89, 0.7], "m2": [0.9, 0.89, 0.7], "m3": [0.7, 0.9, 0.8]}
    entries = entries_from(columns, names=["zeta", "alpha", "omega"])

    first, second, third = rank_entries(entries, metrics_of(columns))

    assert (first.name, first.wins, first.rank_sum) == ("zeta", 2, 5)
    assert (second.name, second.wins, second.rank_sum) == ("alpha", 1, 5)
    assert second.normalized_sum > first.normalized_sum
    assert third.name == "omega"


def test_rank_sum_never_decides_because_it_is_the_mean_times_the_metric_count():
    # Every entry has a rank on every metric, so equal means imply equal sums: the spec's
    # tiebreaker (2) is kept in place but cannot separate anything. Here the tie falls
    # through it to the normalized sum.
    columns = {"m1": [0.9, 0.5, 0.1], "m2": [0.3, 0.9, 0.1]}
    entries = entries_from(columns, names=["alpha", "zeta", "omega"])

    first, second, _ = rank_entries(entries, metrics_of(columns))

    assert (first.mean_rank, first.wins, first.rank_sum) == (1.5, 1, 3)
    assert (second.mean_rank, second.wins, second.rank_sum) == (1.5, 1, 3)
    assert first.normalized_sum > second.normalized_sum


def test_a_higher_normalized_sum_breaks_a_tie_on_mean_rank_and_wins():
    # A: 0.9/0.9 + 0.3/0.9 = 1.333; B: 0.5/0.9 + 0.9/0.9 = 1.556. Name would favour A.
    columns = {"m1": [0.9, 0.5, 0.1], "m2": [0.3, 0.9, 0.1]}
    entries = entries_from(columns, names=["alpha", "zeta", "omega"])

    ranked = rank_entries(entries, metrics_of(columns))

    assert [row.name for row in ranked] == ["zeta", "alpha", "omega"]
    assert ranked[0].normalized_sum == pytest.approx(0.5 / 0.9 + 1)
    assert ranked[1].normalized_sum == pytest.approx(1 + 0.3 / 0.9)


def test_the_name_decides_last_case_insensitively():
    # Case-sensitive order would put "Beta" first ("B" < "a").
    columns = {"m1": [0.5, 0.5], "m2": [0.2, 0.2]}

    ranked = rank_entries(entries_from(columns, names=["Beta", "alpha"]), metrics_of(columns))

    assert [(row.name, row.rank) for row in ranked] == [("alpha", 1), ("Beta", 2)]


def test_names_equal_but_for_case_order_exactly_then_equal_names_by_key():
    values = {"m1": 0.5}
    entries = [
        Entry(key=3, name="model", values=values),
        Entry(key=2, name="Model", values=values),
        Entry(key=1, name="model", values=values),
    ]

    ranked = rank_entries(entries, [MetricSpec("m1")])

    assert [(row.name, row.key) for row in ranked] == [("Model", 2), ("model", 1), ("model", 3)]


def test_keys_that_do_not_compare_fall_back_to_their_repr():
    values = {"m1": 0.5}
    entries = [
        Entry(key=("b", 1), name="same", values=values),
        Entry(key=("a", None), name="same", values=values),
        Entry(key=("a", 2), name="same", values=values),
    ]

    ranked = rank_entries(entries, [MetricSpec("m1")])

    assert [row.key for row in ranked] == [("a", 2), ("a", None), ("b", 1)]


def test_a_shared_first_place_is_a_win_for_each_entry_sharing_it():
    columns = {"m1": [0.9, 0.9, 0.1], "m2": [0.1, 0.2, 0.3]}

    ranked = by_name(rank_entries(entries_from(columns), metrics_of(columns)))

    assert [ranked[f"model-{index}"].wins for index in range(3)] == [1, 1, 1]


# Tie methods, rounding, missing values, direction.


def test_min_and_dense_ranks_on_the_same_values():
    columns = {
        "m1": [0.9, 0.9, 0.5, 0.1, None],
        "m2": [0.2, 0.4, 0.4, 0.4, 0.1],
    }
    entries, metrics = entries_from(columns), metrics_of(columns)

    min_ranks = {r.key: list(r.metric_ranks.values()) for r in rank_entries(entries, metrics)}
    dense_ranks = {
        r.key: list(r.metric_ranks.values()) for r in rank_entries(entries, metrics, DENSE)
    }

    assert min_ranks == {0: [1, 4], 1: [1, 1], 2: [3, 1], 3: [4, 1], 4: [5, 5]}
    assert dense_ranks == {0: [1, 2], 1: [1, 1], 2: [2, 1], 3: [3, 1], 4: [4, 3]}


def test_min_and_dense_can_order_a_board_differently():
    # "min" leaves a gap after a shared place, "dense" does not, so sums can cross.
    columns = {"m1": [0.9, 0.9, 0.9, 0.5], "m2": [0.1, 0.2, 0.3, 0.9]}
    entries = entries_from(columns, names=["a", "b", "c", "d"])

    by_min = rank_entries(entries, metrics_of(columns))
    by_dense = rank_entries(entries, metrics_of(columns), DENSE)

    # min: a (1,4)=5 b (1,3)=4 c (1,2)=3 d (4,1)=5, so c leads and d trails b.
    # dense: d (2,1)=3 ties c (1,2)=3 and one win each; d's normalized sum is higher
    # (0.5/0.9 + 1 against 1 + 0.3/0.9), so d leads.
    assert [(row.name, row.rank_sum) for row in by_min] == [("c", 3), ("b", 4), ("d", 5), ("a", 5)]
    assert [(row.name, row.rank_sum) for row in by_dense] == [
        ("d", 3),
        ("c", 3),
        ("b", 4),
        ("a", 5),
    ]


def test_rounding_to_three_decimals_makes_a_tie_that_full_precision_does_not():
    columns = {"m1": [0.1234, 0.1231]}

    rounded = rank_entries(entries_from(columns), metrics_of(columns))
    exact = rank_entries(entries_from(columns), metrics_of(columns), UNROUNDED)

    assert [row.metric_ranks["m1"] for row in rounded] == [1, 1]
    assert [row.wins for row in rounded] == [1, 1]
    assert [(row.key, row.metric_ranks["m1"]) for row in exact] == [(0, 1), (1, 2)]


def test_rounding_is_pythons_round_not_numpys():
    # 0.0025 is stored as 0.0025000000000000000520...: round() gives 0.003 (the official app
    # stored its values with it), np.round 0.002.
    columns = {"m1": [0.0025, 0.002, 0.003]}

    ranked = rank_entries(entries_from(columns), metrics_of(columns))

    assert {row.key: row.metric_ranks["m1"] for row in ranked} == {0: 1, 2: 1, 1: 3}


def test_vectorised_rounding_agrees_with_round_on_every_half_step():
    # The hard cases: x.xxx5, where np.round alone is wrong about half the time.
    values = [float(f"{step / 1000 + 0.0005:.4f}") for step in range(-20_000, 20_000)]

    assert round_like_python(np.array(values), 3).tolist() == [round(v, 3) for v in values]


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), max_size=50))
def test_vectorised_rounding_agrees_with_round(values):
    assert round_like_python(np.array(values, dtype=float), 3).tolist() == [
        round(value, 3) for value in values
    ]


@given(
    st.lists(st.booleans(), min_size=1, max_size=4).flatmap(
        lambda higher: st.tuples(
            st.just(higher),
            st.lists(
                st.lists(
                    st.one_of(st.just(math.nan), st.sampled_from([-0.0, 0.0, 0.1, 0.1004, 0.2])),
                    min_size=len(higher),
                    max_size=len(higher),
                ),
                max_size=12,
            ),
        )
    ),
    st.sampled_from([None, 3]),
    st.integers(min_value=1, max_value=4),
)
def test_leading_ranks_are_the_dense_ranks_up_to_the_depth(board, decimals, depth):
    """The boards' best and second-best marks (`leading_ranks`, a pass per rank) are the
    "dense" ranks `value_ranks` sorts for, where they are at most the depth, for present
    values; 0 for the rest and for a missing value."""
    higher, columns = board
    metrics = [MetricSpec(f"m{i}", higher_is_better=h) for i, h in enumerate(higher)]
    values = np.array(columns, dtype=float).reshape(len(columns), len(metrics)).T

    dense = value_ranks(values, metrics, "dense", decimals)
    expected = np.where((dense <= depth) & ~np.isnan(values), dense, 0)

    assert leading_ranks(values, metrics, decimals, depth).tolist() == expected.tolist()


def test_leading_ranks_mark_the_best_then_the_next_distinct_rounded_value():
    metrics = [MetricSpec("up", higher_is_better=True), MetricSpec("down", higher_is_better=False)]
    values = np.array([[0.5, 0.9, 0.9004, 0.7, math.nan], [3.0, 1.0, 2.0, 1.0, math.nan]])

    assert leading_ranks(values, metrics, 3, 2).tolist() == [[0, 1, 1, 2, 0], [0, 1, 2, 1, 0]]


def test_missing_values_rank_last_and_share_their_rank():
    columns = {"m1": [None, 0.5, math.nan, 0.5, 0.0]}
    entries, metrics = entries_from(columns), metrics_of(columns)

    min_ranks = {r.key: r.metric_ranks["m1"] for r in rank_entries(entries, metrics)}
    dense_ranks = {r.key: r.metric_ranks["m1"] for r in rank_entries(entries, metrics, DENSE)}

    # min: present count + 1 = 4; dense: distinct present count + 1 = 3. Zero is a value.
    assert min_ranks == {1: 1, 3: 1, 4: 3, 0: 4, 2: 4}
    assert dense_ranks == {1: 1, 3: 1, 4: 2, 0: 3, 2: 3}


def test_a_metric_absent_from_an_entrys_values_is_missing():
    entries = [
        Entry(key=1, name="has it", values={"m1": 0.1}),
        Entry(key=2, name="lacks it", values={}),
    ]

    ranked = rank_entries(entries, [MetricSpec("m1")])

    assert [(row.key, row.metric_ranks["m1"], row.normalized_sum) for row in ranked] == [
        (1, 1, 1.0),
        (2, 2, 0.0),
    ]


def test_a_metric_nobody_has_is_neutral_and_nobody_wins_it():
    columns = {"m1": [None, None], "m2": [0.2, 0.1]}

    ranked = rank_entries(entries_from(columns), metrics_of(columns))

    assert [(row.key, row.metric_ranks, row.wins) for row in ranked] == [
        (0, {"m1": 1, "m2": 1}, 1),
        (1, {"m1": 1, "m2": 2}, 0),
    ]


def test_lower_is_better_ranks_ascending_and_normalizes_as_best_over_value():
    columns = {"error": [0.2, 0.1, None, 0.4]}

    ranked = rank_entries(entries_from(columns), metrics_of(columns, lower_is_better={"error"}))

    assert [(row.key, row.metric_ranks["error"], row.normalized_sum) for row in ranked] == [
        (1, 1, 1.0),
        (0, 2, 0.5),
        (3, 3, 0.25),
        (2, 4, 0.0),
    ]


def test_a_metric_whose_best_value_is_not_positive_normalizes_to_zero():
    columns = {"gain": [0.0, -0.5], "error": [0.0, 0.3]}
    metrics = metrics_of(columns, lower_is_better={"error"})

    ranked = rank_entries(entries_from(columns), metrics)

    assert [row.normalized_sum for row in ranked] == [0.0, 0.0]
    assert [row.key for row in ranked] == [0, 1]


# Shapes and errors.


def test_no_entries_rank_to_an_empty_board():
    assert rank_entries([], MEDVIDBENCH_METRICS) == []


def test_a_single_entry_is_first_on_everything_it_has():
    entry = Entry(key=7, name="solo", values={"m1": 0.5, "m2": None, "m3": 0.25})

    ranked = rank_entries([entry], metrics_of({"m1": 0, "m2": 0, "m3": 0}))

    assert ranked == [
        RankedEntry(
            key=7,
            name="solo",
            rank=1,
            mean_rank=1.0,
            metric_ranks={"m1": 1, "m2": 1, "m3": 1},
            wins=2,
            rank_sum=3,
            normalized_sum=2.0,
        )
    ]


@pytest.mark.parametrize(
    ("entries", "metrics", "message"),
    [
        ([], [], "at least one metric"),
        ([], [MetricSpec("m1"), MetricSpec("m1")], "metric keys repeat"),
        (
            [Entry(1, "a", {"m1": 0.1}), Entry(1, "b", {"m1": 0.2})],
            [MetricSpec("m1")],
            "entry keys must be unique",
        ),
        ([Entry(1, "a", {"m1": math.inf})], [MetricSpec("m1")], "finite or missing"),
    ],
)
def test_bad_input_is_refused(entries, metrics, message):
    with pytest.raises(ValueError, match=message):
        rank_entries(entries, metrics)


def test_an_unknown_tie_method_is_refused():
    with pytest.raises(ValueError, match="tie_method"):
        RankingPolicy(tie_method="average")  # type: ignore[arg-type]


# Determinism.

# A coarse grid of values (so rounding and ties happen often), some missing, and names
# drawn from a few spellings (so equal and case-equal names happen too).
board_value = st.one_of(
    st.none(), st.just(math.nan), st.sampled_from([0.0, 0.1, 0.1004, 0.2, 0.5, 1.0])
)
board_name = st.sampled_from(["alpha", "Alpha", "beta", "gamma"])


@st.composite
def boards(draw):
    metric_count = draw(st.integers(min_value=1, max_value=4))
    keys = [f"m{index}" for index in range(metric_count)]
    metrics = [MetricSpec(key, higher_is_better=draw(st.booleans())) for key in keys]
    size = draw(st.integers(min_value=0, max_value=12))
    entries = [
        Entry(
            key=index,
            name=draw(board_name),
            values={key: draw(board_value) for key in keys},
        )
        for index in range(size)
    ]
    return entries, metrics


@given(boards(), st.sampled_from(["min", "dense"]), st.randoms(use_true_random=False))
def test_shuffling_the_entries_never_changes_the_board(board, tie_method, shuffler: random.Random):
    entries, metrics = board
    policy = RankingPolicy(tie_method=tie_method)
    shuffled = list(entries)
    shuffler.shuffle(shuffled)

    assert rank_entries(shuffled, metrics, policy) == rank_entries(entries, metrics, policy)


@given(boards(), st.sampled_from(["min", "dense"]))
def test_the_board_respects_the_tiebreak_keys_in_order(board, tie_method):
    entries, metrics = board
    ranked = rank_entries(entries, metrics, RankingPolicy(tie_method=tie_method))

    keys = [
        (
            row.mean_rank,
            -row.wins,
            row.rank_sum,
            -round(row.normalized_sum, 9),
            row.name.casefold(),
            row.name,
            row.key,
        )
        for row in ranked
    ]
    assert keys == sorted(keys)
    assert [row.rank for row in ranked] == list(range(1, len(entries) + 1))
    assert all(row.rank_sum == row.mean_rank * len(metrics) for row in ranked)


# Lexicographic by an ordered list of metrics (issue 14: MedSG-Bench ranks by IoU, then ACC@0.5).

IOU_THEN_ACC = RankingPolicy(method="lexicographic", order=("IoU", "ACC@0.5"))
MEDSG_METRICS = [MetricSpec("IoU"), MetricSpec("ACC@0.5"), MetricSpec("ACC@0.3")]


def names(ranked):
    return [row.name for row in ranked]


def test_lexicographic_orders_by_the_first_key_then_breaks_ties_with_the_second():
    entries = [
        Entry(1, "low-iou", {"IoU": 0.30, "ACC@0.5": 0.90, "ACC@0.3": 0.95}),
        Entry(2, "tied-worse-acc", {"IoU": 0.50, "ACC@0.5": 0.40, "ACC@0.3": 0.99}),
        Entry(3, "tied-better-acc", {"IoU": 0.50, "ACC@0.5": 0.45, "ACC@0.3": 0.10}),
        Entry(4, "best-iou", {"IoU": 0.60, "ACC@0.5": 0.10, "ACC@0.3": 0.10}),
    ]

    ranked = rank_entries(entries, MEDSG_METRICS, IOU_THEN_ACC)

    assert names(ranked) == ["best-iou", "tied-better-acc", "tied-worse-acc", "low-iou"]
    assert [row.rank for row in ranked] == [1, 2, 3, 4]
    # Under mean rank the same rows order almost the other way round. By hand, "min" ties:
    # IoU ranks best 1, tied 2 and 2, low 4; ACC@0.5 low 1, better 2, worse 3, best 4;
    # ACC@0.3 worse 1, low 2, better and best 3. Sums: worse 6, low 7, better 7, best 8;
    # low beats better on wins (1 to 0).
    assert names(rank_entries(entries, MEDSG_METRICS)) == [
        "tied-worse-acc",
        "low-iou",
        "tied-better-acc",
        "best-iou",
    ]


def test_lexicographic_keeps_every_statistic_of_the_entry():
    entries = [
        Entry(1, "a", {"IoU": 0.50, "ACC@0.5": 0.40, "ACC@0.3": 0.90}),
        Entry(2, "b", {"IoU": 0.60, "ACC@0.5": 0.40, "ACC@0.3": None}),
        Entry(3, "c", {"IoU": 0.40, "ACC@0.5": 0.70, "ACC@0.3": 0.80}),
    ]

    by_key = {row.key: row for row in rank_entries(entries, MEDSG_METRICS, IOU_THEN_ACC)}

    # By hand, "min" ties: IoU ranks b 1, a 2, c 3; ACC@0.5 c 1, a and b 2 (0.40 shared);
    # ACC@0.3 a 1, c 2, b missing 3.
    assert [by_key[key].rank for key in (1, 2, 3)] == [2, 1, 3]
    assert dict(by_key[1].metric_ranks) == {"IoU": 2, "ACC@0.5": 2, "ACC@0.3": 1}
    assert dict(by_key[2].metric_ranks) == {"IoU": 1, "ACC@0.5": 2, "ACC@0.3": 3}
    assert dict(by_key[3].metric_ranks) == {"IoU": 3, "ACC@0.5": 1, "ACC@0.3": 2}
    assert [by_key[key].rank_sum for key in (1, 2, 3)] == [5, 6, 6]
    assert [by_key[key].mean_rank for key in (1, 2, 3)] == [5 / 3, 2.0, 2.0]
    assert [by_key[key].wins for key in (1, 2, 3)] == [1, 1, 1]
    # Normalised: IoU / 0.6, ACC@0.5 / 0.7, ACC@0.3 / 0.9, missing 0.
    assert by_key[1].normalized_sum == pytest.approx(0.5 / 0.6 + 0.4 / 0.7 + 1.0)
    assert by_key[2].normalized_sum == pytest.approx(1.0 + 0.4 / 0.7 + 0.0)
    assert by_key[3].normalized_sum == pytest.approx(0.4 / 0.6 + 1.0 + 0.8 / 0.9)
    # The same statistics as under mean rank: only the order differs.
    by_mean = {row.key: row for row in rank_entries(entries, MEDSG_METRICS)}
    assert {key: row._replace(rank=0) for key, row in by_key.items()} == {
        key: row._replace(rank=0) for key, row in by_mean.items()
    }


def test_lexicographic_ranks_a_missing_value_below_every_present_one():
    entries = [
        Entry(1, "missing-iou", {"IoU": None, "ACC@0.5": 0.99}),
        Entry(2, "nan-iou", {"IoU": math.nan, "ACC@0.5": 0.50}),
        Entry(3, "zero-iou", {"IoU": 0.0, "ACC@0.5": 0.0}),
        Entry(4, "absent-iou", {"ACC@0.5": 0.70}),
    ]

    ranked = rank_entries(entries, MEDSG_METRICS[:2], IOU_THEN_ACC)

    # A zero is still a value; the three missing IoUs tie and ACC@0.5 orders them.
    assert names(ranked) == ["zero-iou", "missing-iou", "absent-iou", "nan-iou"]


def test_lexicographic_falls_back_on_the_name_when_every_key_ties():
    entries = [
        Entry(1, "beta", {"IoU": 0.5, "ACC@0.5": 0.4, "ACC@0.3": 0.1}),
        Entry(2, "Alpha", {"IoU": 0.5, "ACC@0.5": 0.4, "ACC@0.3": 0.9}),
        Entry(3, "alpha", {"IoU": 0.5, "ACC@0.5": 0.4, "ACC@0.3": 0.5}),
    ]

    ranked = rank_entries(entries, MEDSG_METRICS, IOU_THEN_ACC)

    # ACC@0.3 is not in the order, so it decides nothing even though it differs.
    assert names(ranked) == ["Alpha", "alpha", "beta"]


def test_lexicographic_respects_a_lower_is_better_key():
    metrics = [MetricSpec("error", higher_is_better=False), MetricSpec("IoU")]
    entries = [
        Entry(1, "high-error", {"error": 0.30, "IoU": 0.9}),
        Entry(2, "low-error-low-iou", {"error": 0.10, "IoU": 0.2}),
        Entry(3, "low-error-high-iou", {"error": 0.10, "IoU": 0.3}),
        Entry(4, "no-error-value", {"error": None, "IoU": 1.0}),
    ]
    policy = RankingPolicy(method="lexicographic", order=("error", "IoU"))

    ranked = rank_entries(entries, metrics, policy)

    assert names(ranked) == [
        "low-error-high-iou",
        "low-error-low-iou",
        "high-error",
        "no-error-value",
    ]


def test_lexicographic_compares_rounded_values():
    entries = [
        Entry(1, "b", {"IoU": 0.5004, "ACC@0.5": 0.1}),
        Entry(2, "a", {"IoU": 0.5001, "ACC@0.5": 0.2}),
        Entry(3, "c", {"IoU": 0.4996, "ACC@0.5": 0.3}),
    ]

    # At 3 decimals all three IoUs are 0.500 and ACC@0.5 decides; unrounded, IoU does.
    assert names(rank_entries(entries, MEDSG_METRICS[:2], IOU_THEN_ACC)) == ["c", "a", "b"]
    unrounded = RankingPolicy(method="lexicographic", order=("IoU", "ACC@0.5"), decimals=None)
    assert names(rank_entries(entries, MEDSG_METRICS[:2], unrounded)) == ["b", "a", "c"]


def test_lexicographic_order_is_the_same_under_both_tie_methods():
    entries = [
        Entry(1, "a", {"IoU": 0.5, "ACC@0.5": 0.1}),
        Entry(2, "b", {"IoU": 0.5, "ACC@0.5": 0.2}),
        Entry(3, "c", {"IoU": 0.7, "ACC@0.5": None}),
        Entry(4, "d", {"IoU": 0.4, "ACC@0.5": 0.9}),
    ]
    dense = RankingPolicy(method="lexicographic", order=("IoU", "ACC@0.5"), tie_method="dense")

    assert names(rank_entries(entries, MEDSG_METRICS[:2], IOU_THEN_ACC)) == ["c", "b", "a", "d"]
    assert names(rank_entries(entries, MEDSG_METRICS[:2], dense)) == ["c", "b", "a", "d"]
    # The per-metric ranks follow the tie method: IoU 0.7, 0.5, 0.5, 0.4.
    ranked = rank_entries(entries, MEDSG_METRICS[:2], dense)
    assert [row.metric_ranks["IoU"] for row in ranked] == [1, 2, 2, 3]
    assert [
        row.metric_ranks["IoU"] for row in rank_entries(entries, MEDSG_METRICS[:2], IOU_THEN_ACC)
    ] == [1, 2, 2, 4]


def test_the_order_is_ignored_under_mean_rank():
    entries = [
        Entry(1, "a", {"IoU": 0.3, "ACC@0.5": 0.9, "ACC@0.3": 0.9}),
        Entry(2, "b", {"IoU": 0.6, "ACC@0.5": 0.1, "ACC@0.3": 0.1}),
    ]
    with_order = RankingPolicy(order=("IoU",))

    assert rank_entries(entries, MEDSG_METRICS, with_order) == rank_entries(entries, MEDSG_METRICS)
    assert names(rank_entries(entries, MEDSG_METRICS, with_order)) == ["a", "b"]


def test_a_list_order_is_stored_as_a_tuple():
    policy = RankingPolicy(method="lexicographic", order=["IoU", "ACC@0.5"])  # type: ignore[arg-type]

    assert policy.order == ("IoU", "ACC@0.5")
    assert policy == IOU_THEN_ACC
    assert hash(policy) == hash(IOU_THEN_ACC)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"method": "borda"}, "method must be 'mean_rank' or 'lexicographic', not 'borda'"),
        ({"method": "lexicographic"}, "the lexicographic method needs an order"),
        ({"method": "lexicographic", "order": ()}, "the lexicographic method needs an order"),
        (
            {"method": "lexicographic", "order": "IoU"},
            r"order must be a tuple of metric keys, not 'IoU' \(did you mean \('IoU',\)\?\)",
        ),
        ({"order": None}, "order must be a tuple of metric keys, not None"),
        ({"order": ("IoU", "")}, "order: item 2 must be a non-empty metric key, not ''"),
        ({"order": ("IoU", 3)}, "order: item 2 must be a non-empty metric key, not 3"),
        (
            {"method": "lexicographic", "order": ("IoU", "ACC@0.5", "IoU")},
            r"order repeats metric keys \['IoU'\]: \['IoU', 'ACC@0.5', 'IoU'\]",
        ),
    ],
)
def test_a_bad_method_or_order_is_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        RankingPolicy(**arguments)


def test_an_order_naming_an_unknown_metric_is_refused():
    policy = RankingPolicy(method="lexicographic", order=("IoU", "mIoU"))

    with pytest.raises(ValueError, match=r"names \['mIoU'\], which is not among the metrics"):
        rank_entries([Entry(1, "a", {"IoU": 0.5})], MEDSG_METRICS, policy)


@st.composite
def lexicographic_boards(draw):
    entries, metrics = draw(boards())
    keys = [metric.key for metric in metrics]
    order = draw(
        st.permutations(keys).flatmap(lambda p: st.integers(1, len(p)).map(lambda n: p[:n]))
    )
    return entries, metrics, tuple(order)


@given(
    lexicographic_boards(),
    st.sampled_from(["min", "dense"]),
    st.sampled_from([3, None]),
    st.randoms(use_true_random=False),
)
def test_lexicographic_boards_follow_the_keys_in_order_whatever_the_input_order(
    board, tie_method, decimals, shuffler: random.Random
):
    entries, metrics, order = board
    policy = RankingPolicy(
        tie_method=tie_method, decimals=decimals, method="lexicographic", order=order
    )
    shuffled = list(entries)
    shuffler.shuffle(shuffled)

    ranked = rank_entries(entries, metrics, policy)

    assert rank_entries(shuffled, metrics, policy) == ranked
    direction = {metric.key: metric.higher_is_better for metric in metrics}
    values = {entry.key: entry.values for entry in entries}

    def cost(key, metric):
        # Written from the rule, not the code: missing last, higher-is-better descending.
        value = values[key][metric]
        if value is None or math.isnan(value):
            return (1, 0.0)
        value = value if decimals is None else round(value, decimals)
        return (0, -value if direction[metric] else value)

    sort_keys = [
        (*[cost(row.key, metric) for metric in order], row.name.casefold(), row.name, row.key)
        for row in ranked
    ]
    assert sort_keys == sorted(sort_keys)
    assert [row.rank for row in ranked] == list(range(1, len(entries) + 1))


# The rank intervals of a lexicographic board: one cost per entry and replicate.


def test_lexicographic_costs_by_hand():
    metrics = [MetricSpec("IoU"), MetricSpec("error", higher_is_better=False)]
    policy = RankingPolicy(method="lexicographic", order=("IoU", "error"))
    # (metrics, entries): IoU 0.5, 0.5, 0.7, missing; error 0.2, 0.1, 0.9, 0.0.
    values = np.array([[0.5, 0.5, 0.7, np.nan], [0.2, 0.1, 0.9, 0.0]])

    costs = lexicographic_costs(values, metrics, policy)

    # Four entries, base 6. IoU ranks ("min"): 2, 2, 1, 4; error ranks: 3, 2, 4, 1.
    assert costs.tolist() == [2 * 6 + 3, 2 * 6 + 2, 1 * 6 + 4, 4 * 6 + 1]


def test_lexicographic_costs_refuse_a_mean_rank_policy_and_a_bad_shape():
    metrics = [MetricSpec("IoU")]
    with pytest.raises(ValueError, match="needs a lexicographic policy"):
        lexicographic_costs(np.zeros((1, 2)), metrics, RankingPolicy())
    with pytest.raises(ValueError, match=r"expected \(\.\.\., 1 metrics, entries\)"):
        lexicographic_costs(
            np.zeros((2, 2)), metrics, RankingPolicy(method="lexicographic", order=("IoU",))
        )


@given(
    lexicographic_boards(),
    st.sampled_from(["min", "dense"]),
    st.lists(st.lists(board_value, min_size=16, max_size=16), min_size=3, max_size=3),
)
def test_one_cost_per_replicate_ranks_every_replicate_as_the_lexicographic_method(
    board, tie_method, drawn
):
    entries, metrics, order = board
    if not entries:
        return
    policy = RankingPolicy(tie_method=tie_method, method="lexicographic", order=order)
    replicates = len(drawn)
    # Each replicate's values: drawn from the grid, cycling through the drawn numbers.
    pool = [value for row in drawn for value in row]
    values = np.array(
        [
            [
                [
                    np.nan if (v := pool[(r * 7 + e * 3 + m) % len(pool)]) is None else v
                    for r in range(replicates)
                ]
                for m in range(len(metrics))
            ]
            for e in range(len(entries))
        ],
        dtype=float,
    )  # (entries, metrics, replicates)

    costs = lexicographic_costs(values.transpose(2, 1, 0), metrics, policy)
    one_cost = replicate_ranks(
        [Entry(entry.key, entry.name, {}) for entry in entries],
        [MetricSpec("cost", higher_is_better=False)],
        [costs[:, [index]].T for index in range(len(entries))],
        RankingPolicy(tie_method=tie_method, decimals=None),
    )

    for replicate in range(replicates):
        on_replicate = [
            Entry(
                entry.key,
                entry.name,
                {metric.key: values[index, m, replicate] for m, metric in enumerate(metrics)},
            )
            for index, entry in enumerate(entries)
        ]
        rank_of = {row.key: row.rank for row in rank_entries(on_replicate, metrics, policy)}
        assert one_cost.position[replicate].tolist() == [rank_of[e.key] for e in entries]
