"""The toy benchmark's plugin (benchmark/plugins.py: `BenchmarkPlugin`): the scoring core in
`scoring.py` behind the protocol. A package would register it as an entry point of
`podium.benchmarks`; the tests add it with `benchmark.plugins.registered(plugin)`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.plugins import FileGuide, PublishedRow, SubmissionOption, TestSetCounts

from . import scoring
from .definition import TOY

SCORER_VERSION = "toy-1"
LABEL_CASE = "label_case"


@dataclass(frozen=True)
class Scored:
    """A scored file in the platform's result shape (`ScoredResult`)."""

    result: scoring.ToyResult
    test_set_checksum: str
    scorer_version: str = SCORER_VERSION

    @property
    def metrics(self) -> Mapping[str, float | None]:
        return self.result.metrics

    def to_dict(self) -> dict[str, Any]:
        records = sum(self.result.class_counts.values())
        return {
            "scorer_version": self.scorer_version,
            "test_set_checksum": self.test_set_checksum,
            "records": records,
            "metrics": dict(self.metrics),
            # The pages' breakdown table: metric -> {class: value}.
            "per_dataset": {
                "accuracy": {
                    name: self.metrics[f"accuracy_{name}"] for name in self.result.class_counts
                }
            },
            "counts": {
                key: {"scored": records, "total": records}
                for key, value in self.metrics.items()
                if value is not None
            },
            "label_case": self.result.label_case,
        }


class Contributions:
    """`ToyContributions` under the platform's `Contributions` protocol."""

    def __init__(self, inner: scoring.ToyContributions) -> None:
        self.inner = inner

    def replicate_values(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        return self.inner.aggregate(weights)

    def to_bytes(self) -> bytes:
        return self.inner.to_bytes()


class ToyPlugin:
    key = "toy-classification"
    definition = TOY
    scorer_version = SCORER_VERSION
    breakdown_label = "class"
    judge_step = False
    judge = None
    rerun = None
    pairwise = None
    submission_options = (
        SubmissionOption(
            key=LABEL_CASE,
            label="Label case",
            help_text="Whether your labels must be written as the classes are, or in any case.",
            choices=(
                ("exact", "exact: bird, cat, dog as written"),
                ("casefold", "casefold: any case (CAT, Cat and cat are one class)"),
            ),
        ),
    )

    def read_test_set(self, data: bytes) -> scoring.ToyTestSet:
        return scoring.read_test_set(data)

    def test_set_counts(self, test_set: scoring.ToyTestSet) -> TestSetCounts:
        counts = test_set.class_counts()
        return TestSetCounts(records=len(test_set), task_counts=counts, dataset_counts=counts)

    def check_predictions(
        self,
        data: bytes,
        test_set: scoring.ToyTestSet,
        *,
        options: Mapping[str, str],
        max_prediction_chars: int | None,
    ) -> tuple[str, ...]:
        # A label is one of three short class names: no length limit to apply.
        return scoring.check_predictions(data, test_set, label_case=options[LABEL_CASE])

    def score(
        self,
        test_set: scoring.ToyTestSet,
        predictions: Sequence[str],
        *,
        options: Mapping[str, str],
    ) -> tuple[Scored, Contributions]:
        result, contributions = scoring.score(test_set, predictions, label_case=options[LABEL_CASE])
        return Scored(result, test_set.checksum), Contributions(contributions)

    def replicate_clusters(self, test_set: scoring.ToyTestSet) -> Sequence[int]:
        # Every item alone: the pictures share nothing.
        return list(range(len(test_set)))

    def contributions_from_bytes(self, data: bytes) -> Contributions:
        return Contributions(scoring.ToyContributions.from_bytes(data))

    def cli_report(self, result: Scored) -> dict[str, Any]:
        return {"metrics": dict(result.metrics), "label_case": result.result.label_case}

    def row_label(self, test_set: scoring.ToyTestSet, row: int) -> str:
        return f"a {test_set.labels[row]}" if 0 <= row < len(test_set) else ""

    def template_rows(self, test_set: scoring.ToyTestSet) -> Iterator[dict[str, Any]]:
        for row in range(len(test_set)):
            yield {"row": row, "label": ""}

    def file_guide(self, counts: Mapping[str, Any]) -> FileGuide:
        # In the benchmark's class order (a JSON column may reorder the stored keys).
        classes = {
            name: counts["task_counts"][name]
            for name in scoring.CLASSES
            if name in counts["task_counts"]
        }
        return FileGuide(
            paragraphs=(
                "One JSON list in UTF-8, one object per test item, each with exactly row (the "
                "item's position, from 0) and label: bird, cat or dog.",
            ),
            matching=(
                "By position: row 1 of your file is scored against item 1 of the test set; "
                "each row's row must equal its position."
            ),
            template_note=f"every row of the {counts['records']:,} items, each label empty.",
            table_caption="The classes",
            table_headings=("class", "Items"),
            table_rows=tuple((name, f"{count:,}") for name, count in classes.items()),
            sources_heading="From the items of class",
            sources={"overall": tuple(classes), **{name: (name,) for name in classes}},
        )

    def write_demo(self, folder: Path, *, force: bool = False) -> None:
        return None

    def published_rows(self) -> tuple[PublishedRow, ...]:
        return ()


plugin = ToyPlugin()
