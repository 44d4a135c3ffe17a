"""Naming where a file matched by position gains or loses rows (`row_count_problem`): the
first row that no longer lines up, what the test set holds there, and whether the rest of the
file lines up once the missing or extra rows are accounted for."""

import pytest

from benchmark.scoring.errors import Problem
from benchmark.scoring.row_count import row_count_problem

pytestmark = pytest.mark.unit

TEST_SET = ["a", "b", "c", "d", "e"]


def problem(keys, expected=TEST_SET) -> Problem:
    """The problem of a file whose rows' keys are `keys`, each one field ("key 'a'")."""
    return row_count_problem(
        keys,
        expected,
        head=f"expected {len(expected):,} rows, got {len(keys):,}",
        row_fields=lambda position: (("key", repr(keys[position])),),
        test_set_fields=lambda position: (("key", repr(expected[position])),),
        noun="sample",
    )


def fields(key):
    """A two-field key ("id", "qa_type") as a message quotes it; None for a field not given."""
    return tuple((name, None if value is None else repr(value)) for name, value in key)


def two_field_problem(keys, expected) -> Problem:
    """The problem of a file whose rows are placed by id and qa_type, as MedVidBench's are."""
    return row_count_problem(
        [tuple(value for _, value in key) for key in keys],
        [tuple(value for _, value in key) for key in expected],
        head=f"expected {len(expected):,} rows, got {len(keys):,}",
        row_fields=lambda position: fields(keys[position]),
        test_set_fields=lambda position: fields(expected[position]),
        noun="sample",
    )


def test_an_empty_file_is_the_count_alone():
    assert problem([]) == Problem("expected 5 rows, got 0")


@pytest.mark.parametrize(
    ("keys", "row", "message"),
    [
        (
            ["a", "b", "d", "e"],
            2,
            "expected 5 rows, got 4: the file has no row for the test set's sample at this "
            "position, key 'c': from this row on every row is one place early",
        ),
        (
            ["a", "d", "e"],
            1,
            "expected 5 rows, got 3: the file has no row for the test set's sample at this "
            "position, key 'b' or the 1 after it: from this row on every row is 2 places early",
        ),
        (
            ["a", "b", "e", "d"],
            2,
            "expected 5 rows, got 4: this row holds key 'e', where the test set has key 'c'; "
            "every earlier row matches, so a row is missing before it or the rows are out of "
            "order (the later rows do not all line up either)",
        ),
        (
            ["b", "c", "d", "e"],
            0,
            "expected 5 rows, got 4: the file has no row for the test set's sample at this "
            "position, key 'a': from this row on every row is one place early",
        ),
        (
            ["a", "b", "c"],
            3,
            "expected 5 rows, got 3: the 3 rows match the test set's first 3 samples, so the 2 "
            "missing rows are at the end: the file has no row for this sample, key 'd' or the "
            "1 after it",
        ),
    ],
    ids=["one-missing", "two-missing", "missing-and-reordered", "first-missing", "at-the-end"],
)
def test_missing_rows(keys, row, message):
    assert problem(keys) == Problem(message, row=row)


@pytest.mark.parametrize(
    ("keys", "row", "message"),
    [
        (
            ["a", "b", "b", "c", "d", "e"],
            2,
            "expected 5 rows, got 6: this row holds key 'b', where the test set has key 'c'; it "
            "is an extra row, a copy of the row before it: remove it and every later row lines "
            "up with the test set",
        ),
        (
            ["a", "x", "b", "c", "d", "e"],
            1,
            "expected 5 rows, got 6: this row holds key 'x', where the test set has key 'b'; it "
            "is an extra row: remove it and every later row lines up with the test set",
        ),
        (
            ["a", "x", "y", "b", "c", "d", "e"],
            1,
            "expected 5 rows, got 7: this row holds key 'x', where the test set has key 'b'; it "
            "and the 1 after it are extra rows: remove them and every later row lines up with "
            "the test set",
        ),
        (
            ["x", "b", "a", "c", "d", "e"],
            0,
            "expected 5 rows, got 6: this row holds key 'x', where the test set has key 'a'; "
            "this row is extra or the rows are out of order (the later rows do not all line up "
            "either)",
        ),
        (
            ["a", "b", "c", "d", "e", "e", "f"],
            5,
            "expected 5 rows, got 7: the first 5 rows match every sample of the test set, so the "
            "2 extra rows are at the end: remove this row and the 1 after it",
        ),
        (
            ["a", "b", "c", "d", "e", "e"],
            5,
            "expected 5 rows, got 6: the first 5 rows match every sample of the test set, so the "
            "extra row is at the end, a copy of the row before it: remove this row",
        ),
    ],
    ids=[
        "duplicated",
        "one-extra",
        "two-extra",
        "extra-and-reordered",
        "at-the-end",
        "copy-at-end",
    ],
)
def test_extra_rows(keys, row, message):
    assert problem(keys) == Problem(message, row=row)


def test_a_row_without_a_readable_key_never_matches():
    assert problem([None, "b", "c", "d"]).row == 0


# A MedVidBench test set holds several samples of one video clip, told apart by qa_type.
CLIP = "VID103&&0&&300&&1.0"
SAMPLES = [
    (("id", "VID102&&0&&300&&1.0"), ("qa_type", "tal")),
    (("id", CLIP), ("qa_type", "next_action")),
    (("id", CLIP), ("qa_type", "dense_captioning_gpt")),
    (("id", "VID104&&0&&300&&1.0"), ("qa_type", "stg")),
]


def test_a_row_missing_in_the_middle_names_the_test_set_row_the_file_lacks():
    # The tester's file: the clip's next_action row removed, so its dense_captioning_gpt row
    # (same id) stands where next_action belongs. The message names the missing sample, not
    # the row that took its place.
    keys = [SAMPLES[0], SAMPLES[2], SAMPLES[3]]

    assert two_field_problem(keys, SAMPLES) == Problem(
        "expected 4 rows, got 3: the file has no row for the test set's sample at this "
        f"position, id '{CLIP}' (qa_type 'next_action'): from this row on every row is one "
        "place early",
        row=1,
    )


def test_a_row_that_differs_in_its_qa_type_alone_names_only_the_qa_type():
    keys = [SAMPLES[0], SAMPLES[2], SAMPLES[1], SAMPLES[2], SAMPLES[3]]

    assert two_field_problem(keys, SAMPLES) == Problem(
        "expected 4 rows, got 5: this row holds the test set's id but qa_type "
        "'dense_captioning_gpt', where the test set has qa_type 'next_action'; it is an extra "
        "row: remove it and every later row lines up with the test set",
        row=1,
    )


def test_a_row_that_differs_in_every_field_names_them_all():
    keys = [SAMPLES[0], SAMPLES[3], SAMPLES[2]]

    assert two_field_problem(keys, SAMPLES) == Problem(
        "expected 4 rows, got 3: this row holds id 'VID104&&0&&300&&1.0' (qa_type 'stg'), "
        f"where the test set has id '{CLIP}' (qa_type 'next_action'); every earlier row "
        "matches, so a row is missing before it or the rows are out of order (the later rows "
        "do not all line up either)",
        row=1,
    )


def test_a_row_without_a_field_says_so():
    keys = [SAMPLES[0], (("id", CLIP), ("qa_type", None)), SAMPLES[1], SAMPLES[2], SAMPLES[3]]

    assert two_field_problem(keys, SAMPLES) == Problem(
        "expected 4 rows, got 5: this row holds the test set's id but no qa_type, where the "
        "test set has qa_type 'next_action'; it is an extra row: remove it and every later "
        "row lines up with the test set",
        row=1,
    )


class Counted:
    """A row key that counts the comparisons made with it: the pass's cost, whatever the
    CPU (a timed limit would measure the machine's load instead)."""

    comparisons = 0

    def __init__(self, key):
        self.key = key

    def __eq__(self, other):
        Counted.comparisons += 1
        return isinstance(other, Counted) and self.key == other.key

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.key)


def test_one_pass_over_a_test_set_of_6245_rows():
    expected = [Counted((f"video{n}&&0&&300&&1.0", "tal")) for n in range(6245)]
    keys = expected[:6000] + expected[6001:]
    Counted.comparisons = 0

    found = row_count_problem(
        keys,
        expected,
        head="h",
        row_fields=lambda position: (("key", ""),),
        test_set_fields=lambda position: (("key", ""),),
        noun="sample",
    )

    assert found.row == 6000
    assert found.message.endswith("every row is one place early")
    # Linear: each position compared a few times at most (a search per row would be millions).
    assert Counted.comparisons <= 3 * len(expected)
