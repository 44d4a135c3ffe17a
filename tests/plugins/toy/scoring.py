"""The toy benchmark's scoring core: reading a test set, checking a predictions file row by
row, and accuracy overall, per class and macro-averaged.

A test set is a JSON list of `{"label": <class>}`, one per item; a predictions file is a JSON
list in test-set order of `{"row": i, "label": <class>}`. Every class is one of `CLASSES`.

One aggregation serves the published numbers and the bootstrap (docs/statistics.md): each
item's class code and whether it was answered right are kept in `ToyContributions`, whose
`aggregate` reduces them under a (B, n) batch of integer weights; the published result is
`aggregate` under the all-ones row, so the identity replicate equals it bit for bit. Only exact
int64 sums, one correctly rounded division per ratio and left-to-right float64 additions in
`CLASSES` order are used, so no value depends on the CPU, B or the order of the items.

Plain Python + numpy, no Django (tests/plugins/toy/test_toy_plugin.py walks the AST).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmark.scoring.errors import GroundTruthError, PredictionsError, Problem

CLASSES = ("bird", "cat", "dog")
LABEL_CASES = ("exact", "casefold")
METRIC_KEYS = ("accuracy", "macro_accuracy", *(f"accuracy_{name}" for name in CLASSES))
ROW_FIELDS = ("row", "label")


@dataclass(frozen=True)
class ToyTestSet:
    labels: tuple[str, ...]
    checksum: str

    def __len__(self) -> int:
        return len(self.labels)

    def class_counts(self) -> dict[str, int]:
        return {name: self.labels.count(name) for name in CLASSES if name in self.labels}


def _read_json(data: bytes, error: type[GroundTruthError | PredictionsError]) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as problem:
        raise error(
            [Problem(f"not UTF-8 text: {problem.reason} at byte {problem.start}")]
        ) from None
    except json.JSONDecodeError as problem:
        raise error(
            [
                Problem(
                    f"not valid JSON: {problem.msg} (line {problem.lineno}, column {problem.colno})"
                )
            ]
        ) from None


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {json.dumps(value)[:40]}"


def read_test_set(data: bytes) -> ToyTestSet:
    """The test set, or GroundTruthError naming every bad row and field."""
    rows = _read_json(data, GroundTruthError)
    if not isinstance(rows, list) or not rows:
        raise GroundTruthError([Problem("expected a non-empty JSON list of {label} objects")])
    problems = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            problems.append(Problem(f"expected an object, got {_shown(row)}", row=index))
            continue
        problems += [
            Problem("unknown field; a row holds label only", row=index, field=key)
            for key in row
            if key != "label"
        ]
        if row.get("label") not in CLASSES:
            problems.append(
                Problem(
                    f"expected one of {', '.join(CLASSES)}, got {_shown(row.get('label'))}",
                    row=index,
                    field="label",
                )
            )
    if problems:
        raise GroundTruthError(problems)
    return ToyTestSet(tuple(row["label"] for row in rows), hashlib.sha256(data).hexdigest())


def canonical_label(label: str, label_case: str) -> str | None:
    """The class `label` names under the `label_case` rule, or None."""
    if label_case == "casefold":
        return next((name for name in CLASSES if name.casefold() == label.casefold()), None)
    return label if label in CLASSES else None


def check_predictions(data: bytes, test_set: ToyTestSet, *, label_case: str) -> tuple[str, ...]:
    """Each item's predicted class in test-set order, or PredictionsError with every problem:
    the row's position, its fields, and a label that is no class under `label_case`."""
    if label_case not in LABEL_CASES:
        raise ValueError(f"label_case is one of {', '.join(LABEL_CASES)}, not {label_case!r}")
    rows = _read_json(data, PredictionsError)
    if not isinstance(rows, list):
        raise PredictionsError(
            [Problem(f"expected a JSON list of {{row, label}} objects, got {_shown(rows)}")]
        )
    if len(rows) != len(test_set):
        raise PredictionsError(
            [Problem(f"expected {len(test_set)} rows, one per test item in order, got {len(rows)}")]
        )
    problems = []
    labels = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            problems.append(
                Problem(f"expected a {{row, label}} object, got {_shown(row)}", row=index)
            )
            continue
        problems += [
            Problem("unknown field; a row holds exactly row and label", row=index, field=key)
            for key in row
            if key not in ROW_FIELDS
        ]
        position = row.get("row")
        if type(position) is not int or position != index:
            problems.append(
                Problem(
                    f"expected {index} (the row's position), got {_shown(position)}",
                    row=index,
                    field="row",
                )
            )
        label = row.get("label")
        name = canonical_label(label, label_case) if isinstance(label, str) else None
        if name is None:
            rule = "ignoring case" if label_case == "casefold" else "exactly as written"
            problems.append(
                Problem(
                    f"expected one of {', '.join(CLASSES)} ({rule}), got {_shown(label)}",
                    row=index,
                    field="label",
                )
            )
        labels.append(name)
    if problems:
        raise PredictionsError(problems)
    return tuple(labels)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator (exact integers) in float64, NaN where nothing was counted."""
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.asarray(numerator / denominator, dtype=np.float64)
    result[denominator == 0] = np.nan
    return result


@dataclass(frozen=True, eq=False)
class ToyContributions:
    """Each item's class code (indexes `CLASSES`) and 1 if it was answered right, else 0, both
    int64 in test-set order: everything the metrics reduce."""

    codes: np.ndarray
    correct: np.ndarray

    def aggregate(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Every `METRIC_KEYS` value under each row of a (B, n) int64 batch, as (B,) arrays."""
        batch = np.ascontiguousarray(weights, dtype=np.int64)
        if batch.ndim != 2 or batch.shape[1] != len(self.codes) or (batch < 0).any():
            raise ValueError(f"weights must be a (B, {len(self.codes)}) batch of counts")
        hits = batch * self.correct  # exact: integers
        values = {"accuracy": _ratio(hits.sum(axis=1), batch.sum(axis=1))}
        total = np.zeros(batch.shape[0], dtype=np.float64)
        counted = np.zeros(batch.shape[0], dtype=np.int64)
        for code, name in enumerate(CLASSES):
            mine = self.codes == code
            value = _ratio(hits[:, mine].sum(axis=1), batch[:, mine].sum(axis=1))
            values[f"accuracy_{name}"] = value
            present = ~np.isnan(value)
            # Left to right in CLASSES order; a class with no weight is left out.
            total = np.where(present, total + np.nan_to_num(value), total)
            counted += present
        values["macro_accuracy"] = _ratio(total, counted)
        return {key: values[key] for key in METRIC_KEYS}

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, codes=self.codes, correct=self.correct)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> ToyContributions:
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                return cls(archive["codes"].astype(np.int64), archive["correct"].astype(np.int64))
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
            raise ValueError(f"not stored toy contributions: {error}") from None


@dataclass(frozen=True)
class ToyResult:
    metrics: Mapping[str, float | None]
    class_counts: Mapping[str, int]
    label_case: str


def score(
    test_set: ToyTestSet, predictions: Sequence[str], *, label_case: str
) -> tuple[ToyResult, ToyContributions]:
    """The published metrics (the all-ones replicate) and the per-item contributions."""
    if len(predictions) != len(test_set):
        raise ValueError(f"{len(predictions)} predictions for {len(test_set)} test items")
    codes = np.array([CLASSES.index(label) for label in test_set.labels], dtype=np.int64)
    correct = np.array(
        [int(p == t) for p, t in zip(predictions, test_set.labels, strict=True)], dtype=np.int64
    )
    contributions = ToyContributions(codes, correct)
    values = contributions.aggregate(np.ones((1, len(codes)), dtype=np.int64))
    metrics = {
        key: None if np.isnan(values[key][0]) else float(values[key][0]) for key in METRIC_KEYS
    }
    return ToyResult(metrics, test_set.class_counts(), label_case), contributions
