"""MedSG-Bench's plugin (benchmark/plugins.py): the pure scoring core behind the protocol.

Registered in pyproject.toml as the entry point `medsg-bench` of `podium.benchmarks`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.plugins import (
    DemoEntry,
    DemoFiles,
    FileGuide,
    PublishedRow,
    SubmissionOption,
    TestSetCounts,
)

from . import scoring
from .definition import MEDSG
from .rerun import rerun as medsg_rerun
from .scoring import FLAT_METRIC_KEYS, TASKS, MedSGContributions, MedSGResult, MedSGTestSet

SCORER_VERSION = "medsg-1"
# The paper's Table 3 (spec/medsg.md), imported as the board's baselines.
PUBLISHED_PATH = Path(__file__).resolve().parent / "data" / "published.json"
BOX_FORMAT = "box_format"
ZERO_SHOT = "zero_shot"
DECLARED = "declared"
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
            # What each value is over: every item for the averages, a task's items for its
            # own column (IoU_<task>).
            "counts": {
                key: {"scored": count, "total": count}
                for key, value in metrics.items()
                if value is not None
                for count in [totals.get(key.removeprefix("IoU_"), self.records)]
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
    judge_step = False
    judge = None
    rerun = medsg_rerun
    pairwise = None
    breakdown_label = "task"
    # The pages' words (benchmark.plugins.wording_for): an "item" of the test set, and the
    # bootstrap draws items one by one (replicate_clusters), not a video at a time.
    item_label = "item"
    cluster_label = ""
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
        SubmissionOption(
            key=ZERO_SHOT,
            label="Zero-shot protocol",
            help_text=(
                "MedSG-Bench is evaluated zero-shot: no in-context examples in the prompts, no "
                "fine-tuning on the benchmark's items."
            ),
            choices=(
                (
                    DECLARED,
                    "I declare these predictions were made zero-shot: no in-context examples "
                    "and no fine-tuning on MedSG-Bench.",
                ),
            ),
            kind="declaration",
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

    def row_label(self, test_set: MedSGTestSet, row: int) -> str:
        return f"task {test_set.items[row].task!r}" if 0 <= row < len(test_set) else ""

    def template_rows(self, test_set: MedSGTestSet) -> Iterator[dict[str, Any]]:
        for item in test_set.items:
            yield {"index": item.index, "task": item.task, "prediction": ""}

    def file_guide(self, counts: Mapping[str, Any]) -> FileGuide:
        # In the benchmark's task order (a JSON store may reorder the stored keys).
        tasks = {
            task: counts["task_counts"][task] for task in TASKS if task in counts["task_counts"]
        }
        return FileGuide(
            paragraphs=(
                "One JSON list in UTF-8, one object per test item, each with exactly index "
                "(the item's position, from 0), task (the item's task key) and prediction: "
                "your model's answer as text, or a box as a list of 4 numbers [x1, y1, x2, y2].",
                "From a text, the box is the first run of four numbers separated only by "
                "whitespace, commas, parentheses or square brackets, so (x1,y1),(x2,y2), "
                '[x1, y1, x2, y2], <box>x1 y1 x2 y2</box> and "box_2d": [a, b, c, d] read '
                "alike; of several boxes only the first counts; an answer without a box scores "
                "IoU 0 and is counted in your file's format report.",
                "Declare the box convention on the form (pixel, norm1000, unit or "
                "yxyx_norm1000): Podium converts every box to the item's pixels (336x336, or "
                "the item's own size) and never guesses from the numbers.",
            ),
            matching=(
                "By position: row 1 of your file is scored against item 1 of the test set, "
                "and so on, in the test set's order; each row's index and task must equal the "
                "test set's at that position. A file in another order is refused."
            ),
            matching_short=(
                "Rows are matched to the test set by position, so keep its order (do not group "
                "rows by task)."
            ),
            template_note=(
                f"every index and task of the {counts['records']:,} items in order, each "
                "prediction empty for you to fill in."
            ),
            table_caption="The tasks",
            table_headings=("task", "Items"),
            table_rows=tuple((task, f"{count:,}") for task, count in tasks.items()),
            sources_heading="From the items of task",
            sources={"overall": tuple(tasks), **{task: (task,) for task in tasks}},
        )

    def write_demo(self, folder: Path, *, force: bool = False) -> DemoFiles:
        """The demo (`demo.write_demo`): small files, written every time (the same bytes)."""
        # Imported here: only a development machine's demo writes it, and every process that
        # loads the plugins (`manage.py score` among them) would import it (issue 16).
        from . import demo

        paths = demo.write_demo(folder)
        entries = (
            DemoEntry(
                "GroundDemo-7B (synthetic)",
                "Podium demo data",
                paths["pixel"],
                options={BOX_FORMAT: "pixel", ZERO_SHOT: DECLARED},
            ),
            DemoEntry(
                "BoxChat (synthetic, 0-1000)",
                "Podium demo data",
                paths["norm1000"],
                options={BOX_FORMAT: "norm1000", ZERO_SHOT: DECLARED},
            ),
            DemoEntry(
                "GemLike (synthetic, y-x order)",
                "Podium demo data",
                paths["yxyx_norm1000"],
                options={BOX_FORMAT: "yxyx_norm1000", ZERO_SHOT: DECLARED},
            ),
        )
        shown = {entry.predictions for entry in entries}
        playback = tuple(
            path
            for name, path in paths.items()
            if name not in ("testset", "images") and path not in shown
        )
        return DemoFiles(test_set=paths["testset"], entries=entries, playback=playback)

    def published_rows(self) -> tuple[PublishedRow, ...]:
        data = json.loads(PUBLISHED_PATH.read_text(encoding="utf-8"))
        published_on = date.fromisoformat(data["published_on"])
        return tuple(
            PublishedRow(
                model_name=row["model_name"],
                # Percentages as printed, to fractions exactly: 72.55 -> 0.7255.
                values={key: float(Decimal(value) / 100) for key, value in row["percent"].items()},
                published_on=published_on,
            )
            for row in data["rows"]
        )


class _Contributions:
    """MedSGContributions under the platform's `Contributions` protocol."""

    def __init__(self, inner: MedSGContributions) -> None:
        self.inner = inner

    def replicate_values(
        self, weights: np.ndarray, keys: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        values = self.inner.metric_values(weights)
        return values if keys is None else {key: values[key] for key in keys}

    def to_bytes(self) -> bytes:
        return self.inner.to_bytes()


plugin = MedSGPlugin()

__all__ = ["BOX_FORMAT", "BOX_FORMATS", "TASKS", "MedSGPlugin", "Scored", "plugin"]
