"""Loading a predictions file and checking it row by row against the test set (spec 2).

Predictions are matched to ground truth by position, because ids repeat. So the
order is the contract: every row's id and qa_type must equal the test set's at the
same position. The official scorer only warns on a mismatch; Podium rejects the
file and names the first offending rows, so a reordered file (the official
multi-GPU inference scripts group samples by task) is never scored silently.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from .errors import MAX_LISTED_PROBLEMS, PredictionsError, Problem
from .ground_truth import TestSet

REQUIRED_FIELDS = ("id", "qa_type", "prediction")
# Keys that only a "merged" file (predictions plus ground truth) carries.
GROUND_TRUTH_FIELDS = ("gnd", "struc_info", "conversations", "question")


def load_predictions(source: bytes | str | Path | list[Any], test_set: TestSet) -> list[str]:
    """The prediction texts in test-set order, or `PredictionsError` naming what is wrong.

    `source` is a path, the file's bytes, or the decoded JSON list.
    """
    rows = _decode(source)
    expected = len(test_set)
    if len(rows) != expected:
        raise PredictionsError(
            [
                Problem(
                    f"expected {expected} rows, one per test sample in test-set order, "
                    f"got {len(rows)}"
                )
            ]
        )
    problems: list[Problem] = []
    total = 0
    misaligned = 0
    for index, (row, sample) in enumerate(zip(rows, test_set.samples, strict=True)):
        row_problems = _check_row(index, row, sample.id, sample.qa_type)
        if row_problems:
            total += len(row_problems)
            misaligned += any(p.field in ("id", "qa_type") for p in row_problems)
            if len(problems) < MAX_LISTED_PROBLEMS:
                problems.extend(row_problems[: MAX_LISTED_PROBLEMS - len(problems)])
    if problems:
        if misaligned and _is_reordered(rows, test_set):
            problems.insert(
                0,
                Problem(
                    "the rows hold the right samples but in a different order; predictions "
                    "are matched by position, so write them in the test set's order "
                    "(do not group or sort them by task)"
                ),
            )
            total += 1
        raise PredictionsError(problems, total=total)
    return [row["prediction"] for row in rows]


def _decode(source: bytes | str | Path | list[Any]) -> list[Any]:
    if isinstance(source, list):
        rows = source
    else:
        if isinstance(source, Path | str):
            try:
                source = Path(source).read_bytes()
            except OSError as error:
                raise PredictionsError(
                    [Problem(f"cannot read the file: {error.strerror}")]
                ) from None
        try:
            rows = json.loads(source.decode("utf-8-sig"))
        except UnicodeDecodeError:
            raise PredictionsError([Problem("the file is not UTF-8 text")]) from None
        except json.JSONDecodeError as error:
            raise PredictionsError(
                [
                    Problem(
                        f"not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}"
                    )
                ]
            ) from None
    if not isinstance(rows, list):
        hint = ""
        if isinstance(rows, dict):
            hint = " (a merged results file or an object keyed by sample is not accepted)"
        raise PredictionsError(
            [Problem(f"expected a JSON list of {{id, qa_type, prediction}} objects{hint}")]
        )
    return rows


def _check_row(index: int, row: Any, expected_id: str, expected_qa_type: str) -> list[Problem]:
    if not isinstance(row, dict):
        return [Problem("expected an object {id, qa_type, prediction}", row=index)]
    problems = [
        Problem("Podium never accepts ground truth from a submitter; remove it", index, name)
        for name in GROUND_TRUTH_FIELDS
        if name in row
    ]
    for name in REQUIRED_FIELDS:
        if name not in row:
            problems.append(Problem("missing", row=index, field=name))
        elif not isinstance(row[name], str):
            problems.append(
                Problem(f"expected a string, got {_describe(row[name])}", row=index, field=name)
            )
    if problems:
        return problems
    if row["id"] != expected_id:
        problems.append(
            Problem(f"expected {expected_id!r} at this position, got {row['id']!r}", index, "id")
        )
    if row["qa_type"] != expected_qa_type:
        problems.append(
            Problem(
                f"expected {expected_qa_type!r} at this position, got {row['qa_type']!r}",
                index,
                "qa_type",
            )
        )
    return problems


def _is_reordered(rows: list[Any], test_set: TestSet) -> bool:
    def key(row: Any) -> tuple[str, str] | None:
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            qa_type = row.get("qa_type")
            return (row["id"], qa_type) if isinstance(qa_type, str) else None
        return None

    submitted = Counter(key(row) for row in rows)
    expected = Counter((sample.id, sample.qa_type) for sample in test_set.samples)
    return submitted == expected


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
