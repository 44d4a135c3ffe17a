"""What changed between two snapshots of a benchmark's boards (issue 33, point 3; docs/boards.md
"Differences and trends"): the entries added and removed, and for each entry in both, its
moves (rank, place on its board, place over both boards, board) and its changed values and
versions. A re-scoring on a corrected test set shows here as value changes with the test-set
(and scorer) version old -> new.

Plain Python over the snapshots' stored rows (`snapshots.snapshot_rows`: both boards' rows in
rank order, each the rankings' JSON row with `position`, `testset_version`, `scorer_version`),
matched by `submission_id`: the page and the API both print this, and the tests check it
without a database. The rows are read as they were written, so a diff of two snapshots never
changes either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Move[T]:
    """One field's value in the older snapshot and in the newer."""

    old: T
    new: T

    @property
    def changed(self) -> bool:
        return self.old != self.new


@dataclass(frozen=True)
class Place:
    """Where an entry stood in one snapshot: its rank (as the board showed it: over both boards
    under the global scope, over its board under the per-board one), its place on its board (1
    to the board's rows), its place over both boards (the rankings' `board=all` order)."""

    board: str
    rank: int
    position: int
    overall: int


@dataclass(frozen=True)
class ListedEntry:
    """An entry only one of the two snapshots holds, where it stood there."""

    submission_id: int
    model: str
    place: Place


@dataclass(frozen=True)
class ChangedEntry:
    """An entry both snapshots hold, with what changed. `values`: the metrics whose value
    changed (a metric only one snapshot has counts as None on the other side)."""

    submission_id: int
    model: Move[str]
    board: Move[str]
    rank: Move[int]
    position: Move[int]
    overall: Move[int]
    values: dict[str, Move[float | None]]
    testset_version: Move[Any]
    scorer_version: Move[str]

    @property
    def moved_board(self) -> bool:
        return self.board.changed

    @property
    def moved_rank(self) -> bool:
        return self.rank.changed or self.position.changed or self.overall.changed

    @property
    def rescored(self) -> bool:
        """Its numbers now come from another test set or scorer version."""
        return self.testset_version.changed or self.scorer_version.changed


@dataclass(frozen=True)
class SnapshotDiff:
    """Older -> newer. `changed` in the newer snapshot's rank order, `added` too, `removed` in
    the older's; `unchanged` counts the entries both hold as they were."""

    added: list[ListedEntry] = field(default_factory=list)
    removed: list[ListedEntry] = field(default_factory=list)
    changed: list[ChangedEntry] = field(default_factory=list)
    unchanged: int = 0
    metric_keys: list[str] = field(default_factory=list)

    @property
    def moved_rank(self) -> int:
        return sum(1 for entry in self.changed if entry.moved_rank)

    @property
    def moved_board(self) -> int:
        return sum(1 for entry in self.changed if entry.moved_board)

    @property
    def changed_values(self) -> int:
        return sum(1 for entry in self.changed if entry.values)

    @property
    def rescored(self) -> int:
        return sum(1 for entry in self.changed if entry.rescored)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _place(row: dict[str, Any], overall: int) -> Place:
    return Place(board=row["board"], rank=row["rank"], position=row["position"], overall=overall)


def _value(row: dict[str, Any], key: str) -> float | None:
    found = (row.get("metrics") or {}).get(key)
    return found.get("value") if found else None


def diff_snapshots(
    older: Sequence[dict[str, Any]],
    newer: Sequence[dict[str, Any]],
    *,
    older_keys: Sequence[str] = (),
    newer_keys: Sequence[str] = (),
) -> SnapshotDiff:
    """The difference from the `older` snapshot's rows to the `newer`'s (each in rank order
    over both boards, as `snapshot_rows` gives them), with each snapshot's metric keys (its
    `metric_keys`; the values compared are the union's, the older's order first)."""
    keys = list(dict.fromkeys([*older_keys, *newer_keys]))
    before = {row["submission_id"]: (index, row) for index, row in enumerate(older, start=1)}
    after_ids = set()
    added, changed = [], []
    unchanged = 0
    for overall, row in enumerate(newer, start=1):
        submission_id = row["submission_id"]
        after_ids.add(submission_id)
        found = before.get(submission_id)
        if found is None:
            added.append(ListedEntry(submission_id, row["model"], _place(row, overall)))
            continue
        old_overall, old = found
        values = {
            key: Move(_value(old, key), _value(row, key))
            for key in keys
            if _value(old, key) != _value(row, key)
        }
        entry = ChangedEntry(
            submission_id=submission_id,
            model=Move(old["model"], row["model"]),
            board=Move(old["board"], row["board"]),
            rank=Move(old["rank"], row["rank"]),
            position=Move(old["position"], row["position"]),
            overall=Move(old_overall, overall),
            values=values,
            testset_version=Move(old.get("testset_version"), row.get("testset_version")),
            scorer_version=Move(old.get("scorer_version", ""), row.get("scorer_version", "")),
        )
        if values or entry.moved_rank or entry.moved_board or entry.rescored or entry.model.changed:
            changed.append(entry)
        else:
            unchanged += 1
    removed = [
        ListedEntry(submission_id, row["model"], _place(row, overall))
        for submission_id, (overall, row) in before.items()
        if submission_id not in after_ids
    ]
    return SnapshotDiff(
        added=added, removed=removed, changed=changed, unchanged=unchanged, metric_keys=keys
    )
