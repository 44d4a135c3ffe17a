"""MedVidBench's plugin (benchmark/plugins.py): its scorer (`plugins.medvidbench.scoring`, a
pure Python + numpy reimplementation of the official one) behind the protocol. Registered in
pyproject.toml as the entry point `medvidbench` of `podium.benchmarks`. The platform reaches
the scorer only through this object: reading test sets, checking and scoring files, the
bootstrap's clusters, the judge (`judge.py`) and the re-run (`rerun.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.plugins import DemoEntry, DemoFiles, FileGuide, PublishedRow, TestSetCounts
from plugins.medvidbench import scoring
from plugins.medvidbench.definition import MEDVIDBENCH
from plugins.medvidbench.rerun import rerun as medvidbench_rerun
from plugins.medvidbench.scoring import contributions as medvidbench_contributions
from plugins.medvidbench.scoring.clusters import video_clusters
from plugins.medvidbench.scoring.evaluate import evaluate_with_contributions
from plugins.medvidbench.scoring.tasks import route_qa_type

from .judge import MedVidBenchJudge

# An id longer than this is cut in a message (ids are short in practice).
ID_SHOWN_CHARS = 60
# The official board's published rows (spec 7), the demo's verified entries.
PUBLISHED_PATH = Path(__file__).resolve().parent / "data" / "published.json"
# The demo's entries: (model name, predictions file kind, published, team).
DEMO_ENTRIES = (
    ("SurgiDemo-7B (synthetic)", "noisy", True, "Demo fine-tuners"),
    ("ChattyVLM (synthetic)", "prose", True, ""),
    ("SurgiDemo-7B-private (synthetic)", "noisy", False, ""),
)


class MedVidBenchPlugin:
    key = "medvidbench"
    definition = MEDVIDBENCH
    scorer_version = scoring.SCORER_VERSION
    judge_step = True
    judge = MedVidBenchJudge()
    rerun = medvidbench_rerun
    pairwise = None
    breakdown_label = "dataset"
    # A sample's video: the bootstrap draws a video's samples together (replicate_clusters).
    cluster_label = "video"
    submission_options = ()

    def read_test_set(self, data: bytes) -> scoring.TestSet:
        return scoring.load_ground_truth(data)

    def test_set_counts(self, test_set: scoring.TestSet) -> TestSetCounts:
        return TestSetCounts(
            records=len(test_set),
            task_counts=test_set.task_counts(),
            dataset_counts=dict(sorted(test_set.dataset_counts.items())),
            qa_type_counts=dict(sorted(test_set.qa_type_counts.items())),
        )

    def check_predictions(
        self,
        data: bytes,
        test_set: scoring.TestSet,
        *,
        options: Mapping[str, str],
        max_prediction_chars: int | None,
    ) -> list[str]:
        return scoring.load_predictions(data, test_set, max_prediction_chars=max_prediction_chars)

    def score(
        self, test_set: scoring.TestSet, predictions: Sequence[str], *, options: Mapping[str, str]
    ) -> tuple[scoring.ScoreResult, Contributions]:
        result, recorded = evaluate_with_contributions(test_set, predictions)
        return result, Contributions(recorded)

    def replicate_clusters(self, test_set: scoring.TestSet) -> list[str]:
        """A sample's video: its samples are drawn together (docs/statistics.md)."""
        return video_clusters([sample.id for sample in test_set.samples])

    def contributions_from_bytes(self, data: bytes) -> Contributions:
        return Contributions(medvidbench_contributions.from_bytes(data))

    def cli_report(self, result: scoring.ScoreResult) -> dict[str, Any]:
        return result.to_dict()

    def row_label(self, test_set: scoring.TestSet, row: int) -> str:
        if not 0 <= row < len(test_set.samples):
            return ""
        sample_id = test_set.samples[row].id
        if len(sample_id) > ID_SHOWN_CHARS:
            sample_id = sample_id[:ID_SHOWN_CHARS] + "..."
        return f"id {sample_id!r}"

    def template_rows(self, test_set: scoring.TestSet) -> Iterator[dict[str, Any]]:
        for sample in test_set.samples:
            yield {"id": sample.id, "qa_type": sample.qa_type, "prediction": ""}

    def file_guide(self, counts: Mapping[str, Any]) -> FileGuide:
        """The qa_type strings the checker accepts, each with the metrics it feeds and its
        sample count."""
        metrics: Mapping[str, list[str]] = counts["metrics_by_task"]
        lines = []
        for qa_type, count in counts["qa_type_counts"].items():
            task = route_qa_type(qa_type)
            name = task.value if task else ""
            scored_in = ", ".join(metrics.get(name, [])) or "no metric (checked, not scored)"
            lines.append((name or "~", qa_type, scored_in, f"{count:,}"))
        lines.sort()
        sources: dict[str, list[str]] = {}
        for task, qa_type, *_ in lines:
            sources.setdefault(task, []).append(qa_type)
        records = counts["records"]
        return FileGuide(
            paragraphs=(
                "One JSON list in UTF-8, one object per test sample, each with exactly id, "
                "qa_type and prediction, all three strings. It is what the official "
                "extract_predictions.py writes.",
            ),
            matching=(
                f"By position: row 1 of your file is scored against sample 1 of the test set, "
                f"row 2 against sample 2, and so on, in the test set's order ({records:,} "
                "samples). Ids repeat across tasks, so the id and the qa_type of each row "
                "must equal the test set's at the same position. A file in another order, "
                "grouped or sorted by task as the official multi-GPU scripts write it, is "
                "refused. Rows that share both an id and a qa_type (several questions of one "
                "task on one video) cannot be told apart by the file, so keep them in the "
                "test set's order: the template lists every row in it."
            ),
            matching_short=(
                "Rows are matched to the test set by position, so keep its order (do not group "
                "rows by task)."
            ),
            template_note=(
                f"every id and qa_type of the {records:,} samples in order, each "
                '"prediction" empty for you to fill in.'
            ),
            table_caption="The qa_type strings the checker accepts",
            table_headings=("qa_type", "Scored in", "Samples"),
            table_rows=tuple(line[1:] for line in lines),
            sources_heading="From the rows with qa_type",
            sources={task: tuple(values) for task, values in sources.items()},
        )

    def write_demo(self, folder: Path, *, force: bool = False) -> DemoFiles:
        """The synthetic test set and predictions (`demo_testset`), written when the ground
        truth is not in `folder` yet or `force` (the same seed gives the same bytes); the three
        demo entries; and every other predictions file for the stand-in model to play back."""
        # Imported here: only a development machine's demo writes it, and every process that
        # loads the plugins (`manage.py score` among them) would import it (issue 16).
        from plugins.medvidbench.demo_testset import (
            DEMO_FILENAMES,
            NEW_MODEL,
            PREDICTION_KINDS,
            write_demo_files,
        )

        if force or not (folder / DEMO_FILENAMES["ground_truth"]).exists():
            write_demo_files(folder)
        entries = tuple(
            DemoEntry(
                model_name,
                "Podium demo data",
                folder / DEMO_FILENAMES[kind],
                publish=publish,
                team_name=team,
            )
            for model_name, kind, publish, team in DEMO_ENTRIES
        )
        shown = {entry.predictions for entry in entries}
        playback = tuple(
            folder / DEMO_FILENAMES[kind]
            for kind in (*PREDICTION_KINDS, NEW_MODEL)
            if folder / DEMO_FILENAMES[kind] not in shown
        )
        return DemoFiles(
            test_set=folder / DEMO_FILENAMES["ground_truth"], entries=entries, playback=playback
        )

    def published_rows(self) -> tuple[PublishedRow, ...]:
        """The official board's 15 published rows (spec 7), dated as verified there."""
        rows = json.loads(PUBLISHED_PATH.read_text(encoding="utf-8"))["rows"]
        return tuple(
            PublishedRow(
                model_name=row["model_name"],
                values=row["values"],
                published_on=date.fromisoformat(row["verified_on"]),
                is_baseline=row["is_baseline"],
                note="published official result (spec 7), demo data",
            )
            for row in rows
        )


class Contributions:
    """MedVidBench's recorded contributions under the platform's `Contributions` protocol;
    `recorded` is the `plugins.medvidbench.scoring.contributions.Contributions` itself (the judge adds
    its metrics to it)."""

    def __init__(self, recorded: medvidbench_contributions.Contributions) -> None:
        self.recorded = recorded

    def replicate_values(
        self, weights: np.ndarray, keys: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        values = medvidbench_contributions.metric_values(self.only(keys).recorded, weights)
        return values if keys is None else {key: values[key] for key in keys}

    def to_bytes(self) -> bytes:
        return medvidbench_contributions.to_bytes(self.recorded)

    def with_metrics(self, more: Mapping[str, Any]) -> Contributions:
        """These contributions with some metrics' added or replaced (the judge's)."""
        return Contributions(self.recorded.with_metrics(more))

    def only(self, keys: Sequence[str] | None) -> Contributions:
        """The contributions of `keys` alone (all for None): what a judge rerun's copy keeps."""
        if keys is None:
            return self
        kept = {name: value for name, value in self.recorded.metrics.items() if name in keys}
        return Contributions(medvidbench_contributions.Contributions(self.recorded.n_samples, kept))


plugin = MedVidBenchPlugin()
