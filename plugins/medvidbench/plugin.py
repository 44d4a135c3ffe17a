"""MedVidBench's plugin (benchmark/plugins.py): the scorer in `benchmark.scoring` behind the
protocol. Registered in pyproject.toml as the entry point `medvidbench` of `podium.benchmarks`.

The scorer's modules still live in `benchmark/scoring/` (their tests and the fidelity figures
cite those paths); the platform reaches them through this object for reading test sets,
checking and scoring files and the bootstrap's clusters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchmark import scoring
from benchmark.definitions import MEDVIDBENCH
from benchmark.plugins import TestSetCounts
from benchmark.scoring import contributions as medvidbench_contributions
from benchmark.scoring.bootstrap import video_clusters
from benchmark.scoring.evaluate import evaluate_with_contributions


class MedVidBenchPlugin:
    key = "medvidbench"
    definition = MEDVIDBENCH
    scorer_version = scoring.SCORER_VERSION
    breakdown_label = "dataset"
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


class Contributions:
    """MedVidBench's recorded contributions under the platform's `Contributions` protocol;
    `recorded` is the `benchmark.scoring.contributions.Contributions` itself (the judge adds
    its metrics to it)."""

    def __init__(self, recorded: medvidbench_contributions.Contributions) -> None:
        self.recorded = recorded

    def replicate_values(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        return medvidbench_contributions.metric_values(self.recorded, weights)

    def to_bytes(self) -> bytes:
        return medvidbench_contributions.to_bytes(self.recorded)


plugin = MedVidBenchPlugin()
