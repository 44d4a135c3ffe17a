"""Naming where a file matched by position gains or loses rows (`row_count_problem`): the
first row that no longer lines up, what the test set holds there, and whether the rest of the
file lines up once the missing or extra rows are accounted for."""

import pytest

from benchmark.scoring.errors import Problem
from benchmark.scoring.row_count import row_count_problem

pytestmark = pytest.mark.unit

TEST_SET = ["a", "b", "c", "d", "e"]


def problem(keys, expected=TEST_SET) -> Problem:
    return row_count_problem(
        keys,
        expected,
        head=f"expected {len(expected):,} rows, got {len(keys):,}",
        row_holds=lambda position: f"holds {keys[position]!r}",
        test_set_holds=lambda position: repr(expected[position]),
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
            "expected 5 rows, got 4: this row holds 'd', where the test set has 'c'; a row is "
            "missing before it: the file has no row for this sample, and from this row on every "
            "row matches the test set one place early",
        ),
        (
            ["a", "d", "e"],
            1,
            "expected 5 rows, got 3: this row holds 'd', where the test set has 'b'; 2 rows are "
            "missing before it: the file has no row for this sample or the 1 after it, and from "
            "this row on every row matches the test set 2 places early",
        ),
        (
            ["a", "b", "e", "d"],
            2,
            "expected 5 rows, got 4: this row holds 'e', where the test set has 'c'; every "
            "earlier row matches, so a row is missing before it or the rows are out of order "
            "(the later rows do not all line up either)",
        ),
        (
            ["b", "c", "d", "e"],
            0,
            "expected 5 rows, got 4: this row holds 'b', where the test set has 'a'; a row is "
            "missing before it: the file has no row for this sample, and from this row on every "
            "row matches the test set one place early",
        ),
        (
            ["a", "b", "c"],
            3,
            "expected 5 rows, got 3: the 3 rows match the test set's first 3 samples, so the 2 "
            "missing rows are at the end: the file has no row for this sample, 'd' or the 1 "
            "after it",
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
            "expected 5 rows, got 6: this row holds 'b', where the test set has 'c'; it is an "
            "extra row, a copy of the row before it: remove it and every later row lines up "
            "with the test set",
        ),
        (
            ["a", "x", "b", "c", "d", "e"],
            1,
            "expected 5 rows, got 6: this row holds 'x', where the test set has 'b'; it is an "
            "extra row: remove it and every later row lines up with the test set",
        ),
        (
            ["a", "x", "y", "b", "c", "d", "e"],
            1,
            "expected 5 rows, got 7: this row holds 'x', where the test set has 'b'; it and the "
            "1 after it are extra rows: remove them and every later row lines up with the test "
            "set",
        ),
        (
            ["x", "b", "a", "c", "d", "e"],
            0,
            "expected 5 rows, got 6: this row holds 'x', where the test set has 'a'; this row "
            "is extra or the rows are out of order (the later rows do not all line up either)",
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
        row_holds=lambda position: "",
        test_set_holds=lambda position: "",
        noun="sample",
    )

    assert found.row == 6000
    assert found.message.endswith("every row matches the test set one place early")
    # Linear: each position compared a few times at most (a search per row would be millions).
    assert Counted.comparisons <= 3 * len(expected)
