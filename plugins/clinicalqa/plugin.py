"""The demo clinical QA benchmark's plugin (benchmark/plugins.py): the pure scoring core behind
the protocol, the re-run (which hosted evaluation uses too) and the pairwise category.

Registered in pyproject.toml as the entry point `clinicalqa` of `podium.benchmarks`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmark.plugins import DemoEntry, DemoFiles, FileGuide, PublishedRow, TestSetCounts

from . import scoring
from .definition import CLINICALQA
from .pairwise import pairwise as clinicalqa_pairwise
from .rerun import rerun as clinicalqa_rerun
from .scoring import (
    CATEGORIES,
    METRIC_KEYS,
    MULTIPLE_CHOICE,
    OPEN_ENDED,
    ClinicalQAContributions,
    ClinicalQAResult,
    ClinicalQATestSet,
)

if TYPE_CHECKING:
    from .demo import DemoModel

SCORER_VERSION = "clinicalqa-1"
CATEGORY_LABELS = {MULTIPLE_CHOICE: "multiple choice", OPEN_ENDED: "open-ended"}
# The board category (definition.CATEGORIES) each item category's questions belong to: the
# hosted evaluation queue shows its progress per board category (docs/hosted.md).
BOARD_CATEGORY = {MULTIPLE_CHOICE: "close_ended", OPEN_ENDED: "open_ended"}


@dataclass(frozen=True)
class Scored:
    """A scored file in the platform's result shape (`ScoredResult`): the accuracy by key, and
    on the run the counts, the format report and the summary the CLI prints. The rating metric
    is not here: the platform fills it from battles."""

    result: ClinicalQAResult
    test_set_checksum: str
    records: int
    scorer_version: str = SCORER_VERSION

    @property
    def metrics(self) -> dict[str, float | None]:
        return self.result.metrics

    def to_dict(self) -> dict[str, Any]:
        result = self.result
        examples = [
            {"row": index, "id": identifier, "prediction": text}
            for index, identifier, text in result.unreadable_examples
        ]
        return {
            "scorer_version": self.scorer_version,
            "test_set_checksum": self.test_set_checksum,
            "records": self.records,
            "metrics": self.metrics,
            # The pages' breakdown table: accuracy is over the multiple-choice category only.
            "per_dataset": (
                {"accuracy": {MULTIPLE_CHOICE: result.accuracy}}
                if result.accuracy is not None
                else {}
            ),
            "counts": (
                {
                    "accuracy": {
                        "scored": result.multiple_choice,
                        "total": result.multiple_choice,
                    }
                }
                if result.accuracy is not None
                else {}
            ),
            # The format report: answers whose letter was read, per item category.
            "parsed": (
                {
                    MULTIPLE_CHOICE: {
                        "parsed": result.multiple_choice - result.unreadable,
                        "total": result.multiple_choice,
                    }
                }
                if result.multiple_choice
                else {}
            ),
            "unparsed_examples": {MULTIPLE_CHOICE: examples} if examples else {},
            "summary": result.as_json(),
        }


class _Contributions:
    """ClinicalQAContributions under the platform's `Contributions` protocol."""

    def __init__(self, inner: ClinicalQAContributions) -> None:
        self.inner = inner

    def replicate_values(
        self, weights: np.ndarray, keys: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        return self.inner.metric_values(weights, keys)

    def to_bytes(self) -> bytes:
        return self.inner.to_bytes()


def demo_entry(model: DemoModel, institution: str, predictions: Path) -> DemoEntry:
    """The demo entry of `model`, with its model facts."""
    return DemoEntry(model.name, institution, predictions, facts=dict(model.facts))


class ClinicalQAPlugin:
    key = "clinicalqa"
    definition = CLINICALQA
    scorer_version = SCORER_VERSION
    judge_step = False
    judge = None
    rerun = clinicalqa_rerun
    pairwise = clinicalqa_pairwise
    submission_options = ()
    # One breakdown group is an item category (multiple_choice, open_ended).
    breakdown_label = "category"
    # The pages' words (benchmark.plugins.wording_for): a "question" of the test set, drawn
    # one by one by the bootstrap.
    item_label = "question"
    cluster_label = ""

    def read_test_set(self, data: bytes) -> ClinicalQATestSet:
        return scoring.load_testset(data)

    def test_set_counts(self, test_set: ClinicalQATestSet) -> TestSetCounts:
        counts = test_set.category_counts()
        return TestSetCounts(records=len(test_set), task_counts=counts, dataset_counts=counts)

    def check_predictions(
        self,
        data: bytes,
        test_set: ClinicalQATestSet,
        *,
        options: Mapping[str, str],
        max_prediction_chars: int | None,
    ) -> tuple[str, ...]:
        return scoring.load_predictions(data, test_set, max_prediction_chars=max_prediction_chars)

    def score(
        self,
        test_set: ClinicalQATestSet,
        predictions: Sequence[str],
        *,
        options: Mapping[str, str],
    ) -> tuple[Scored, _Contributions]:
        result, contributions = scoring.score_with_contributions(test_set, predictions)
        return Scored(result, test_set.checksum, len(test_set)), _Contributions(contributions)

    def item_categories(self, test_set: ClinicalQATestSet) -> list[str]:
        """The board category of each question, in test-set order (hosted evaluation's queue
        shows its progress per category; an optional part of the protocol)."""
        return [BOARD_CATEGORY[item.category] for item in test_set.items]

    def replicate_clusters(self, test_set: ClinicalQATestSet) -> Sequence[int]:
        # Each question alone: the questions share no patient, case or passage.
        return list(range(len(test_set)))

    def contributions_from_bytes(self, data: bytes) -> _Contributions:
        return _Contributions(ClinicalQAContributions.from_bytes(data))

    def cli_report(self, result: Scored) -> dict[str, Any]:
        return result.result.as_json()

    def row_label(self, test_set: ClinicalQATestSet, row: int) -> str:
        # Rows are matched by id, in any order: a file's row N need not be test item N, so
        # the position names nothing. The messages name the row's id themselves.
        return ""

    def template_rows(self, test_set: ClinicalQATestSet) -> Iterator[dict[str, Any]]:
        for item in test_set.items:
            yield {"id": item.id, "answer": ""}

    def file_guide(self, counts: Mapping[str, Any]) -> FileGuide:
        # In the benchmark's category order (a JSON store may reorder the stored keys).
        categories = {
            category: counts["task_counts"][category]
            for category in CATEGORIES
            if category in counts["task_counts"]
        }
        return FileGuide(
            paragraphs=(
                "One JSON list in UTF-8, one object per test question, each with exactly id "
                "(the question's id) and answer (your model's answer as text): "
                '[{"id": "mc-001", "answer": "B"}, {"id": "oe-001", "answer": "..."}].',
                "Multiple-choice answers: Podium reads the letter from the text, in this "
                'order: the whole answer when it is one letter ("B", "(c)"); a stated answer '
                '("Answer: C", "the answer is (b)"); the first letter in brackets ("(d)"); '
                'the first capital A-D standing alone ("B. Fever"). An answer with no letter '
                "counts as wrong and is counted in your file's format report.",
                "Open-ended answers are compared with other models' answers by the judge, "
                "two at a time (their category's rating); write them as your model wrote "
                "them. An empty answer is allowed.",
            ),
            matching=(
                "By id: every question of the test set needs exactly one row with its id, in "
                "any order. A file with an unknown id, a repeated id or a missing one is "
                "refused, naming them."
            ),
            matching_short="Rows are matched to the test set by id, in any order.",
            template_note=(
                f"every id of the {counts['records']:,} questions in the test set's order, "
                "each answer empty for you to fill in."
            ),
            table_caption="The questions",
            table_headings=("category", "Questions"),
            table_rows=tuple((category, f"{count:,}") for category, count in categories.items()),
            sources_heading="From the questions of category",
            sources={category: (category,) for category in categories},
        )

    def write_demo(self, folder: Path, *, force: bool = False) -> DemoFiles:
        """The demo (`demo.write_demo`): the test set and the four demo models' files, each
        written when missing or `force` (the same bytes every time). The models are not
        uploaded: `load_demo` queues a hosted evaluation of the stand-in model playing back
        each file (`hosted`), so the demo shows the request queue (issue 15, point 5)."""
        # Imported here: only a development machine's demo writes it, and every process that
        # loads the plugins (`manage.py score` among them) would import it (issue 16).
        from . import demo

        paths = demo.write_demo(folder, force=force)
        hosted = tuple(
            demo_entry(model, demo.INSTITUTION, paths[model.kind]) for model in demo.MODELS
        )
        return DemoFiles(test_set=paths["testset"], entries=(), hosted=hosted)

    def published_rows(self) -> tuple[PublishedRow, ...]:
        return ()


plugin = ClinicalQAPlugin()

__all__ = ["METRIC_KEYS", "ClinicalQAPlugin", "Scored", "plugin"]
