"""Loading a predictions file and checking it row by row against the test set (spec 2).

Predictions are matched to ground truth by position, because ids repeat. So the
order is the contract: every row's id and qa_type must equal the test set's at the
same position. The official scorer only warns on a mismatch; Podium rejects the
file and names the first offending rows, so a reordered file (the official
multi-GPU inference scripts group samples by task) is never scored silently.

The file is read as strict JSON (RFC 8259, `strict_json`): nesting deeper than
`MAX_JSON_DEPTH` is refused before parsing; NaN, Infinity, numbers that overflow, repeated keys,
NUL and other control characters and unpaired surrogates are refused with the row and field
that hold them. A row holds exactly `id`, `qa_type` and `prediction`, which is what the
official `extract_predictions.py` writes: ground-truth keys get their own message, and any other
key is refused rather than ignored, so a misspelt `predictions` never leaves a row unscored (a
key that looks like a missing field is named with it, `row_fields`).
A prediction longer than the benchmark's limit (`max_prediction_chars`, passed in by the
caller) is refused too: it is sent to the judge as one prompt.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from benchmark.scoring import strict_json
from benchmark.scoring.errors import MAX_LISTED_PROBLEMS, PredictionsError, Problem
from benchmark.scoring.json_file import describe, field_name, first_rejected, read_json
from benchmark.scoring.row_count import row_count_problem
from benchmark.scoring.row_fields import missing_message, renamed_fields
from benchmark.scoring.strict_json import Rejected, printable

from .ground_truth import TestSet

REQUIRED_FIELDS = ("id", "qa_type", "prediction")
_FIELD_SET = frozenset(REQUIRED_FIELDS)
# Keys that only a "merged" file (predictions plus ground truth, or the official app's
# results.json, whose `answer` is the model's output next to its `metadata`) carries.
GROUND_TRUTH_FIELDS = ("gnd", "struc_info", "conversations", "question", "answer", "metadata")
GROUND_TRUTH_MESSAGE = "Podium never accepts ground truth from a submitter; remove it"
_KNOWN_FIELDS = frozenset(REQUIRED_FIELDS + GROUND_TRUTH_FIELDS)
UNKNOWN_FIELD_MESSAGE = (
    "unknown field; a row holds exactly id, qa_type and prediction, and Podium refuses "
    "other fields instead of ignoring them; remove it"
)


def load_predictions(
    source: bytes | str | Path | list[Any],
    test_set: TestSet,
    *,
    max_prediction_chars: int | None = None,
) -> list[str]:
    """The prediction texts in test-set order, or `PredictionsError` naming what is wrong.

    `source` is a path, the file's bytes, or the decoded JSON list. `max_prediction_chars`
    is the benchmark's limit on one prediction's length (None: no limit).
    """
    rows = _decode(source)
    clean = _clean_predictions(rows, test_set, max_prediction_chars)
    if clean is not None:
        return clean
    if len(rows) != len(test_set):
        raise PredictionsError([_row_count_problem(rows, test_set)])
    problems: list[Problem] = []
    total = 0
    misaligned = 0
    for index, (row, sample) in enumerate(zip(rows, test_set.samples, strict=True)):
        row_problems = _check_row(
            index, row, sample.id, sample.qa_type, max_prediction_chars=max_prediction_chars
        )
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


def _clean_predictions(
    rows: list[Any], test_set: TestSet, max_prediction_chars: int | None
) -> list[str] | None:
    """The predictions when every row is exactly what `_check_row` accepts, checked for the
    whole file at once; None when any row may have a problem, and `load_predictions` then
    checks row by row to name it. Accepts a file exactly when the row checks find nothing:
    each row an object holding only `id`, `qa_type` and `prediction`, once each and all
    strings (so no key is unknown, repeated or refused, and no value holds a `Rejected`
    number); no string with a refused character (one search of all of them joined: the
    characters are matched one by one, so none spans two strings); none longer than the
    limit; the ids and types those of the test set, position by position. A file of 6,245
    rows: ~13 ms instead of ~47 ms."""
    if len(rows) != len(test_set):
        return None
    ids, qa_types, predictions = [], [], []
    objects = (strict_json.JsonObject, dict)
    for row in rows:
        if type(row) not in objects or row.keys() != _FIELD_SET or getattr(row, "duplicates", ()):
            return None
        ids.append(row["id"])
        qa_types.append(row["qa_type"])
        predictions.append(row["prediction"])
    try:
        joined = "".join(ids + qa_types + predictions)  # refuses anything but a string
    except TypeError:
        return None
    if strict_json.text_problem(joined) is not None:
        return None
    if max_prediction_chars is not None and max(map(len, predictions), default=0) > (
        max_prediction_chars
    ):
        return None
    samples = test_set.samples
    if ids != [sample.id for sample in samples] or qa_types != [
        sample.qa_type for sample in samples
    ]:
        return None
    return predictions


def _decode(source: bytes | str | Path | list[Any]) -> list[Any]:
    rows, _ = read_json(source, PredictionsError)
    if isinstance(rows, Rejected):
        raise PredictionsError([Problem(f"the file holds {rows.describe()}, not a list of rows")])
    if not isinstance(rows, list):
        hint = ""
        if isinstance(rows, dict):
            hint = " (a merged results file or an object keyed by sample is not accepted)"
        raise PredictionsError(
            [Problem(f"expected a JSON list of {{id, qa_type, prediction}} objects{hint}")]
        )
    return rows


def _check_row(
    index: int,
    row: Any,
    expected_id: str,
    expected_qa_type: str,
    *,
    max_prediction_chars: int | None = None,
) -> list[Problem]:
    """The row's problems, each key's once and in this order: a repeated key; per key, a
    refused character in the key, a NaN or Infinity anywhere in its value, a ground-truth or
    unknown key, a refused character in the text; a required field missing or not a string.
    Only a row with none of these is checked against the test set (length, id, qa_type)."""
    if isinstance(row, Rejected):
        return [
            Problem(f"expected an object {{id, qa_type, prediction}}, got {row.describe()}", index)
        ]
    if not isinstance(row, dict):
        return [Problem("expected an object {id, qa_type, prediction}", row=index)]
    problems = [
        Problem(
            "appears more than once in this row; JSON objects must not repeat a key",
            index,
            field_name(name),
        )
        for name in getattr(row, "duplicates", ())
    ]
    # A key that stands for a missing field is told with it, below.
    renamed = renamed_fields(row, required=REQUIRED_FIELDS, known=_KNOWN_FIELDS)
    for name, value in row.items():
        field = field_name(name)
        text = strict_json.text_problem(name)
        if text:
            problems.append(Problem(f"the key {text}", index, field))
            continue
        rejected = first_rejected(value)
        if rejected is not None and not rejected.is_number:
            problems.append(Problem(f"holds {rejected.describe()}", index, field))
        elif name in GROUND_TRUTH_FIELDS:
            problems.append(Problem(GROUND_TRUTH_MESSAGE, index, field))
        elif name not in REQUIRED_FIELDS:
            if name not in renamed.values():
                problems.append(Problem(UNKNOWN_FIELD_MESSAGE, index, field))
        elif isinstance(value, str) and (text := strict_json.text_problem(value)):
            problems.append(Problem(text, index, field))
    flagged = {problem.field for problem in problems}
    for name in REQUIRED_FIELDS:
        if name not in row:
            problems.append(Problem(missing_message(name, renamed), row=index, field=name))
        elif name not in flagged and not isinstance(row[name], str):
            problems.append(
                Problem(f"expected a string, got {_describe(row[name])}", row=index, field=name)
            )
    if problems:
        return problems
    prediction = row["prediction"]
    if max_prediction_chars is not None and len(prediction) > max_prediction_chars:
        problems.append(
            Problem(
                f"is {len(prediction):,} characters long; this benchmark accepts at most "
                f"{max_prediction_chars:,} characters per prediction",
                index,
                "prediction",
            )
        )
    if row["id"] != expected_id:
        problems.append(
            Problem(
                f"expected {expected_id!r} at this position, got {printable(row['id'])}",
                index,
                "id",
            )
        )
    if row["qa_type"] != expected_qa_type:
        problems.append(
            Problem(
                f"expected {expected_qa_type!r} at this position, got {printable(row['qa_type'])}",
                index,
                "qa_type",
            )
        )
    return problems


def _row_count_problem(rows: list[Any], test_set: TestSet) -> Problem:
    """A file with more or fewer rows than the test set: the first row whose id or qa_type is
    not the test set's at its position, and whether a row is missing or extra there."""
    samples = test_set.samples

    def row_fields(position: int) -> tuple[tuple[str, str | None], ...] | str:
        row = rows[position]
        if not isinstance(row, dict):
            return f"is {describe(row)}, not an object {{id, qa_type, prediction}}"
        return (("id", _quoted(row, "id")), ("qa_type", _quoted(row, "qa_type")))

    def test_set_fields(position: int) -> tuple[tuple[str, str], ...]:
        sample = samples[position]
        return (("id", printable(sample.id)), ("qa_type", printable(sample.qa_type)))

    return row_count_problem(
        [_key(row) for row in rows],
        [(sample.id, sample.qa_type) for sample in samples],
        head=(
            f"expected {len(samples):,} rows, one per test sample in test-set order, "
            f"got {len(rows):,}"
        ),
        row_fields=row_fields,
        test_set_fields=test_set_fields,
        noun="sample",
    )


def _quoted(row: dict[str, Any], name: str) -> str | None:
    """The row's `name` as a message quotes it; None when the row has no such key."""
    if name not in row:
        return None
    value = row[name]
    return printable(value) if isinstance(value, str) else describe(value)


def _key(row: Any) -> tuple[str, str] | None:
    """A row's (id, qa_type), which place it in the test set; None when either is not text."""
    if isinstance(row, dict) and isinstance(row.get("id"), str):
        qa_type = row.get("qa_type")
        return (row["id"], qa_type) if isinstance(qa_type, str) else None
    return None


def _is_reordered(rows: list[Any], test_set: TestSet) -> bool:
    submitted = Counter(_key(row) for row in rows)
    expected = Counter((sample.id, sample.qa_type) for sample in test_set.samples)
    return submitted == expected


def _describe(value: Any) -> str:
    if isinstance(value, Rejected):
        return value.describe()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        text = str(value)
        return f"a number ({text if len(text) <= 40 else f'{text[:40]}..., {len(text):,} digits'})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
