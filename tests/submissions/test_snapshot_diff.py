"""The difference of two snapshots (issue 33, point 3), over rows shaped as a snapshot stores
them, without a database: entries added and removed, rank and board moves, value changes and
a re-scoring on another test-set version."""

import pytest

from submissions.snapshot_diff import ListedEntry, Move, Place, diff_snapshots
from tests.submissions.snapshot_data import KEYS, row

pytestmark = pytest.mark.unit

OLDER = [
    row(1, "Alpha", "official", 1, 1, {"CVS_acc": 0.7, "NAP_acc": 0.5}),
    row(2, "Beta", "community", 2, 1, {"CVS_acc": 0.6, "NAP_acc": 0.4}),
    row(3, "Gamma", "community", 3, 2, {"CVS_acc": 0.5, "NAP_acc": 0.3}),
    row(4, "Delta", "community", 4, 3, {"CVS_acc": 0.4, "NAP_acc": None}),
]
# Beta verified and first; Alpha re-scored on test set 2 (CVS_acc 0.7 -> 0.65); Gamma left;
# Epsilon arrived; Delta unchanged but for its place.
NEWER = [
    row(2, "Beta", "official", 1, 1, {"CVS_acc": 0.6, "NAP_acc": 0.4}),
    row(1, "Alpha", "official", 2, 2, {"CVS_acc": 0.65, "NAP_acc": 0.5}, testset=2, scorer="s2"),
    row(5, "Epsilon", "community", 3, 1, {"CVS_acc": 0.45, "NAP_acc": 0.2}),
    row(4, "Delta", "community", 4, 2, {"CVS_acc": 0.4, "NAP_acc": None}),
]


def test_added_and_removed_entries_with_where_they_stood():
    diff = diff_snapshots(OLDER, NEWER, older_keys=KEYS, newer_keys=KEYS)

    assert diff.added == [ListedEntry(5, "Epsilon", Place("community", 3, 1, 3))]
    assert diff.removed == [ListedEntry(3, "Gamma", Place("community", 3, 2, 3))]


def test_rank_board_and_value_moves_in_the_newer_order():
    diff = diff_snapshots(OLDER, NEWER, older_keys=KEYS, newer_keys=KEYS)

    assert [entry.model.new for entry in diff.changed] == ["Beta", "Alpha", "Delta"]
    beta, alpha, delta = diff.changed
    assert (beta.board, beta.rank, beta.position, beta.overall) == (
        Move("community", "official"),
        Move(2, 1),
        Move(1, 1),
        Move(2, 1),
    )
    assert (beta.moved_board, beta.moved_rank, beta.values, beta.rescored) == (
        True,
        True,
        {},
        False,
    )
    assert alpha.values == {"CVS_acc": Move(0.7, 0.65)}
    assert not alpha.moved_board
    assert alpha.rank == Move(1, 2)
    # Delta's rank stays 4 (global); its place on the Community board moves up.
    assert (delta.rank, delta.position) == (Move(4, 4), Move(3, 2))
    assert (delta.moved_rank, delta.values) == (True, {})
    assert (diff.moved_rank, diff.moved_board, diff.changed_values, diff.rescored) == (3, 1, 1, 1)
    assert diff.unchanged == 0


def test_a_rescoring_on_a_corrected_test_set_shows_both_versions():
    diff = diff_snapshots(OLDER, NEWER, older_keys=KEYS, newer_keys=KEYS)

    alpha = next(entry for entry in diff.changed if entry.submission_id == 1)
    assert alpha.rescored
    assert alpha.testset_version == Move(1, 2)
    assert alpha.scorer_version == Move("s1", "s2")


def test_the_same_rows_differ_in_nothing():
    diff = diff_snapshots(OLDER, OLDER, older_keys=KEYS, newer_keys=KEYS)

    assert diff.is_empty
    assert diff.unchanged == 4


def test_a_metric_only_one_snapshot_has_is_none_on_the_other_side():
    older = [row(1, "Alpha", "official", 1, 1, {"CVS_acc": 0.7})]
    newer = [{**older[0], "metrics": {**older[0]["metrics"], "SA_acc": {"value": 0.3}}}]

    diff = diff_snapshots(older, newer, older_keys=KEYS, newer_keys=[*KEYS, "SA_acc"])

    assert diff.metric_keys == [*KEYS, "SA_acc"]
    assert diff.changed[0].values == {"SA_acc": Move(None, 0.3)}
