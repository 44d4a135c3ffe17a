"""MedVidBench's LLM judge behind the plugin protocol (`benchmark.plugins.Judge`): its caption
items, their aggregation into DVC_llm, VS_llm and RC_llm, what each metric aggregated (the
intervals'), and the run's result with the judge metrics in or out. The functions themselves
are the scorer's (`plugins.medvidbench.scoring.judge`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.scoring.rubric import JudgeOutcome, Rubric, Verdicts
from plugins.medvidbench.scoring.contributions import MetricContributions
from plugins.medvidbench.scoring.judge import (
    JUDGED_TASKS,
    JudgeItem,
    aggregate,
    build_items,
    judge_contributions,
    with_judge,
)
from plugins.medvidbench.scoring.result import ScoreResult
from plugins.medvidbench.scoring.tasks import JUDGE_METRICS


class MedVidBenchJudge:
    metrics = JUDGE_METRICS
    task_labels = tuple(task.value for task in JUDGED_TASKS)

    def items(self, test_set: Any, predictions: Sequence[str]) -> list[JudgeItem]:
        return build_items(test_set, predictions)

    def outcome(
        self, test_set: Any, items: Sequence[JudgeItem], verdicts: Verdicts, rubric: Rubric
    ) -> JudgeOutcome:
        return aggregate(test_set, items, verdicts, rubric)

    def contributions(
        self, test_set: Any, items: Sequence[JudgeItem], verdicts: Verdicts, rubric: Rubric
    ) -> dict[str, MetricContributions]:
        return judge_contributions(test_set, items, verdicts, rubric)

    def with_outcome(self, result: Mapping[str, Any], outcome: JudgeOutcome) -> dict[str, Any]:
        """The stored result with the judge metrics, their per-dataset values and counts."""
        return with_judge(ScoreResult.from_dict(dict(result)), outcome).to_dict()

    def without_outcome(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """The stored result with the judge metrics pending again (None, no per-dataset values,
        no counts): a judge rerun's starting point."""
        blank = JudgeOutcome(
            metrics=dict.fromkeys(JUDGE_METRICS),
            counts={},
            per_dataset={},
            aspects={},
            thresholds={},
        )
        stripped = with_judge(ScoreResult.from_dict(dict(result)), blank).to_dict()
        for key in ("per_dataset", "counts"):
            stripped[key] = {
                name: values for name, values in stripped[key].items() if name not in JUDGE_METRICS
            }
        return stripped
