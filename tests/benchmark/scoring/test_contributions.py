"""Per-sample contributions (issue 12 point 1): every metric recomputed under sample weights.

The contract: the all-ones replicate gives the published value bit for bit (`==`, not approx),
a zero weight drops the sample, a weight of 2 counts it twice, and a replicate's value does not
depend on the batch it is computed in.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from plugins.medvidbench.definition import SCORING_DATA_DIR
from plugins.medvidbench.demo_testset import PREDICTION_KINDS, generate_testset, make_predictions
from plugins.medvidbench.scoring import METRIC_NAMES, evaluate, load_ground_truth, load_predictions
from plugins.medvidbench.scoring.contributions import (
    Contributions,
    PooledMean,
    as_weights,
    identity_weights,
    metric_values,
)
from plugins.medvidbench.scoring.evaluate import evaluate_with_contributions
from plugins.medvidbench.scoring.judge import (
    aggregate,
    build_items,
    judge_contributions,
    load_rubric,
    with_judge,
)
from plugins.medvidbench.scoring.tasks import (
    AUTOMATIC_METRICS,
    CVS_ACC,
    JUDGE_METRICS,
    NAP_ACC,
    SA_ACC,
)

from .factories import gt_record, make_test_set

pytestmark = pytest.mark.unit


def nearest_by_length(pairs):
    """A deterministic stand-in for the MiniLM encoder (the aggregation is what is tested)."""
    return [len(query) % len(classes) for query, classes in pairs]


def fake_verdicts(items, rubric, seed, failed=0.1):
    rng = random.Random(seed)
    return {
        item.key: None
        if rng.random() < failed
        else {aspect: rng.randint(1, 5) for aspect in rubric.aspects}
        for item in items
    }


@pytest.fixture(scope="module")
def rubric():
    return load_rubric(SCORING_DATA_DIR / "medvidbench_judge_prompt.txt")


def score_all(test_set, predictions, rubric, seed="judge"):
    """The published result (judge included) and the contributions of the same run."""
    result, contributions = evaluate_with_contributions(
        test_set, predictions, nearest_class=nearest_by_length
    )
    items = build_items(test_set, predictions)
    verdicts = fake_verdicts(items, rubric, seed)
    outcome = aggregate(test_set, items, verdicts, rubric)
    contributions = contributions.with_metrics(
        judge_contributions(test_set, items, verdicts, rubric)
    )
    return with_judge(result, outcome), contributions


def assert_identical(published, values):
    """`values` (one replicate) equals `published` bit for bit; None is NaN."""
    for name in METRIC_NAMES:
        value = float(values[name][0])
        if published[name] is None:
            assert np.isnan(value), name
        else:
            assert value == published[name], (name, value, published[name])


@pytest.fixture(scope="module")
def demo():
    records = generate_testset(0)
    test_set = load_ground_truth(records)
    runs = {
        kind: load_predictions(make_predictions(records, kind, 0), test_set)
        for kind in PREDICTION_KINDS
    }
    return records, test_set, runs


@pytest.fixture(scope="module")
def demo_scored(demo, rubric):
    _, test_set, runs = demo
    return {kind: score_all(test_set, predictions, rubric) for kind, predictions in runs.items()}


@pytest.mark.parametrize("kind", PREDICTION_KINDS)
def test_identity_weights_give_every_published_value_bit_for_bit(demo, demo_scored, kind):
    _, test_set, _ = demo
    result, contributions = demo_scored[kind]
    assert len(test_set) == 6245
    assert all(result.metrics[name] is not None for name in METRIC_NAMES)
    assert_identical(result.metrics, metric_values(contributions, identity_weights(6245)))


def test_the_result_is_unchanged_and_carries_no_contributions(demo):
    _, test_set, runs = demo
    result, _ = evaluate_with_contributions(
        test_set, runs["noisy"], nearest_class=nearest_by_length
    )
    plain = evaluate(test_set, runs["noisy"], nearest_class=nearest_by_length)
    assert result == plain
    assert result.to_json() == plain.to_json()
    assert "contributions" not in result.to_dict()


def test_batch_rows_equal_single_rows_bit_for_bit_whatever_b(demo, demo_scored):
    """The determinism rule: a replicate's bits do not depend on its batch or on B."""
    _, test_set, _ = demo
    _, contributions = demo_scored["noisy"]
    rng = np.random.default_rng(12)
    batch = rng.poisson(1.0, size=(40, len(test_set))).astype(np.int64)
    batch[3] = 1
    batch[5] = 0
    whole = metric_values(contributions, batch)
    first, second = (
        metric_values(contributions, batch[:17]),
        metric_values(contributions, batch[17:]),
    )
    for row in (0, 3, 5, 16, 17, 39):
        alone = metric_values(contributions, batch[row])
        in_half = first if row < 17 else second
        for name in METRIC_NAMES:
            np.testing.assert_array_equal(whole[name][row : row + 1], alone[name], name)
            np.testing.assert_array_equal(
                in_half[name][row - (0 if row < 17 else 17) :][:1], alone[name]
            )
    assert all(np.isnan(whole[name][5]) for name in METRIC_NAMES)  # nothing drawn: no value
    identity = metric_values(contributions, identity_weights(len(test_set)))
    for name in METRIC_NAMES:
        assert whole[name][3] == identity[name][0]


def subset_indices(test_set, seed):
    rng = random.Random(seed)
    return [index for index in range(len(test_set)) if rng.random() < 0.7]


@pytest.mark.parametrize("kind", PREDICTION_KINDS)
def test_zero_weights_equal_scoring_the_smaller_test_set(demo, demo_scored, kind, rubric):
    records, test_set, runs = demo
    _, contributions = demo_scored[kind]
    kept = subset_indices(test_set, kind)
    weights = np.zeros(len(test_set), dtype=np.int64)
    weights[kept] = 1
    smaller = load_ground_truth([records[index] for index in kept])
    predictions = [runs[kind][index] for index in kept]
    verdicts = fake_verdicts(build_items(test_set, runs[kind]), rubric, "judge")
    expected = score_with_copied_verdicts(
        test_set, runs[kind], verdicts, smaller, predictions, kept, rubric
    )
    values = metric_values(contributions, weights)
    for name in METRIC_NAMES:
        if name == NAP_ACC:
            continue  # below: a dataset without a list takes its classes from its references
        # Sums run in the full set's order, so equal up to the last bits of a float sum.
        assert values[name][0] == pytest.approx(expected[name], rel=1e-12, abs=0), name


def test_zero_weights_give_nap_exactly_when_the_class_lists_are_fixed(demo, demo_scored):
    """NAP_acc is a ratio of counts, so exact; a dataset without a fixed list (classes drawn
    from its own references) can see its list shrink on a smaller set, so it is left out."""
    records, test_set, runs = demo
    _, contributions = demo_scored["noisy"]
    fixed = {"AVOS", "CholecT50", "CoPESD", "NurViD"}
    kept = [
        index
        for index in subset_indices(test_set, "nap")
        if test_set.samples[index].dataset in fixed
    ]
    weights = np.zeros(len(test_set), dtype=np.int64)
    weights[kept] = 1
    smaller = load_ground_truth([records[index] for index in kept])
    expected = evaluate(
        smaller, [runs["noisy"][index] for index in kept], nearest_class=nearest_by_length
    )
    assert metric_values(contributions, weights)[NAP_ACC][0] == expected.metrics[NAP_ACC]


# Ratios of integer counts, combined left to right in an order that copies at the end leave
# alone: exact. The pooled means sum floats pairwise in another order: equal to 1e-12.
EXACT_UNDER_COPIES = {NAP_ACC, SA_ACC, CVS_ACC, *JUDGE_METRICS}


def test_a_weight_of_two_equals_the_sample_written_twice(demo, demo_scored, rubric):
    records, test_set, runs = demo
    _, contributions = demo_scored["noisy"]
    doubled = subset_indices(test_set, "twice")[::5]
    weights = np.ones(len(test_set), dtype=np.int64)
    weights[doubled] = 2
    bigger = load_ground_truth(records + [records[index] for index in doubled])
    predictions = list(runs["noisy"]) + [runs["noisy"][index] for index in doubled]
    rows = list(range(len(test_set))) + doubled  # the bigger set's rows, as full-set rows
    verdicts = fake_verdicts(build_items(test_set, runs["noisy"]), rubric, "judge")
    expected = score_with_copied_verdicts(
        test_set, runs["noisy"], verdicts, bigger, predictions, rows, rubric
    )
    values = metric_values(contributions, weights)
    for name in METRIC_NAMES:
        if name in EXACT_UNDER_COPIES:
            assert values[name][0] == expected[name], name
        else:
            assert values[name][0] == pytest.approx(expected[name], rel=1e-12, abs=0), name


def score_with_copied_verdicts(
    test_set, predictions, verdicts, other, other_predictions, rows, rubric
):
    """Score `other`, whose row i is `test_set`'s row `rows[i]`, each item taking the verdict
    its original got in the full set (so the judge's randomness is the same)."""
    items = build_items(test_set, predictions)
    by_original = {}
    for item in items:
        by_original.setdefault(item.sample, []).append(item)
    big_items = build_items(other, other_predictions)
    big_verdicts = {}
    originals = {}
    for item in big_items:
        originals.setdefault(item.sample, []).append(item)
    for new_row, group in originals.items():
        for new_item, old_item in zip(group, by_original[rows[new_row]], strict=True):
            big_verdicts[new_item.key] = verdicts[old_item.key]
    result = evaluate(other, other_predictions, nearest_class=nearest_by_length)
    return with_judge(result, aggregate(other, big_items, big_verdicts, rubric)).metrics


# --- hand-made edge cases ----------------------------------------------------------------------

TAL = ("tal", "0.0-10.0 seconds.", [{"spans": [{"start": 0, "end": 10}]}])
STG = ("stg", "1.0 seconds: [0, 0, 10, 10]", [{"bbox_dict": {"1.0": [0, 0, 10, 10]}}])
STG_NO_BOX = ("stg", "1.0 seconds: [0, 0]", [{"bbox_dict": {"1.0": [0, 0]}}])
DVC = (
    "dense_captioning_gpt",
    "0.0-10.0 seconds: cut",
    [[{"start": 0, "end": 10, "caption": "cut"}]],
)
CVS = ("cvs_assessment", "Two structures: 2", [{"cvs_scores": {"two_structures": 2}}])
SKILL = (
    "skill_assessment",
    "Time and motion: 3/5",
    [{"skill_level": "I", "skill_scores": {"Time and motion": 3}}],
)


def record(spec, **options):
    qa_type, answer, struc_info = spec
    return gt_record(qa_type, answer, struc_info, **options)


EDGE_CASES = {
    "a task absent, others partly unparsed": (
        [record(TAL), record(TAL, dataset="CoPESD"), record(STG)],
        ["0.0-5.0 seconds.", "no idea", "1.0 seconds: [0, 0, 5, 10]"],
    ),
    "stg without a valid reference box has no value": (
        [record(STG_NO_BOX), record(STG_NO_BOX)],
        ["1.0 seconds: [0, 0, 5, 10]", ""],
    ),
    "next action with every reference outside its list has no value": (
        [gt_record("next_action", "dancing"), gt_record("next_action", "juggling")],
        ["dancing", "juggling"],
    ),
    "dense captioning skipped samples still weigh their dataset": (
        [
            record(DVC),
            record(DVC),
            record(DVC, dataset="CoPESD"),
            record(DVC, dataset="CoPESD"),
            record(DVC, dataset="NurViD"),
        ],
        ["0.0-4.0 seconds: cut", "nothing", "0.0-9.0 seconds: cut\n2.0-8.0 seconds: x", "", ""],
    ),
    "assessments left out or with nothing named": (
        [
            record(CVS, dataset="Cholec80_CVS"),
            record(CVS, dataset="Cholec80_CVS"),
            record(CVS, dataset="Other_CVS"),
            record(SKILL, dataset="JIGSAWS"),
            record(SKILL, dataset="JIGSAWS"),
            record(SKILL, dataset="Other_skill"),
        ],
        [
            "Two structures: 2",
            "Two structures: 1",
            "nothing",
            "Time and motion: 3/5",
            "Time and motion: 2",
            "no score",
        ],
    ),
    "captions: every prediction empty scores 0.0": (
        [gt_record("video_summary_gpt", "The surgeon dissects."), record(DVC)],
        ["", "no events"],
    ),
    "captions judged": (
        [
            gt_record("video_summary_gpt", "The surgeon dissects."),
            gt_record("video_summary_gpt", "The surgeon cuts.", dataset="CoPESD"),
            gt_record("region_caption_gemini", "A grasper holds the gallbladder."),
            record(DVC),
            record(DVC, dataset="CoPESD"),
            record(DVC, dataset="NurViD"),
        ],
        [
            "It dissects.",
            "It cuts",
            "A grasper.",
            "0.0-10.0 seconds: cut",
            "0.0-3.0 seconds: a",
            "9.0-10.0 seconds: no pair at any threshold",
        ],
    ),
}


@pytest.mark.parametrize("case", EDGE_CASES)
@pytest.mark.parametrize("failed", [0.0, 0.5, 1.0])
def test_identity_on_hand_made_edge_cases(case, failed, rubric):
    records, predictions = EDGE_CASES[case]
    test_set = make_test_set(*records)
    result, contributions = evaluate_with_contributions(
        test_set, predictions, nearest_class=nearest_by_length
    )
    items = build_items(test_set, predictions)
    verdicts = fake_verdicts(items, rubric, case, failed=failed)
    outcome = aggregate(test_set, items, verdicts, rubric)
    contributions = contributions.with_metrics(
        judge_contributions(test_set, items, verdicts, rubric)
    )
    published = with_judge(result, outcome).metrics
    assert_identical(published, metric_values(contributions, identity_weights(len(test_set))))
    # And every single-sample subset agrees with scoring that sample alone.
    for index in range(len(test_set)):
        weights = np.zeros(len(test_set), dtype=np.int64)
        weights[index] = 1
        alone = make_test_set(records[index])
        expected = score_with_copied_verdicts(
            test_set, predictions, verdicts, alone, [predictions[index]], [index], rubric
        )
        assert_identical(expected, metric_values(contributions, weights))


def test_the_edge_cases_cover_the_quirks():
    """The cases above reach the corners the docstrings name (not vacuous)."""
    test_set = make_test_set(*EDGE_CASES["stg without a valid reference box has no value"][0])
    result = evaluate(test_set, EDGE_CASES["stg without a valid reference box has no value"][1])
    assert result.metrics["STG_mIoU"] is None
    records, predictions = EDGE_CASES["dense captioning skipped samples still weigh their dataset"]
    result = evaluate(make_test_set(*records), predictions)
    assert result.per_dataset["DVC_F1"]["NurViD"] == 0.0
    assert result.counts["DVC_F1"] == {"scored": 2, "total": 5}


def test_a_zero_weight_drops_a_value_that_is_not_finite():
    """0 x inf is NaN: a sample left out must not poison the sum (the published mean over the
    same values is infinite, and stays so at the identity)."""
    recorded = PooledMean.build([0, 1], [np.inf, 0.25])
    values = recorded.compute(np.array([[1, 1], [0, 1], [0, 2], [0, 0]], dtype=np.int64))
    np.testing.assert_array_equal(values, [float(np.mean([np.inf, 0.25])), 0.25, 0.25, np.nan])


def test_metrics_not_recorded_are_nan():
    contributions = Contributions(3)
    values = metric_values(contributions, np.ones((2, 3), dtype=np.int64))
    assert list(values) == list(METRIC_NAMES)
    assert all(np.isnan(array).all() and array.shape == (2,) for array in values.values())


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (np.ones((2, 4), dtype=np.int64), r"shape \(B, 3\)"),
        (np.ones((1, 1, 3), dtype=np.int64), r"shape \(B, 3\)"),
        (np.ones((2, 3)), "integers"),
        (np.array([[1, -1, 1]]), "negative"),
    ],
)
def test_weights_are_checked(weights, message):
    with pytest.raises(ValueError, match=message):
        as_weights(weights, 3)


def test_only_leaderboard_metrics_can_be_added():
    with pytest.raises(ValueError, match="not leaderboard metrics"):
        Contributions(1).with_metrics({"BLEU": None})


def test_automatic_and_judge_metrics_are_all_recorded(demo_scored):
    _, contributions = demo_scored["perfect"]
    assert set(contributions.metrics) == set(AUTOMATIC_METRICS) | set(JUDGE_METRICS)


@pytest.mark.parametrize("kind", PREDICTION_KINDS)
def test_stored_contributions_give_the_same_values_bit_for_bit(demo, demo_scored, kind):
    from plugins.medvidbench.scoring.contributions import from_bytes, to_bytes

    _, test_set, _ = demo
    _, contributions = demo_scored[kind]
    restored = from_bytes(to_bytes(contributions))
    assert restored.n_samples == contributions.n_samples
    assert list(restored.metrics) == list(contributions.metrics)
    weights = np.random.default_rng(7).poisson(1.0, size=(20, len(test_set))).astype(np.int64)
    weights[0] = 1
    before, after = metric_values(contributions, weights), metric_values(restored, weights)
    for name in METRIC_NAMES:
        assert before[name].tobytes() == after[name].tobytes(), name


def test_anything_but_stored_contributions_is_refused():
    from plugins.medvidbench.scoring.contributions import from_bytes, to_bytes

    with pytest.raises(ValueError, match="not stored contributions"):
        from_bytes(b"not an archive")
    stored = to_bytes(Contributions(3, {NAP_ACC: PooledMean.build([0, 2], [1.0, 0.0])}))
    assert from_bytes(stored).metrics[NAP_ACC].compute(identity_weights(3)).tolist() == [0.5]
