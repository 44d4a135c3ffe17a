"""Benchmark definitions as data: what ``setup_benchmarks`` creates.

A definition is the benchmark as its maintainers publish it: texts, the metrics in the official
column order, the ranking policy and the submission rules. ``benchmark.services.ensure_benchmark``
turns one into database rows. Each benchmark plugin carries its own (`plugin.definition`:
MedVidBench's in `plugins/medvidbench/definition.py`, MedSG-Bench's in
`plugins/medsg/definition.py`); this module holds their shape only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmark.enums import MetricDirection, RankingMethod, RankingScope, TieMethod
from benchmark.scoring.ranking import ranking_order_problem


@dataclass(frozen=True)
class MetricDefinition:
    key: str
    label: str
    task: str
    description: str
    direction: MetricDirection = MetricDirection.HIGHER
    display_decimals: int = 3
    is_judge_metric: bool = False


@dataclass(frozen=True)
class BenchmarkDefinition:
    slug: str
    name: str
    description: str
    about: str
    citation: str
    licence: str
    metrics: tuple[MetricDefinition, ...]  # in the official column order
    judge_rubric_path: Path | None = None
    judge_settings_path: Path | None = None
    judge_auto_start: bool = False
    tie_method: TieMethod = TieMethod.MIN
    ranking_scope: RankingScope = RankingScope.GLOBAL
    ranking_decimals: int | None = 3
    # Issue 14: "lexicographic" orders the board by `ranking_order`, metric keys by priority.
    ranking_method: RankingMethod = RankingMethod.MEAN_RANK
    ranking_order: tuple[str, ...] = ()
    daily_submission_limit: int = 5
    max_upload_mb: int = 50
    # The longest prediction accepted, in characters (docs/benchmarks.md, "Submission rules").
    max_prediction_chars: int = 20_000
    # Issue 12: replicates per interval (docs/statistics.md).
    bootstrap_replicates: int = 1000
    is_public: bool = True
    # Verification by re-running the model (docs/verification.md).
    verification_tolerance: float = 0.01
    rerun_max_frames: int = 8
    # Where submitters reach the maintainers ("" : the site's contact address).
    contact_url: str = ""
    # The key of the plugin that reads and scores its files (benchmark/plugins.py).
    plugin: str = "medvidbench"

    def __post_init__(self) -> None:
        # A definition that cannot rank its own board fails at import, naming the benchmark.
        problem = ranking_order_problem(
            self.ranking_method, list(self.ranking_order), [m.key for m in self.metrics]
        )
        if problem:
            raise ValueError(f"benchmark {self.slug!r}: {problem}")

    def judge_rubric(self) -> str:
        """The judge prompt, read from the file that ships with the scorer ("" if none)."""
        if self.judge_rubric_path is None:
            return ""
        return self.judge_rubric_path.read_text(encoding="utf-8")

    def judge_settings(self) -> dict:
        """The rest of the rubric (aspects, answer patterns, score range, task labels)."""
        if self.judge_settings_path is None:
            return {}
        return json.loads(self.judge_settings_path.read_text(encoding="utf-8"))
