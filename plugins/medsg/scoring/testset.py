"""The MedSG-Bench test set: the official evaluation JSON, read strictly and checked row by row.

A file is a list of `{task, question, images: [paths], answer: [x1, y1, x2, y2], size?: [w, h]}`
(issue 14, 2). Every row is checked and every problem collected (row, field, what was
expected) into one `GroundTruthError`; nothing is half-loaded. Keys other than these five are
ignored: they are the maintainers' metadata (an id, a modality), never scored.

The reference box is xyxy in the item's pixel space: 336x336, or the item's `size` [w, h]
when it has one (`multi_view` items do). The official code reads `size` for `multi_view` only
and 336x336 for every other task; Podium reads `size` wherever it is given, which is the same
on the official file as long as only `multi_view` items carry one (docs/medsg.md).

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.scoring.errors import MAX_LISTED_PROBLEMS, GroundTruthError, Problem
from benchmark.scoring.json_file import describe, field_name, first_rejected, read_json
from benchmark.scoring.strict_json import Rejected, printable, text_problem

# The eight tasks, in the paper's order (spec: "Tasks"); the order of every per-task listing.
TASKS = (
    "Registered_Diff",
    "Non_Registered_Diff",
    "multi_view",
    "object_tracking",
    "concept",
    "patch",
    "crossmodal",
    "referring",
)
TASK_CODES = {task: code for code, task in enumerate(TASKS)}
# `size` may be absent or null (read as absent).
# Every MedSG-Bench image is resized to 336x336; a reference box is in that space.
DEFAULT_IMAGE_SIZE = (336.0, 336.0)
FIELDS = ("task", "question", "images", "answer", "size")
REQUIRED_FIELDS = ("task", "question", "images", "answer")


@dataclass(frozen=True, slots=True)
class Item:
    """One test item. `size` is the item's own [w, h] when the file gives one, else None."""

    index: int
    task: str
    question: str
    images: tuple[str, ...]
    answer: tuple[float, float, float, float]
    size: tuple[float, float] | None = None

    @property
    def image_size(self) -> tuple[float, float]:
        """The pixel space of the item's boxes: its `size`, else 336x336."""
        return self.size if self.size is not None else DEFAULT_IMAGE_SIZE


@dataclass(frozen=True, eq=False)
class MedSGTestSet:
    """The items of one evaluation file, in file order (predictions are matched by position).

    `task_codes` (n,) int64 indexes `TASKS`; `references` (n, 4) and `sizes` (n, 2) are
    float64. The arrays are read-only, so the object is immutable as a whole. `checksum` is
    the sha256 of the file's bytes (of `canonical_json()` when built from a decoded list).
    """

    __test__ = False  # not a pytest test class, despite the name

    items: tuple[Item, ...]
    task_codes: np.ndarray
    references: np.ndarray
    sizes: np.ndarray
    checksum: str

    def __len__(self) -> int:
        return len(self.items)

    @property
    def tasks(self) -> tuple[str, ...]:
        """Each item's task key, in file order."""
        return tuple(item.task for item in self.items)

    def task_counts(self) -> dict[str, int]:
        """Items per task, for the tasks present, in `TASKS` order."""
        counts = np.bincount(self.task_codes, minlength=len(TASKS))
        return {task: int(counts[code]) for code, task in enumerate(TASKS) if counts[code]}

    def canonical_json(self) -> str:
        """The checked content as JSON with sorted keys and no spaces: equal for two files
        that differ only in layout, key order or ignored metadata."""
        return json.dumps(
            [_record(item) for item in self.items],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )


def _record(item: Item) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task": item.task,
        "question": item.question,
        "images": list(item.images),
        "answer": list(item.answer),
    }
    if item.size is not None:
        record["size"] = list(item.size)
    return record


def load_testset(source: bytes | str | Path | list[Any]) -> MedSGTestSet:
    """The checked test set from a path, the file's bytes or the decoded list.

    Raises `GroundTruthError` with every problem found (the first `MAX_LISTED_PROBLEMS`
    spelled out, the rest counted)."""
    rows, raw = read_json(source, GroundTruthError)
    if isinstance(rows, Rejected):
        raise GroundTruthError([Problem(f"the file holds {rows.describe()}, not a list of items")])
    if not isinstance(rows, list):
        raise GroundTruthError(
            [
                Problem(
                    f"expected a JSON list of {{task, question, images, answer}} objects, got {describe(rows)}"
                )
            ]
        )
    if not rows:
        raise GroundTruthError([Problem("the file holds no items")])
    items: list[Item] = []
    problems: list[Problem] = []
    total = 0
    for index, row in enumerate(rows):
        item, row_problems = _check_row(index, row)
        if row_problems:
            total += len(row_problems)
            problems.extend(row_problems[: max(0, MAX_LISTED_PROBLEMS - len(problems))])
        elif item is not None:
            items.append(item)
    if total:
        raise GroundTruthError(problems, total=total)
    test_set = MedSGTestSet(
        items=tuple(items),
        task_codes=_frozen(np.array([TASK_CODES[item.task] for item in items], dtype=np.int64)),
        references=_frozen(np.array([item.answer for item in items], dtype=np.float64)),
        sizes=_frozen(np.array([item.image_size for item in items], dtype=np.float64)),
        checksum="",
    )
    data = raw if raw is not None else test_set.canonical_json().encode("utf-8")
    object.__setattr__(test_set, "checksum", hashlib.sha256(data).hexdigest())
    return test_set


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


def _check_row(index: int, row: Any) -> tuple[Item | None, list[Problem]]:
    if not isinstance(row, dict):
        return None, [
            Problem(
                f"expected an object {{task, question, images, answer, size?}}, got {describe(row)}",
                index,
            )
        ]
    problems = [
        Problem(
            "appears more than once in this row; JSON objects must not repeat a key",
            index,
            field_name(name),
        )
        for name in getattr(row, "duplicates", ())
    ]
    for name in REQUIRED_FIELDS:
        if name not in row:
            problems.append(Problem("missing", index, name))
    task = row.get("task")
    if "task" in row and task not in TASK_CODES:
        got = printable(task) if isinstance(task, str) else describe(task)
        problems.append(
            Problem(
                f"expected one of the 8 MedSG-Bench tasks ({', '.join(TASKS)}), got {got}",
                index,
                "task",
            )
        )
    question = row.get("question")
    if "question" in row:
        if not isinstance(question, str):
            problems.append(
                Problem(f"expected a string, got {describe(question)}", index, "question")
            )
        elif problem := text_problem(question):
            problems.append(Problem(problem, index, "question"))
    images = row.get("images")
    if "images" in row:
        problems.extend(_image_problems(index, images))
    answer = row.get("answer")
    if "answer" in row:
        problem = _numbers_problem(answer, 4, "[x1, y1, x2, y2]", positive=False)
        if problem:
            problems.append(Problem(problem, index, "answer"))
    size = row.get("size")
    if size is not None:  # null is read as absent
        problem = _numbers_problem(size, 2, "[width, height]", positive=True)
        if problem:
            problems.append(Problem(problem, index, "size"))
    if problems:
        return None, problems
    item = Item(
        index=index,
        task=task,
        question=question,
        images=tuple(images),
        answer=tuple(float(value) for value in answer),  # type: ignore[arg-type]
        size=None if size is None else (float(size[0]), float(size[1])),
    )
    return item, []


def _image_problems(index: int, images: Any) -> list[Problem]:
    if not isinstance(images, list) or not images:
        got = "an empty list" if images == [] else describe(images)
        return [Problem(f"expected a non-empty list of image paths, got {got}", index, "images")]
    problems = []
    for position, path in enumerate(images):
        if not isinstance(path, str) or not path.strip():
            got = "an empty string" if isinstance(path, str) else describe(path)
            problems.append(
                Problem(
                    f"item {position}: expected an image path (a string), got {got}",
                    index,
                    "images",
                )
            )
        elif problem := text_problem(path):
            problems.append(Problem(f"item {position} {problem}", index, "images"))
    return problems


def _numbers_problem(value: Any, count: int, shape: str, *, positive: bool) -> str | None:
    """What is wrong with `value` as a list of `count` finite numbers (positive ones when
    `positive`), or None."""
    rejected = first_rejected(value)
    if rejected is not None:
        return f"expected {shape}, {count} finite numbers; it holds {rejected.describe()}"
    if not isinstance(value, list) or len(value) != count:
        return f"expected {shape}, {count} numbers, got {describe(value)}"
    for position, number in enumerate(value):
        if isinstance(number, bool) or not isinstance(number, int | float):
            return f"expected {shape}, {count} numbers; item {position} is {describe(number)}"
        try:
            finite = math.isfinite(float(number))
        except OverflowError:  # an integer past float range
            finite = False
        if not finite:
            return f"expected {shape}, {count} finite numbers; item {position} is {number!r}"
        if positive and not number > 0:
            return f"expected {shape}, {count} positive numbers; item {position} is {number!r}"
    return None
