"""The demo clinical QA test set: a JSON list of questions, read strictly and checked row by row.

Two kinds of item (docs/clinicalqa.md, "Files"):

- `{"id", "category": "multiple_choice", "question", "options": {"A", "B", "C", "D"},
  "answer": "A" | "B" | "C" | "D"}`: scored by accuracy;
- `{"id", "category": "open_ended", "question", "reference"}`: rated pairwise, the reference
  answer shown to the judge only.

Every row is checked and every problem collected (row, field, what was expected) into one
`GroundTruthError`; nothing is half-loaded. An item may not carry the other kind's fields (an
open-ended item with options is a mistake, not metadata); keys outside both kinds are the
maintainers' metadata (a topic, a source) and are ignored.

Plain Python + numpy, no Django (tests/plugins/clinicalqa/test_boundary.py walks the AST).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark.scoring.errors import MAX_LISTED_PROBLEMS, GroundTruthError, Problem
from benchmark.scoring.json_file import describe, field_name, first_rejected, read_json
from benchmark.scoring.strict_json import Rejected, printable, text_problem

MULTIPLE_CHOICE = "multiple_choice"
OPEN_ENDED = "open_ended"
# The item categories, in the order of every listing.
CATEGORIES = (MULTIPLE_CHOICE, OPEN_ENDED)
LETTERS = ("A", "B", "C", "D")
# An id is what a predictions row names: short, printable, no spaces.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ID_RULE = "an id of 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or a digit"
COMMON_FIELDS = ("id", "category", "question")
FIELDS = {MULTIPLE_CHOICE: ("options", "answer"), OPEN_ENDED: ("reference",)}


@dataclass(frozen=True, slots=True)
class Item:
    """One question. A multiple-choice item has `options` (the texts of A-D, in that order)
    and `answer` (its letter); an open-ended one has `reference` (the judge's reference
    answer)."""

    index: int
    id: str
    category: str
    question: str
    options: tuple[str, str, str, str] | None = None
    answer: str | None = None
    reference: str | None = None

    @property
    def is_multiple_choice(self) -> bool:
        return self.category == MULTIPLE_CHOICE


@dataclass(frozen=True, eq=False)
class ClinicalQATestSet:
    """The items in file order. `checksum` is the sha256 of the file's bytes (of
    `canonical_json()` when built from a decoded list)."""

    __test__ = False  # not a pytest test class, despite the name

    items: tuple[Item, ...]
    checksum: str
    positions: Mapping[str, int] = field(default_factory=dict)  # id -> index

    def __len__(self) -> int:
        return len(self.items)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)

    def of_category(self, category: str) -> tuple[Item, ...]:
        """The items of `category`, in file order."""
        return tuple(item for item in self.items if item.category == category)

    def category_counts(self) -> dict[str, int]:
        """Items per category, for the categories present, in `CATEGORIES` order."""
        counts = {category: len(self.of_category(category)) for category in CATEGORIES}
        return {category: count for category, count in counts.items() if count}

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
    record: dict[str, Any] = {"id": item.id, "category": item.category, "question": item.question}
    if item.options is not None:
        record["options"] = dict(zip(LETTERS, item.options, strict=True))
        record["answer"] = item.answer
    else:
        record["reference"] = item.reference
    return record


def load_testset(source: bytes | str | Path | list[Any]) -> ClinicalQATestSet:
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
                    "expected a JSON list of {id, category, question, ...} objects, got "
                    f"{describe(rows)}"
                )
            ]
        )
    if not rows:
        raise GroundTruthError([Problem("the file holds no items")])
    items: list[Item] = []
    problems: list[Problem] = []
    total = 0
    first_row_of: dict[str, int] = {}
    for index, row in enumerate(rows):
        item, row_problems = _check_row(index, row)
        identifier = row.get("id") if isinstance(row, dict) else None
        if isinstance(identifier, str) and ID_PATTERN.fullmatch(identifier):
            if identifier in first_row_of:
                row_problems.append(
                    Problem(
                        f"repeats the id {identifier!r} of row {first_row_of[identifier]}; "
                        "every item needs its own id",
                        index,
                        "id",
                    )
                )
            else:
                first_row_of[identifier] = index
        if row_problems:
            total += len(row_problems)
            problems.extend(row_problems[: max(0, MAX_LISTED_PROBLEMS - len(problems))])
        elif item is not None:
            items.append(item)
    if total:
        raise GroundTruthError(problems, total=total)
    test_set = ClinicalQATestSet(
        items=tuple(items),
        checksum="",
        positions={item.id: item.index for item in items},
    )
    data = raw if raw is not None else test_set.canonical_json().encode("utf-8")
    object.__setattr__(test_set, "checksum", hashlib.sha256(data).hexdigest())
    return test_set


def _check_row(index: int, row: Any) -> tuple[Item | None, list[Problem]]:
    if isinstance(row, Rejected) or not isinstance(row, dict):
        return None, [
            Problem("expected an object {id, category, question, ...}, got " + describe(row), index)
        ]
    problems = [
        Problem(
            "appears more than once in this row; JSON objects must not repeat a key",
            index,
            field_name(name),
        )
        for name in getattr(row, "duplicates", ())
    ]
    for name in COMMON_FIELDS:
        if name not in row:
            problems.append(Problem("missing", index, name))
    identifier = row.get("id")
    if "id" in row and not (isinstance(identifier, str) and ID_PATTERN.fullmatch(identifier)):
        got = printable(identifier) if isinstance(identifier, str) else describe(identifier)
        problems.append(Problem(f"expected {ID_RULE}, got {got}", index, "id"))
    category = row.get("category")
    if "category" in row and category not in CATEGORIES:
        got = printable(category) if isinstance(category, str) else describe(category)
        problems.append(
            Problem(f"expected {MULTIPLE_CHOICE!r} or {OPEN_ENDED!r}, got {got}", index, "category")
        )
    if "question" in row and (problem := _text_problem(row["question"], "the question")):
        problems.append(Problem(problem, index, "question"))
    if category == MULTIPLE_CHOICE:
        problems.extend(_multiple_choice_problems(index, row))
    elif category == OPEN_ENDED:
        problems.extend(_open_ended_problems(index, row))
    if problems:
        return None, problems
    if category == MULTIPLE_CHOICE:
        options = row["options"]
        return Item(
            index=index,
            id=identifier,
            category=category,
            question=row["question"],
            options=tuple(options[letter] for letter in LETTERS),  # type: ignore[arg-type]
            answer=row["answer"],
        ), []
    return Item(
        index=index,
        id=identifier,
        category=category,
        question=row["question"],
        reference=row["reference"],
    ), []


def _text_problem(value: Any, what: str) -> str | None:
    """What is wrong with `value` as a non-blank text, or None."""
    rejected = first_rejected(value)
    if rejected is not None:
        return f"expected {what} as a string, it holds {rejected.describe()}"
    if not isinstance(value, str):
        return f"expected {what} as a string, got {describe(value)}"
    if not value.strip():
        return f"expected {what}, got a blank string"
    return text_problem(value)


def _misplaced(index: int, row: Mapping[str, Any], category: str) -> list[Problem]:
    other = OPEN_ENDED if category == MULTIPLE_CHOICE else MULTIPLE_CHOICE
    what = (
        "a multiple_choice item has options and an answer letter, no reference"
        if category == MULTIPLE_CHOICE
        else "an open_ended item has a reference answer, no options and no answer letter"
    )
    return [
        Problem(f"belongs to {other} items: {what}; remove it", index, name)
        for name in FIELDS[other]
        if name in row
    ]


def _multiple_choice_problems(index: int, row: Mapping[str, Any]) -> list[Problem]:
    problems = _misplaced(index, row, MULTIPLE_CHOICE)
    if "options" not in row:
        problems.append(
            Problem("missing (an object with the texts of A, B, C and D)", index, "options")
        )
    else:
        problems.extend(_options_problems(index, row["options"]))
    if "answer" not in row:
        problems.append(Problem("missing (the correct letter: A, B, C or D)", index, "answer"))
    else:
        answer = row["answer"]
        if answer not in LETTERS:
            got = printable(answer) if isinstance(answer, str) else describe(answer)
            problems.append(
                Problem(
                    f"expected the correct letter, one of A, B, C, D (capital), got {got}",
                    index,
                    "answer",
                )
            )
    return problems


def _options_problems(index: int, options: Any) -> list[Problem]:
    if isinstance(options, Rejected) or not isinstance(options, dict):
        return [
            Problem(
                'expected an object {"A": text, "B": text, "C": text, "D": text}, got '
                + describe(options),
                index,
                "options",
            )
        ]
    problems = [
        Problem(f"the letter {name!r} appears more than once", index, "options")
        for name in getattr(options, "duplicates", ())
    ]
    keys = list(options)
    if sorted(keys) != list(LETTERS):
        shown = ", ".join(printable(key, 10) for key in keys) or "none"
        problems.append(
            Problem(
                f"expected exactly the letters A, B, C and D as keys, got {shown}",
                index,
                "options",
            )
        )
    for letter in LETTERS:
        if letter in options and (problem := _text_problem(options[letter], "the option's text")):
            problems.append(Problem(f"option {letter}: {problem}", index, "options"))
    return problems


def _open_ended_problems(index: int, row: Mapping[str, Any]) -> list[Problem]:
    problems = _misplaced(index, row, OPEN_ENDED)
    if "reference" not in row:
        problems.append(
            Problem("missing (the reference answer the judge sees)", index, "reference")
        )
    elif problem := _text_problem(row["reference"], "the reference answer"):
        problems.append(Problem(problem, index, "reference"))
    return problems
