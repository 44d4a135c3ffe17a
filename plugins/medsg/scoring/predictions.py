"""A MedSG-Bench predictions file, checked row by row against the test set (issue 14, 2).

The file is a JSON list in test-set order, one row per item:
`{"index": i, "task": <task key>, "prediction": <text or [x1, y1, x2, y2]>}`. As for
MedVidBench (plugins/medvidbench/scoring/submission.py), the order is the contract: `index` must equal
the row's position and `task` the test set's task there; a row holds exactly these three keys
(ground-truth keys get their own message, any other key is refused rather than ignored); the
file is strict JSON. A list prediction must be 4 finite numbers: a malformed list is the
submitter's data, so it is a problem in the file, not an unparsed answer. Every problem is
collected into one `PredictionsError` (`Problem.row` is 0-based; pages show it 1-based) and
nothing is scored while any remains.

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.scoring.errors import MAX_LISTED_PROBLEMS, PredictionsError, Problem
from benchmark.scoring.json_file import describe, field_name, first_rejected, read_json
from benchmark.scoring.row_count import row_count_problem
from benchmark.scoring.row_fields import missing_message, renamed_fields
from benchmark.scoring.strict_json import Rejected, printable, text_problem

from .boxes import list_box_problem
from .testset import MedSGTestSet

REQUIRED_FIELDS = ("index", "task", "prediction")
# Keys only a test-set row or the official evaluation's output file carries.
GROUND_TRUTH_FIELDS = ("answer", "question", "images", "size", "groundtruth", "iou")
GROUND_TRUTH_MESSAGE = "Podium never accepts ground truth from a submitter; remove it"
_KNOWN_FIELDS = frozenset(REQUIRED_FIELDS + GROUND_TRUTH_FIELDS)
UNKNOWN_FIELD_MESSAGE = (
    "unknown field; a row holds exactly index, task and prediction, and Podium refuses "
    "other fields instead of ignoring them; remove it"
)

Prediction = str | tuple[float, float, float, float]


def load_predictions(
    source: bytes | str | Path | list[Any],
    test_set: MedSGTestSet,
    *,
    max_prediction_chars: int | None = None,
) -> tuple[Prediction, ...]:
    """Each item's prediction in test-set order (a text, or a list box as a tuple of floats),
    or `PredictionsError` naming every problem. `max_prediction_chars` bounds a text's length
    (None: no bound)."""
    rows, _ = read_json(source, PredictionsError)
    if isinstance(rows, Rejected):
        raise PredictionsError([Problem(f"the file holds {rows.describe()}, not a list of rows")])
    if not isinstance(rows, list):
        raise PredictionsError(
            [
                Problem(
                    "expected a JSON list of {index, task, prediction} objects, one per test "
                    f"item in test-set order, got {describe(rows)}"
                )
            ]
        )
    if len(rows) != len(test_set):
        raise PredictionsError([_row_count_problem(rows, test_set)])
    problems: list[Problem] = []
    total = 0
    misplaced = 0
    for position, (row, item) in enumerate(zip(rows, test_set.items, strict=True)):
        row_problems = _check_row(position, row, item.task, max_prediction_chars)
        if row_problems:
            total += len(row_problems)
            misplaced += any(problem.field == "index" for problem in row_problems)
            problems.extend(row_problems[: max(0, MAX_LISTED_PROBLEMS - len(problems))])
    if total:
        if misplaced and _is_reordered(rows):
            problems.insert(
                0,
                Problem(
                    "the rows hold every index once but in a different order; predictions are "
                    "matched by position, so write them sorted by index (do not group them by "
                    "task)"
                ),
            )
            total += 1
        raise PredictionsError(problems, total=total)
    return tuple(_prediction(row["prediction"]) for row in rows)


def _prediction(value: str | list[Any]) -> Prediction:
    if isinstance(value, str):
        return value
    return tuple(float(number) for number in value)  # type: ignore[return-value]


def _check_row(
    position: int, row: Any, expected_task: str, max_prediction_chars: int | None
) -> list[Problem]:
    """The row's problems in a fixed order: repeated keys; per key, a refused character in the
    key, a NaN or Infinity in its value, a ground-truth or unknown key; then missing keys and
    each field's own check. Only a row whose three fields are well formed is compared with the
    test set (index, task)."""
    if isinstance(row, Rejected) or not isinstance(row, dict):
        return [
            Problem(
                f"expected an object {{index, task, prediction}}, got {describe(row)}", position
            )
        ]
    problems = [
        Problem(
            "appears more than once in this row; JSON objects must not repeat a key",
            position,
            field_name(name),
        )
        for name in getattr(row, "duplicates", ())
    ]
    # A key that stands for a missing field is told with it, below.
    renamed = renamed_fields(row, required=REQUIRED_FIELDS, known=_KNOWN_FIELDS)
    for name, value in row.items():
        field = field_name(name)
        if problem := text_problem(name):
            problems.append(Problem(f"the key {problem}", position, field))
            continue
        rejected = first_rejected(value)
        if rejected is not None and not rejected.is_number:
            problems.append(Problem(f"holds {rejected.describe()}", position, field))
        elif name in GROUND_TRUTH_FIELDS:
            problems.append(Problem(GROUND_TRUTH_MESSAGE, position, field))
        elif name not in REQUIRED_FIELDS and name not in renamed.values():
            problems.append(Problem(UNKNOWN_FIELD_MESSAGE, position, field))
    flagged = {problem.field for problem in problems}
    for name in REQUIRED_FIELDS:
        if name not in row:
            problems.append(Problem(missing_message(name, renamed), position, name))
        elif name not in flagged:
            problem = _field_problem(name, row[name], max_prediction_chars)
            if problem:
                problems.append(Problem(problem, position, name))
    if problems:
        return problems
    if row["index"] != position:
        problems.append(
            Problem(
                f"expected {position} at this position (rows are in test-set order, numbered "
                f"from 0), got {row['index']}",
                position,
                "index",
            )
        )
    if row["task"] != expected_task:
        problems.append(
            Problem(
                f"expected {expected_task!r} at this position, got {printable(row['task'])}",
                position,
                "task",
            )
        )
    return problems


def _field_problem(name: str, value: Any, max_prediction_chars: int | None) -> str | None:
    if name == "index":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"expected an integer (the row's 0-based position), got {describe(value)}"
        return None
    if name == "task":
        if not isinstance(value, str):
            return f"expected a string (the item's task key), got {describe(value)}"
        return text_problem(value)
    # prediction
    if isinstance(value, str):
        if max_prediction_chars is not None and len(value) > max_prediction_chars:
            return (
                f"is {len(value):,} characters long; this benchmark accepts at most "
                f"{max_prediction_chars:,} characters per prediction"
            )
        return text_problem(value)
    if isinstance(value, list):
        rejected = first_rejected(value)
        if rejected is not None:
            return f"a box holds 4 finite numbers, but it holds {rejected.describe()}"
        return list_box_problem(value)
    return f"expected a text answer or a box [x1, y1, x2, y2] of 4 numbers, got {describe(value)}"


def _row_count_problem(rows: list[Any], test_set: MedSGTestSet) -> Problem:
    """A file with more or fewer rows than the test set: the first row whose index or task is
    not the test set's at its position, and whether a row is missing or extra there."""
    items = test_set.items

    def row_fields(position: int) -> tuple[tuple[str, str | None], ...] | str:
        row = rows[position]
        if not isinstance(row, dict):
            return f"is {describe(row)}, not an object {{index, task, prediction}}"
        return (("index", _quoted(row, "index")), ("task", _quoted(row, "task")))

    def test_set_fields(position: int) -> tuple[tuple[str, str], ...]:
        return (("index", str(position)), ("task", printable(items[position].task)))

    return row_count_problem(
        [_key(row) for row in rows],
        [(position, item.task) for position, item in enumerate(items)],
        head=(
            f"expected {len(items):,} rows, one per test item in test-set order, got {len(rows):,}"
        ),
        row_fields=row_fields,
        test_set_fields=test_set_fields,
        noun="item",
    )


def _quoted(row: dict[str, Any], name: str) -> str | None:
    """The row's `name` as a message quotes it (an index as written); None when the row has
    no such key."""
    if name not in row:
        return None
    value = row[name]
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return describe(value)


def _key(row: Any) -> tuple[int, str] | None:
    """A row's (index, task), which place it in the test set; None when either is unreadable."""
    if not isinstance(row, dict):
        return None
    index, task = row.get("index"), row.get("task")
    if isinstance(index, bool) or not isinstance(index, int) or not isinstance(task, str):
        return None
    return index, task


def _is_reordered(rows: list[Any]) -> bool:
    """Whether the rows' indexes are 0..n-1, each once, in another order."""
    indexes = [row.get("index") if isinstance(row, dict) else None for row in rows]
    if any(isinstance(index, bool) or not isinstance(index, int) for index in indexes):
        return False
    return sorted(indexes) == list(range(len(rows)))
