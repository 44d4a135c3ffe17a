"""MedSG-Bench's plugin (benchmark/plugins.py): the pure scoring core behind the protocol.

Registered in pyproject.toml as the entry point `medsg-bench` of `podium.benchmarks`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmark.plugins import SubmissionOption, TestSetCounts

from . import scoring
from .definition import MEDSG
from .scoring import FLAT_METRIC_KEYS, TASKS, MedSGContributions, MedSGResult, MedSGTestSet

SCORER_VERSION = "medsg-1"
BOX_FORMAT = "box_format"
BOX_FORMATS = (
    ("pixel", "pixel: absolute pixels in the item's image space (336x336, or its size)"),
    ("norm1000", "norm1000: [x1, y1, x2, y2] on a 0-1000 scale"),
    ("unit", "unit: [x1, y1, x2, y2] as fractions from 0 to 1"),
    ("yxyx_norm1000", "yxyx_norm1000: Gemini's [y_min, x_min, y_max, x_max] on 0-1000"),
)
assert tuple(value for value, _ in BOX_FORMATS) == scoring.BOX_CONVENTIONS


@dataclass(frozen=True)
class Scored:
    """A scored MedSG-Bench file in the platform's result shape (`ScoredResult`): the board's
    metrics by key, and on the run the per-task breakdown, the format report and the summary
    the CLI prints."""

    result: MedSGResult
    test_set_checksum: str
    tasks: tuple[str, ...]  # each item's task, in test-set order
    scorer_version: str = SCORER_VERSION

    @property
    def records(self) -> int:
        return len(self.tasks)

    @property
    def metrics(self) -> dict[str, float | None]:
        """Every board metric key; None for a task absent from the test set."""
        flat = self.result.flat_metrics()
        return {key: flat.get(key) for key in FLAT_METRIC_KEYS}

    def to_dict(self) -> dict[str, Any]:
        report = self.result.format_report
        per_task = self.result.per_task
        totals = {task: int(scores["n"]) for task, scores in per_task.items()}
        examples: dict[str, list[dict[str, Any]]] = {}
        for index, text in report.unparsed_examples:
            examples.setdefault(self.tasks[index], []).append(
                {"row": index, "id": str(index), "prediction": text}
            )
        metrics = self.metrics
        return {
            "scorer_version": self.scorer_version,
            "test_set_checksum": self.test_set_checksum,
            "records": self.records,
            "metrics": metrics,
            # The pages' breakdown table: metric -> {task: value}.
            "per_dataset": {
                key: {task: scores[key] for task, scores in per_task.items()}
                for key in ("IoU", "ACC@0.5")
            },
            "counts": {
                key: {"scored": self.records, "total": self.records}
                for key, value in metrics.items()
                if value is not None
            },
            "parsed": {
                task: {
                    "parsed": totals[task] - int(report.unparsed_by_task.get(task, 0)),
                    "total": totals[task],
                }
                for task in totals
            },
            "unparsed_examples": examples,
            "box_format": self.result.box_format,
            "format_report": report.as_json(),
            "summary": self.result.as_json(),
        }


class MedSGPlugin:
    key = "medsg-bench"
    definition = MEDSG
    scorer_version = SCORER_VERSION
    breakdown_label = "task"
    submission_options = (
        SubmissionOption(
            key=BOX_FORMAT,
            label="Box convention",
            help_text=(
                "How your boxes are written. Podium converts them to the item's pixels; it "
                "never guesses from the numbers."
            ),
            choices=BOX_FORMATS,
        ),
    )

    def read_test_set(self, data: bytes) -> MedSGTestSet:
        return scoring.load_testset(data)

    def test_set_counts(self, test_set: MedSGTestSet) -> TestSetCounts:
        counts = test_set.task_counts()
        return TestSetCounts(records=len(test_set), task_counts=counts, dataset_counts=counts)

    def check_predictions(
        self,
        data: bytes,
        test_set: MedSGTestSet,
        *,
        options: Mapping[str, str],
        max_prediction_chars: int | None,
    ) -> tuple[scoring.predictions.Prediction, ...]:
        return scoring.load_predictions(data, test_set, max_prediction_chars=max_prediction_chars)

    def score(
        self, test_set: MedSGTestSet, predictions: Sequence[Any], *, options: Mapping[str, str]
    ) -> tuple[Scored, MedSGContributions]:
        result, contributions = scoring.score_with_contributions(
            test_set, predictions, options[BOX_FORMAT]
        )
        return Scored(result, test_set.checksum, test_set.tasks), _Contributions(contributions)

    def replicate_clusters(self, test_set: MedSGTestSet) -> Sequence[int]:
        # Items are drawn one by one: the spec names no grouping of items (a study, a patient).
        return list(range(len(test_set)))

    def contributions_from_bytes(self, data: bytes) -> MedSGContributions:
        return _Contributions(MedSGContributions.from_bytes(data))

    def cli_report(self, result: Scored) -> dict[str, Any]:
        return result.result.as_json()


class _Contributions:
    """MedSGContributions under the platform's `Contributions` protocol."""

    def __init__(self, inner: MedSGContributions) -> None:
        self.inner = inner

    def replicate_values(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        return self.inner.metric_values(weights)

    def to_bytes(self) -> bytes:
        return self.inner.to_bytes()


plugin = MedSGPlugin()

__all__ = ["BOX_FORMAT", "BOX_FORMATS", "TASKS", "MedSGPlugin", "Scored", "plugin"]
