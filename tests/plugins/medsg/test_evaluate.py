"""Scoring: per-task and overall metrics by hand, the format report, and the bootstrap
contributions (the identity replicate equals the published values bit for bit)."""

import json

import numpy as np
import pytest

from plugins.medsg.scoring.evaluate import (
    FLAT_METRIC_KEYS,
    MedSGContributions,
    score,
    score_with_contributions,
)
from plugins.medsg.scoring.predictions import load_predictions
from plugins.medsg.scoring.testset import TASKS

from .factories import item, make_test_set, rows_for

pytestmark = pytest.mark.unit

REF = [0, 0, 10, 10]


def scored(records, predictions, box_format="pixel"):
    test_set = make_test_set(*records)
    checked = load_predictions(rows_for(test_set, predictions), test_set)
    return score_with_contributions(test_set, checked, box_format)


@pytest.fixture
def uneven():
    """referring: IoU 1, 1, 0 (one unparsed); patch: IoU 0.5. Tasks of different sizes, so
    the unweighted and the item-weighted means differ."""
    records = [
        item("referring", REF),
        item("referring", REF),
        item("referring", REF),
        item("patch", [0, 0, 10, 5]),
    ]
    predictions = ["(0,0),(10,10)", [0, 0, 10, 10], "I see no lesion", "(0,0),(10,10)"]
    return scored(records, predictions)


def test_unweighted_and_item_weighted_means_by_hand(uneven):
    result, _ = uneven
    # referring: IoU (1 + 1 + 0) / 3, ACC 2/3 at every threshold; patch: IoU 50 / 100 = 0.5,
    # a hit at 0.3 and 0.5 (inclusive), not at 0.7.
    assert result.per_task == {
        "patch": {"n": 1, "IoU": 0.5, "ACC@0.3": 1.0, "ACC@0.5": 1.0, "ACC@0.7": 0.0},
        "referring": {"n": 3, "IoU": 2 / 3, "ACC@0.3": 2 / 3, "ACC@0.5": 2 / 3, "ACC@0.7": 2 / 3},
    }
    # Unweighted over the two tasks present, tasks summed in the spec's order (patch first).
    assert result.metrics == {
        "IoU": (0.5 + 2 / 3) / 2,  # 7/12
        "ACC@0.3": (1.0 + 2 / 3) / 2,  # 5/6
        "ACC@0.5": (1.0 + 2 / 3) / 2,
        "ACC@0.7": (0.0 + 2 / 3) / 2,  # 1/3
    }
    assert result.metrics["IoU"] == pytest.approx(7 / 12, abs=1e-15)
    # Over the 4 items: IoU (0.5 + 2) / 4, hits 3/4, 3/4 and 2/4.
    assert result.item_weighted == {"IoU": 0.625, "ACC@0.3": 0.75, "ACC@0.5": 0.75, "ACC@0.7": 0.5}


def test_the_json_has_exactly_the_contract_keys_in_order(uneven):
    result, _ = uneven
    document = result.as_json()
    assert list(document) == ["metrics", "item_weighted", "per_task"]
    assert list(document["metrics"]) == ["IoU", "ACC@0.3", "ACC@0.5", "ACC@0.7"]
    assert list(document["per_task"]) == ["patch", "referring"]  # the spec's task order
    assert list(document["per_task"]["patch"]) == ["n", "IoU", "ACC@0.3", "ACC@0.5", "ACC@0.7"]
    assert json.loads(json.dumps(document)) == document  # full precision survives


def test_flat_metrics(uneven):
    result, _ = uneven
    assert result.flat_metrics() == {
        "IoU": (0.5 + 2 / 3) / 2,
        "ACC@0.5": (1.0 + 2 / 3) / 2,
        "ACC@0.3": (1.0 + 2 / 3) / 2,
        "ACC@0.7": (0.0 + 2 / 3) / 2,
        "IoU_items": 0.625,
        "ACC@0.5_items": 0.75,
        "IoU_patch": 0.5,
        "ACC@0.5_patch": 1.0,
        "IoU_referring": 2 / 3,
        "ACC@0.5_referring": 2 / 3,
    }


def test_the_format_report(uneven):
    result, _ = uneven
    report = result.format_report
    assert (report.parsed, report.unparsed, report.degenerate) == (3, 1, 0)
    assert report.unparsed_by_task == {"patch": 0, "referring": 1}
    assert report.unparsed_examples == ((2, "I see no lesion"),)


def test_degenerate_boxes_are_counted_and_score_zero():
    result, _ = scored(
        [item("referring", REF), item("referring", REF)], ["(5,5),(5,9)", [9, 9, 1, 1]]
    )
    assert result.format_report.degenerate == 2
    assert result.per_task["referring"]["IoU"] == 0.0


def test_unparsed_examples_are_cut_at_80_characters():
    long_text = "no box " * 30
    result, _ = scored([item("patch", REF)], [long_text])
    assert result.format_report.unparsed_examples == ((0, long_text[:80]),)


@pytest.mark.parametrize(
    ("reference", "threshold"),
    [([0, 0, 10, 3], "ACC@0.3"), ([0, 0, 10, 5], "ACC@0.5"), ([0, 0, 10, 7], "ACC@0.7")],
)
def test_thresholds_are_inclusive(reference, threshold):
    # pred 10x10 around a 10xh reference: IoU = 10h / 100, exactly the threshold.
    result, _ = scored([item("patch", reference)], ["(0,0),(10,10)"])
    scores = result.per_task["patch"]
    assert scores["IoU"] == float(threshold.removeprefix("ACC@"))
    assert scores[threshold] == 1.0


def test_a_just_missed_threshold_is_no_hit():
    # IoU 49 / 100 = 0.49
    result, _ = scored([item("patch", [0, 0, 7, 7])], ["(0,0),(10,10)"])
    assert result.per_task["patch"]["IoU"] == 0.49
    assert result.per_task["patch"]["ACC@0.5"] == 0.0


def test_the_declared_convention_converts_into_the_items_size():
    # multi_view, size 200x100, reference [20, 20, 100, 100]: the same box in each convention.
    records = [item("multi_view", [20, 20, 100, 100], size=[200, 100])]
    cases = {
        "pixel": "(20,20),(100,100)",
        "norm1000": [100, 200, 500, 1000],
        "unit": "[0.1, 0.2, 0.5, 1.0]",
        "yxyx_norm1000": '{"box_2d": [200, 100, 1000, 500]}',
    }
    for box_format, prediction in cases.items():
        result, _ = scored(records, [prediction], box_format)
        assert result.per_task["multi_view"]["IoU"] == pytest.approx(1.0, abs=1e-12), box_format


def test_an_unknown_box_format_is_refused(uneven):
    test_set = make_test_set(item("patch", REF))
    with pytest.raises(ValueError, match="unknown box format 'xywh'"):
        score(test_set, ("(0,0),(1,1)",), "xywh")


def test_scoring_twice_gives_the_same_bits(uneven):
    result, _ = uneven
    test_set = make_test_set(
        item("referring", REF),
        item("referring", REF),
        item("referring", REF),
        item("patch", [0, 0, 10, 5]),
    )
    again = score(
        test_set,
        ("(0,0),(10,10)", (0.0, 0.0, 10.0, 10.0), "I see no lesion", "(0,0),(10,10)"),
        "pixel",
    )
    assert again == result


def test_the_order_of_the_tasks_in_the_file_changes_no_value():
    rng = np.random.default_rng(7)
    referring = [(item("referring", REF), _box(rng)) for _ in range(37)]
    patch = [(item("patch", [2, 3, 30, 31]), _box(rng)) for _ in range(23)]
    first, _ = scored([r for r, _ in referring + patch], [p for _, p in referring + patch])
    second, _ = scored([r for r, _ in patch + referring], [p for _, p in patch + referring])
    assert first.per_task == second.per_task
    assert first.metrics == second.metrics
    assert first.item_weighted == second.item_weighted


def _box(rng) -> list[float]:
    x1, y1 = rng.uniform(0, 20, size=2)
    return [float(x1), float(y1), float(x1 + rng.uniform(1, 30)), float(y1 + rng.uniform(1, 30))]


# ---- contributions (issue 12) ----


@pytest.fixture
def many():
    """80 items over all 8 tasks with varied IoUs."""
    rng = np.random.default_rng(3)
    records, predictions = [], []
    for index in range(80):
        records.append(item(TASKS[index % 8], [2, 3, 30, 31]))
        predictions.append(_box(rng) if index % 9 else "no box")
    return scored(records, predictions)


def test_the_identity_replicate_is_the_published_value_bit_for_bit(many):
    result, contributions = many
    values = contributions.compute(np.ones((1, 80), dtype=np.int64))
    published = result.flat_metrics()
    assert values.shape == (1, len(FLAT_METRIC_KEYS))
    assert dict(zip(FLAT_METRIC_KEYS, values[0].tolist(), strict=True)) == published
    aggregated = contributions.aggregate(np.ones(80, dtype=np.int64))
    for key in ("ACC@0.3", "ACC@0.7"):
        assert aggregated[key][0] == result.metrics[key]
        assert aggregated[key + "_items"][0] == result.item_weighted[key]


def test_a_replicate_does_not_depend_on_its_batch(many):
    _, contributions = many
    rng = np.random.default_rng(11)
    batch = rng.poisson(1.0, size=(7, 80)).astype(np.int64)
    together = contributions.compute(batch)
    for row in range(7):
        alone = contributions.compute(batch[row : row + 1])
        assert np.array_equal(alone[0], together[row], equal_nan=True)
    assert np.array_equal(contributions.compute(batch[::-1])[::-1], together, equal_nan=True)


def test_weights_count_items_and_an_unweighted_task_drops_out(uneven):
    _, contributions = uneven
    # Rows: referring (IoU 1, 1, 0), patch (IoU 0.5).
    doubled = contributions.aggregate([2, 0, 1, 1])
    # referring: weights 2, 0, 1 -> (2 * 1 + 0 + 0) / 3
    assert doubled["IoU_referring"][0] == 2 / 3
    assert doubled["n_referring"][0] == 3
    assert doubled["IoU_items"][0] == (0.5 + 2.0) / 4
    without_patch = contributions.aggregate([1, 1, 1, 0])
    assert without_patch["IoU"][0] == 2 / 3  # the mean over the one task left
    assert np.isnan(without_patch["IoU_patch"][0])
    assert without_patch["n_patch"][0] == 0
    nothing = contributions.compute([[0, 0, 0, 0]])
    assert np.isnan(nothing).all()


def test_an_absent_task_is_nan_in_the_columns(uneven):
    _, contributions = uneven
    values = contributions.metric_values(np.ones((2, 4), dtype=np.int64))
    assert np.isnan(values["IoU_multi_view"]).all()
    assert values["IoU_patch"].tolist() == [0.5, 0.5]


def test_weights_are_checked(uneven):
    _, contributions = uneven
    with pytest.raises(ValueError, match=r"shape \(B, 4\)"):
        contributions.compute(np.ones((1, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="integers"):
        contributions.compute(np.ones((1, 4)))
    with pytest.raises(ValueError, match="negative"):
        contributions.compute([[1, -1, 1, 1]])


def test_stored_contributions_round_trip(many):
    _, contributions = many
    restored = MedSGContributions.from_bytes(contributions.to_bytes())
    assert restored.task_codes.tolist() == contributions.task_codes.tolist()
    assert restored.ious.tolist() == contributions.ious.tolist()
    batch = np.random.default_rng(5).poisson(1.0, size=(4, 80)).astype(np.int64)
    assert np.array_equal(restored.compute(batch), contributions.compute(batch), equal_nan=True)


def test_anything_else_is_refused_when_read_back():
    with pytest.raises(ValueError, match="not stored MedSG-Bench contributions"):
        MedSGContributions.from_bytes(b"not an archive")
