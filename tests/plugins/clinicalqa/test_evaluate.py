"""Accuracy on the multiple-choice items by hand, the unreadable answers counted, and the
bootstrap contributions: the identity replicate equals the published value bit for bit, a
replicate does not depend on its batch, and the stored bytes read back the same."""

import io
import json

import numpy as np
import pytest

from plugins.clinicalqa.scoring import (
    ClinicalQAContributions,
    load_predictions,
    score,
    score_with_contributions,
)

from .factories import as_bytes, make_test_set, mc, oe, rows_for

pytestmark = pytest.mark.unit


@pytest.fixture
def test_set():
    # 5 multiple-choice items (answers A, B, C, D, A) and 2 open-ended ones between them.
    return make_test_set(
        mc("mc-1", "A"),
        oe("oe-1"),
        mc("mc-2", "B"),
        mc("mc-3", "C"),
        oe("oe-2"),
        mc("mc-4", "D"),
        mc("mc-5", "A"),
    )


ANSWERS = {
    "mc-1": "Answer: A",  # right
    "oe-1": "Rest.",
    "mc-2": "(c) the lungs",  # wrong
    "mc-3": "c",  # right
    "oe-2": "  ",  # an empty open-ended answer
    "mc-4": "I am not sure.",  # unreadable: wrong, counted
    "mc-5": "The answer is A.",  # right
}


def scored(test_set, answers=ANSWERS):
    checked = load_predictions(as_bytes(rows_for(answers)), test_set)
    return score_with_contributions(test_set, checked)


def test_accuracy_and_counts_by_hand(test_set):
    result, _ = scored(test_set)
    assert result.accuracy == 3 / 5
    assert result.metrics == {"accuracy": 0.6}
    assert (result.multiple_choice, result.correct, result.unreadable) == (5, 3, 1)
    assert (result.open_ended, result.open_ended_empty) == (2, 1)
    assert result.unreadable_examples == ((5, "mc-4", "I am not sure."),)
    assert result.as_json() == {
        "metrics": {"accuracy": 0.6},
        "multiple_choice": {"items": 5, "correct": 3, "unreadable": 1},
        "open_ended": {"items": 2, "empty": 1},
    }


def test_open_ended_answers_change_no_number(test_set):
    other = {**ANSWERS, "oe-1": "A", "oe-2": "Answer: B"}
    assert scored(test_set, other)[0].metrics == scored(test_set)[0].metrics


def test_a_test_set_without_multiple_choice_has_no_accuracy():
    test_set = make_test_set(oe("oe-1"))
    result = score(test_set, ("Rest.",))
    assert result.accuracy is None
    assert result.metrics == {"accuracy": None}


def test_unreadable_examples_are_the_first_five_cut_to_80_characters():
    test_set = make_test_set(*(mc(f"mc-{n}") for n in range(7)))
    result = score(test_set, tuple("x" * 100 for _ in range(7)))
    assert result.unreadable == 7
    assert [example[:2] for example in result.unreadable_examples] == [
        (n, f"mc-{n}") for n in range(5)
    ]
    assert {len(example[2]) for example in result.unreadable_examples} == {80}


def test_score_refuses_answers_of_another_length(test_set):
    with pytest.raises(ValueError, match="6 answers for 7 test items"):
        score(test_set, ("",) * 6)


def test_the_identity_replicate_is_the_published_value_bit_for_bit(test_set):
    result, contributions = scored(test_set)
    ones = np.ones((1, len(test_set)), dtype=np.int64)
    assert contributions.aggregate(ones)["accuracy"][0] == result.accuracy
    assert contributions.is_multiple_choice.tolist() == [1, 0, 1, 1, 0, 1, 1]
    assert contributions.correct.tolist() == [1, 0, 0, 1, 0, 0, 1]


def test_a_replicate_by_hand_and_with_no_multiple_choice_weight(test_set):
    _, contributions = scored(test_set)
    weights = np.array(
        [
            [2, 5, 0, 1, 0, 0, 0],  # mc-1 twice (right), mc-3 once (right): 3 / 3
            [0, 3, 1, 0, 0, 2, 1],  # mc-2 (wrong), mc-4 twice (wrong), mc-5 (right): 1 / 4
            [0, 4, 0, 0, 3, 0, 0],  # only open-ended items: no value
        ],
        dtype=np.int64,
    )
    values = contributions.aggregate(weights)["accuracy"]
    assert values[:2].tolist() == [1.0, 0.25]
    assert np.isnan(values[2])


def test_a_replicate_does_not_depend_on_its_batch(test_set):
    _, contributions = scored(test_set)
    rng = np.random.default_rng(7)
    batch = rng.integers(0, 4, size=(50, len(test_set)), dtype=np.int64)
    together = contributions.aggregate(batch)["accuracy"]
    alone = np.array([contributions.aggregate(row)["accuracy"][0] for row in batch])
    assert np.array_equal(together, alone, equal_nan=True)


def test_the_stored_bytes_read_back_the_same(test_set):
    _, contributions = scored(test_set)
    again = ClinicalQAContributions.from_bytes(contributions.to_bytes())
    assert np.array_equal(again.is_multiple_choice, contributions.is_multiple_choice)
    assert np.array_equal(again.correct, contributions.correct)
    weights = np.random.default_rng(3).integers(0, 3, size=(20, len(test_set)), dtype=np.int64)
    assert np.array_equal(
        again.aggregate(weights)["accuracy"],
        contributions.aggregate(weights)["accuracy"],
        equal_nan=True,
    )


def test_metric_values_by_key(test_set):
    _, contributions = scored(test_set)
    ones = np.ones((2, len(test_set)), dtype=np.int64)
    assert list(contributions.metric_values(ones)) == ["accuracy"]
    assert list(contributions.metric_values(ones, ["accuracy"])) == ["accuracy"]
    with pytest.raises(KeyError, match="no contributions for \\['open_ended_rating'\\]"):
        contributions.metric_values(ones, ["open_ended_rating"])


def archive(header: dict, **arrays) -> bytes:
    buffer = io.BytesIO()
    encoded = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    np.savez(buffer, header=encoded, **arrays)
    return buffer.getvalue()


ONE = np.array([1], dtype=np.int64)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"not an archive", "pickled"),  # numpy takes unknown bytes for a pickle
        (
            archive({"format": 1, "kind": "medsg"}, is_multiple_choice=ONE, correct=ONE),
            "unknown contributions format",
        ),
        (archive({"format": 1, "kind": "clinicalqa"}, correct=ONE), "is_multiple_choice"),
        (
            archive({"format": 1, "kind": "clinicalqa"}, is_multiple_choice=ONE, correct=ONE * 1.0),
            "unexpected dtypes int64, float64",
        ),
    ],
)
def test_other_bytes_are_refused(data, reason):
    with pytest.raises(ValueError, match="not stored demo clinical QA contributions") as caught:
        ClinicalQAContributions.from_bytes(data)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("kinds", "correct", "message"),
    [
        ([1, 0], [1], "2 item kinds for 1 correct flags"),
        ([1, 2], [1, 0], "must be 0 or 1"),
        ([0, 1], [1, 0], "only a multiple-choice item can be answered right"),
    ],
)
def test_contributions_check_their_arrays(kinds, correct, message):
    with pytest.raises(ValueError, match=message):
        ClinicalQAContributions(np.array(kinds), np.array(correct))


def test_weights_are_checked():
    contributions = ClinicalQAContributions(np.array([1, 1]), np.array([1, 0]))
    with pytest.raises(ValueError, match="shape"):
        contributions.aggregate(np.ones((1, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="integers"):
        contributions.aggregate(np.ones((1, 2)))
