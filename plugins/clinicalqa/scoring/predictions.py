"""A demo clinical QA predictions file, checked row by row against the test set.

The file is a JSON list of `{"id": <item id>, "answer": <text>}`, one row per test item, every
id exactly once, in any order (rows are matched by id, never by position). An answer is the
model's text as it wrote it, for both kinds of item: a multiple-choice answer's letter is read
when scoring (`letters.read_letter`; an unreadable one scores 0), an open-ended answer goes to
the pairwise judge as written. An empty answer is allowed (a model that said nothing).

A row holds exactly these two keys: a test-set key (`question`, `options`, `reference`,
`category`) gets its own message, any other key is refused rather than ignored. The file is
strict JSON. Every problem is collected into one `PredictionsError` (`Problem.row` is the
0-based row of the file; pages show it 1-based) and nothing is scored while any remains. A
message about a row names its id where it has a readable one, since a file's row 5 need not
be the test set's item 5.

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.scoring.errors import MAX_LISTED_PROBLEMS, PredictionsError, Problem
from benchmark.scoring.json_file import describe, field_name, first_rejected, read_json
from benchmark.scoring.row_fields import missing_message, renamed_fields
from benchmark.scoring.strict_json import Rejected, printable, text_problem

from .testset import ClinicalQATestSet

REQUIRED_FIELDS = ("id", "answer")
# Keys only a test-set row carries.
TEST_SET_FIELDS = ("question", "options", "reference", "category")
TEST_SET_MESSAGE = (
    "is a test-set field; a predictions row holds exactly id and answer (Podium never "
    "accepts test-set content from a submitter); remove it"
)
UNKNOWN_FIELD_MESSAGE = (
    "unknown field; a row holds exactly id and answer, and Podium refuses other fields "
    "instead of ignoring them; remove it"
)
_KNOWN_FIELDS = frozenset(REQUIRED_FIELDS + TEST_SET_FIELDS)
# How many missing ids a message spells out.
MISSING_IDS_SHOWN = 5


def load_predictions(
    source: bytes | str | Path | list[Any],
    test_set: ClinicalQATestSet,
    *,
    max_prediction_chars: int | None = None,
) -> tuple[str, ...]:
    """Each item's answer in test-set order, or `PredictionsError` naming every problem.
    `max_prediction_chars` bounds an answer's length (None: no bound)."""
    rows, _ = read_json(source, PredictionsError)
    if isinstance(rows, Rejected):
        raise PredictionsError([Problem(f"the file holds {rows.describe()}, not a list of rows")])
    if not isinstance(rows, list):
        raise PredictionsError(
            [
                Problem(
                    'expected a JSON list of {"id": ..., "answer": ...} objects, one per test '
                    f"item, got {describe(rows)}"
                )
            ]
        )
    problems: list[Problem] = []
    total = 0
    answers: dict[str, str] = {}
    row_of: dict[str, int] = {}

    def add(found: list[Problem]) -> None:
        nonlocal total
        total += len(found)
        problems.extend(found[: max(0, MAX_LISTED_PROBLEMS - len(problems))])

    for position, row in enumerate(rows):
        row_problems = _check_row(position, row, test_set, max_prediction_chars)
        identifier = row.get("id") if isinstance(row, dict) else None
        if isinstance(identifier, str) and identifier in test_set.positions:
            if identifier in row_of:
                earlier = row_of[identifier]
                row_problems.append(
                    Problem(
                        f"the id {identifier!r} was answered in row {earlier + 1:,} (0-based "
                        f"{earlier:,}) already; every id appears exactly once, so remove one "
                        "of the two rows",
                        position,
                        "id",
                    )
                )
            else:
                row_of[identifier] = position
                if not row_problems:
                    answers[identifier] = row["answer"]
        add(row_problems)
    missing = [identifier for identifier in test_set.ids if identifier not in row_of]
    if missing:
        shown = ", ".join(repr(identifier) for identifier in missing[:MISSING_IDS_SHOWN])
        more = len(missing) - MISSING_IDS_SHOWN
        rows_held = (
            f" (the file has {len(rows):,} row{'' if len(rows) == 1 else 's'})"
            if len(rows) != len(test_set)
            else ""
        )
        add(
            [
                Problem(
                    f"no row answers {len(missing):,} of the {len(test_set):,} test items"
                    f"{rows_held}: {shown}{f' and {more:,} more' if more > 0 else ''}; the file "
                    "needs one row per test item, every id exactly once (an empty answer is "
                    "allowed)"
                )
            ]
        )
    if total:
        raise PredictionsError(problems, total=total)
    return tuple(answers[identifier] for identifier in test_set.ids)


def _check_row(
    position: int, row: Any, test_set: ClinicalQATestSet, max_prediction_chars: int | None
) -> list[Problem]:
    """The row's problems in a fixed order: repeated keys; per key, a refused character in the
    key, a NaN or Infinity in its value, a test-set or unknown key; then missing keys and
    each field's own check."""
    if isinstance(row, Rejected) or not isinstance(row, dict):
        return [Problem(f'expected an object {{"id", "answer"}}, got {describe(row)}', position)]
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
        if rejected is not None:
            problems.append(Problem(f"holds {rejected.describe()}", position, field))
        elif name in TEST_SET_FIELDS:
            problems.append(Problem(TEST_SET_MESSAGE, position, field))
        elif name not in REQUIRED_FIELDS and name not in renamed.values():
            problems.append(Problem(UNKNOWN_FIELD_MESSAGE, position, field))
    flagged = {problem.field for problem in problems}
    for name in REQUIRED_FIELDS:
        if name not in row:
            problems.append(Problem(missing_message(name, renamed), position, name))
        elif name not in flagged:
            problem = _field_problem(name, row[name], test_set, max_prediction_chars)
            if problem:
                problems.append(Problem(problem, position, name))
    identifier = row.get("id")
    if isinstance(identifier, str) and identifier in test_set.positions:
        # Rows are matched by id, so the id says which item a problem is about.
        problems = [
            problem
            if problem.field == "id"
            else Problem(
                f"{problem.message} (the row of id {identifier!r})", position, problem.field
            )
            for problem in problems
        ]
    return problems


def _field_problem(
    name: str, value: Any, test_set: ClinicalQATestSet, max_prediction_chars: int | None
) -> str | None:
    if name == "id":
        if not isinstance(value, str):
            return f"expected the item's id as a string, got {describe(value)}"
        if value not in test_set.positions:
            return f"no test item has the id {printable(value)}"
        return None
    # answer
    if not isinstance(value, str):
        return (
            "expected the model's answer as text (a string; for a multiple-choice item, e.g. "
            f'"B" or "Answer: B"), got {describe(value)}'
        )
    if max_prediction_chars is not None and len(value) > max_prediction_chars:
        return (
            f"is {len(value):,} characters long; this benchmark accepts at most "
            f"{max_prediction_chars:,} characters per answer"
        )
    return text_problem(value)
