"""Scoring a checked predictions file: IoU per item, then per task and overall (issue 14, 2).

Per task: `n`, the mean `IoU` and `ACC@0.3`, `ACC@0.5`, `ACC@0.7`, the share of items with
IoU >= t (inclusive, as the official `compute_iou` counts). Overall, `metrics` is the
unweighted mean over the tasks present in the test set (the paper's "average" column over its
eight tasks) and `item_weighted` the mean over all items; both are fractions, never
percentages. A prediction with no box is unparsed: IoU 0, counted in the format report.

One aggregation serves the published numbers and the bootstrap (issue 12): the per-item IoU
and task of every item are kept in `MedSGContributions`, whose `aggregate` reduces them under a
(B, n) batch of integer weights, and the published result is `aggregate` under the all-ones
row. So the identity replicate equals the published value bit for bit. The discipline is that
of plugins/medvidbench/scoring/contributions.py: each task's IoU sum is one `np.add.reduce` over a
contiguous 1-D row (row by row, never over the 2-D batch, so a replicate's bits do not depend
on the other rows or on B); counts and hits are exact int64 sums; a ratio of two integers is
one correctly rounded division; sums over tasks are left-to-right float64 additions in `TASKS`
order, whatever the order of the items in the file. A task with no weight leaves the
unweighted mean (as on a test set without it); NaN means nothing was counted.

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmark.scoring.weights import as_weights, row_sums

from .boxes import BOX_CONVENTIONS, iou_array, parse_box, to_pixels_array, unknown_convention
from .predictions import Prediction
from .testset import TASKS, MedSGTestSet

IOU = "IoU"
THRESHOLDS = (("ACC@0.3", 0.3), ("ACC@0.5", 0.5), ("ACC@0.7", 0.7))
# The four numbers of every summary, in the order `as_json` writes them.
SUMMARY_KEYS = (IOU, *(name for name, _ in THRESHOLDS))
ITEMS_SUFFIX = "_items"
# The board's metric keys (`flat_metrics`, and the columns of `MedSGContributions.compute`).
FLAT_METRIC_KEYS = (
    "IoU",
    "ACC@0.5",
    "ACC@0.3",
    "ACC@0.7",
    "IoU_items",
    "ACC@0.5_items",
    *(key for task in TASKS for key in (f"IoU_{task}", f"ACC@0.5_{task}")),
)
MAX_UNPARSED_EXAMPLES = 5
EXAMPLE_CHARS = 80


@dataclass(frozen=True)
class FormatReport:
    """How the predictions read: boxes found, answers with none, boxes with no area.

    It never shows a reference box. `unparsed_examples` are (0-based index, the answer's
    first 80 characters) of the first few unparsed answers."""

    parsed: int
    unparsed: int
    degenerate: int
    unparsed_by_task: Mapping[str, int]
    unparsed_examples: tuple[tuple[int, str], ...]

    def as_json(self) -> dict:
        return {
            "parsed": self.parsed,
            "unparsed": self.unparsed,
            "degenerate": self.degenerate,
            "unparsed_by_task": dict(self.unparsed_by_task),
            "unparsed_examples": [
                {"index": index, "text": text} for index, text in self.unparsed_examples
            ],
        }


@dataclass(frozen=True)
class MedSGResult:
    """A scored file: `metrics` (unweighted over tasks), `item_weighted` and `per_task` (the
    tasks present, in `TASKS` order), fractions at full float precision."""

    box_format: str
    metrics: Mapping[str, float]
    item_weighted: Mapping[str, float]
    per_task: Mapping[str, Mapping[str, float | int]]
    format_report: FormatReport

    def as_json(self) -> dict:
        """Exactly what the CLI prints (issue 14's contract): metrics, item_weighted, per_task."""
        return {
            "metrics": {key: self.metrics[key] for key in SUMMARY_KEYS},
            "item_weighted": {key: self.item_weighted[key] for key in SUMMARY_KEYS},
            "per_task": {
                task: {"n": scores["n"], **{key: scores[key] for key in SUMMARY_KEYS}}
                for task, scores in self.per_task.items()
            },
        }

    def flat_metrics(self) -> dict[str, float]:
        """The board's metrics by key (`FLAT_METRIC_KEYS` order); a task absent from the test
        set has no keys."""
        values = {
            "IoU": self.metrics[IOU],
            "ACC@0.5": self.metrics["ACC@0.5"],
            "ACC@0.3": self.metrics["ACC@0.3"],
            "ACC@0.7": self.metrics["ACC@0.7"],
            "IoU_items": self.item_weighted[IOU],
            "ACC@0.5_items": self.item_weighted["ACC@0.5"],
        }
        for task, scores in self.per_task.items():
            values[f"IoU_{task}"] = scores[IOU]
            values[f"ACC@0.5_{task}"] = scores["ACC@0.5"]
        return {key: values[key] for key in FLAT_METRIC_KEYS if key in values}


def score(
    test_set: MedSGTestSet, predictions: Sequence[Prediction], box_format: str
) -> MedSGResult:
    """The result of checked `predictions` (from `load_predictions`) in `box_format`."""
    return score_with_contributions(test_set, predictions, box_format)[0]


def score_with_contributions(
    test_set: MedSGTestSet, predictions: Sequence[Prediction], box_format: str
) -> tuple[MedSGResult, MedSGContributions]:
    """The result and the per-item contributions it was aggregated from (private: they hold
    each item's IoU, so they are stored beside the result, never shown)."""
    if box_format not in BOX_CONVENTIONS:
        raise ValueError(unknown_convention(box_format))
    if len(predictions) != len(test_set):
        raise ValueError(f"{len(predictions)} predictions for {len(test_set)} test items")
    count = len(test_set)
    boxes = np.zeros((count, 4), dtype=np.float64)
    parsed = np.zeros(count, dtype=bool)
    for index, prediction in enumerate(predictions):
        box = parse_box(prediction)
        if box is not None:
            boxes[index] = box
            parsed[index] = True
    pixels = to_pixels_array(boxes, box_format, test_set.sizes)
    with np.errstate(invalid="ignore", over="ignore"):
        has_area = (pixels[:, 2] > pixels[:, 0]) & (pixels[:, 3] > pixels[:, 1])
    ious = iou_array(pixels, test_set.references)
    ious[~parsed] = 0.0  # spec: an unparsed answer is the box [0, 0, 0, 0], IoU 0
    contributions = MedSGContributions(test_set.task_codes.copy(), ious)
    report = _format_report(test_set, predictions, parsed, has_area)
    return contributions.published(box_format, report), contributions


def _format_report(
    test_set: MedSGTestSet,
    predictions: Sequence[Prediction],
    parsed: np.ndarray,
    has_area: np.ndarray,
) -> FormatReport:
    unparsed_rows = np.flatnonzero(~parsed)
    codes = test_set.task_codes
    by_task = np.bincount(codes[unparsed_rows], minlength=len(TASKS))
    present = np.bincount(codes, minlength=len(TASKS)) > 0
    examples = tuple(
        (int(row), str(predictions[row])[:EXAMPLE_CHARS])
        for row in unparsed_rows[:MAX_UNPARSED_EXAMPLES]
    )
    return FormatReport(
        parsed=int(parsed.sum()),
        unparsed=len(unparsed_rows),
        degenerate=int((parsed & ~has_area).sum()),
        unparsed_by_task={
            task: int(by_task[code]) for code, task in enumerate(TASKS) if present[code]
        },
        unparsed_examples=examples,
    )


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator in float64, NaN where the denominator is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        result = numerator / denominator
    result = np.asarray(result, dtype=np.float64)
    result[denominator == 0] = np.nan
    return result


@dataclass(frozen=True, eq=False)
class MedSGContributions:
    """Each item's task code (int64, indexes `TASKS`) and IoU (float64), in test-set order:
    everything the metrics reduce, and nothing else (no boxes, no answers)."""

    task_codes: np.ndarray
    ious: np.ndarray
    _task_rows: tuple[np.ndarray, ...] = field(init=False, repr=False)
    _task_ious: tuple[np.ndarray, ...] = field(init=False, repr=False)
    _task_hit_rows: tuple[tuple[np.ndarray, ...], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        codes = np.ascontiguousarray(self.task_codes, dtype=np.int64).reshape(-1)
        ious = np.ascontiguousarray(self.ious, dtype=np.float64).reshape(-1)
        if len(codes) != len(ious):
            raise ValueError(f"{len(codes)} task codes for {len(ious)} IoU values")
        if len(codes) and (codes.min() < 0 or codes.max() >= len(TASKS)):
            raise ValueError(f"task codes must be between 0 and {len(TASKS) - 1}")
        if not np.isfinite(ious).all() or (ious < 0).any() or (ious > 1).any():
            raise ValueError("IoU values must be finite numbers between 0 and 1")
        codes.setflags(write=False)
        ious.setflags(write=False)
        rows = tuple(np.flatnonzero(codes == code) for code in range(len(TASKS)))
        # Each task's IoUs in test-set order, contiguous: the row the published sum reduces.
        task_ious = tuple(np.ascontiguousarray(ious[mine]) for mine in rows)
        hit_rows = tuple(
            tuple(mine[values >= threshold] for _, threshold in THRESHOLDS)
            for mine, values in zip(rows, task_ious, strict=True)
        )
        object.__setattr__(self, "task_codes", codes)
        object.__setattr__(self, "ious", ious)
        object.__setattr__(self, "_task_rows", rows)
        object.__setattr__(self, "_task_ious", task_ious)
        object.__setattr__(self, "_task_hit_rows", hit_rows)

    @property
    def n_items(self) -> int:
        return len(self.ious)

    def aggregate(self, weights: np.ndarray | Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
        """Every value under each row of `weights` ((B, n) or one (n,) vector), as (B,)
        arrays: `SUMMARY_KEYS` (unweighted over tasks), the same with `_items`, and per task
        present in the test set `<key>_<task>` plus `n_<task>` (int64)."""
        batch = as_weights(weights, self.n_items)
        size = batch.shape[0]
        task_total = {key: np.zeros(size, dtype=np.float64) for key in SUMMARY_KEYS}
        tasks_counted = np.zeros(size, dtype=np.int64)
        items_iou_sum = np.zeros(size, dtype=np.float64)
        items_hits = {name: np.zeros(size, dtype=np.int64) for name, _ in THRESHOLDS}
        items_count = np.zeros(size, dtype=np.int64)
        result: dict[str, np.ndarray] = {}
        for code, task in enumerate(TASKS):
            rows = self._task_rows[code]
            if not len(rows):
                continue  # not in this test set: no value at all
            taken = batch[:, rows]
            count = taken.sum(axis=1)
            iou_sum = row_sums(np.ascontiguousarray(taken * self._task_ious[code]))
            present = count > 0
            values = {IOU: _ratio(iou_sum, count)}
            for (name, _), hit_rows in zip(THRESHOLDS, self._task_hit_rows[code], strict=True):
                hits = batch[:, hit_rows].sum(axis=1)
                values[name] = _ratio(hits, count)
                items_hits[name] += hits
            for key in SUMMARY_KEYS:
                result[f"{key}_{task}"] = values[key]
                # Left to right in TASKS order; a task with no weight is skipped, not added.
                task_total[key] = np.where(present, task_total[key] + values[key], task_total[key])
            result[f"n_{task}"] = count
            tasks_counted += present
            items_iou_sum = np.where(present, items_iou_sum + iou_sum, items_iou_sum)
            items_count += count
        for key in SUMMARY_KEYS:
            result[key] = _ratio(task_total[key], tasks_counted)
        result[IOU + ITEMS_SUFFIX] = _ratio(items_iou_sum, items_count)
        for name, _ in THRESHOLDS:
            result[name + ITEMS_SUFFIX] = _ratio(items_hits[name], items_count)
        return result

    def metric_values(self, weights: np.ndarray | Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
        """`{key: (B,) float64}` for every `FLAT_METRIC_KEYS` key; NaN for a task absent from
        the test set or with no weight in that replicate."""
        values = self.aggregate(weights)
        size = len(values[IOU])
        return {key: values.get(key, np.full(size, np.nan)) for key in FLAT_METRIC_KEYS}

    def compute(self, weights: np.ndarray | Sequence[Sequence[int]]) -> np.ndarray:
        """(B, len(FLAT_METRIC_KEYS)) float64: the board's metrics under each replicate, in
        `FLAT_METRIC_KEYS` column order."""
        values = self.metric_values(weights)
        return np.ascontiguousarray(np.stack([values[key] for key in FLAT_METRIC_KEYS], axis=1))

    def published(self, box_format: str, report: FormatReport) -> MedSGResult:
        """The result under the all-ones replicate: what is published."""
        values = self.aggregate(np.ones((1, self.n_items), dtype=np.int64))
        per_task = {}
        for task in TASKS:
            if f"n_{task}" in values:
                per_task[task] = {
                    "n": int(values[f"n_{task}"][0]),
                    **{key: float(values[f"{key}_{task}"][0]) for key in SUMMARY_KEYS},
                }
        return MedSGResult(
            box_format=box_format,
            metrics={key: float(values[key][0]) for key in SUMMARY_KEYS},
            item_weighted={key: float(values[key + ITEMS_SUFFIX][0]) for key in SUMMARY_KEYS},
            per_task=per_task,
            format_report=report,
        )

    # Stored beside the result (issue 12 point 1): an .npz of plain arrays, read back with
    # allow_pickle=False, so a stored file can hold nothing but numbers.
    _FORMAT = 1

    def to_bytes(self) -> bytes:
        header = {"format": self._FORMAT, "kind": "medsg", "tasks": list(TASKS)}
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            header=np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8),
            task_codes=self.task_codes,
            ious=self.ious,
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> MedSGContributions:
        """What `to_bytes` stored; ValueError for anything else."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                header = json.loads(archive["header"].tobytes().decode("utf-8"))
                if header.get("format") != cls._FORMAT or header.get("kind") != "medsg":
                    raise ValueError(f"unknown contributions format {header!r}")
                if header.get("tasks") != list(TASKS):
                    raise ValueError("stored with another list of tasks")
                codes, ious = archive["task_codes"], archive["ious"]
                if codes.dtype != np.int64 or ious.dtype != np.float64:
                    raise ValueError(f"unexpected dtypes {codes.dtype}, {ious.dtype}")
                return cls(codes, ious)
        except (OSError, EOFError, KeyError, TypeError, ValueError, zipfile.BadZipFile) as error:
            raise ValueError(f"not stored MedSG-Bench contributions: {error}") from None
