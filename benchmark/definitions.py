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
    # Issue 15: a Bradley-Terry rating (Elo scale) from the platform's pairwise battles, not a
    # number the scorer computes: the board takes it from the category's ratings, with its
    # interval. It belongs to a category whose `ranking` is "rating".
    is_rating: bool = False


CATEGORY_RANKINGS = ("metrics", "rating")

# The model facts a benchmark may ask submitters for (issue 15, point 4), by key: what each is
# called. `benchmark.facts` holds their choices and checks.
MODEL_FACT_KEYS = ("type", "parameters", "licence", "precision", "domain_specific")


@dataclass(frozen=True)
class CategoryDefinition:
    """One tab of a benchmark with categories (MEDIC's "close-ended", "open-ended", ...): its
    own columns and ranking. "metrics" ranks its metrics under the benchmark's ranking policy;
    "rating" ranks by its one rating metric (`MetricDefinition.is_rating`), highest first, with
    the rating's 95% interval. `judge_note` names the judge on the tab ("Llama-3.1-70B-Instruct
    is the judge here"); blank for a category without one."""

    key: str
    label: str
    metrics: tuple[str, ...]
    description: str = ""
    judge_note: str = ""
    ranking: str = "metrics"


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
    # Issue 15. Tabs with their own columns and ranking, beside the overview (empty: one board).
    categories: tuple[CategoryDefinition, ...] = ()
    # Which of MODEL_FACT_KEYS submitters give for their model (shown and filtered on).
    model_facts: tuple[str, ...] = ()
    # Hosted evaluation: Podium asks a submitted model endpoint every question (docs/hosted.md).
    hosted_evaluation: bool = False
    hosted_max_tokens: int = 2_000_000  # prompt + completion tokens one request may spend
    hosted_requests_per_minute: int = 600  # calls one request may make per minute
    # Pairwise ratings (docs/ratings.md): opponents a new model meets, questions per pairing
    # (None: every question of the category), the model whose rating is pinned ("" : the mean
    # of all ratings is 1000), bootstrap rounds and seed of the intervals.
    pairwise_opponents: int = 5
    pairwise_questions: int | None = None
    rating_anchor: str = ""
    rating_bootstrap_rounds: int = 1000
    rating_seed: int = 0

    def __post_init__(self) -> None:
        # A definition that cannot rank its own board fails at import, naming the benchmark.
        problem = ranking_order_problem(
            self.ranking_method, list(self.ranking_order), [m.key for m in self.metrics]
        )
        if problem:
            raise ValueError(f"benchmark {self.slug!r}: {problem}")
        problem = _categories_problem(self)
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


def _categories_problem(definition: BenchmarkDefinition) -> str:
    """What is wrong with a definition's categories, model facts and rating metrics ("")."""
    metrics = {metric.key: metric for metric in definition.metrics}
    unknown_facts = sorted(set(definition.model_facts) - set(MODEL_FACT_KEYS))
    if unknown_facts:
        return f"unknown model facts {unknown_facts}; known: {list(MODEL_FACT_KEYS)}"
    keys = [category.key for category in definition.categories]
    if len(set(keys)) != len(keys):
        return f"category keys repeat: {keys}"
    rated: set[str] = set()
    for category in definition.categories:
        if category.ranking not in CATEGORY_RANKINGS:
            return (
                f"category {category.key!r}: ranking {category.ranking!r} is not one of "
                f"{list(CATEGORY_RANKINGS)}"
            )
        missing = [key for key in category.metrics if key not in metrics]
        if missing or not category.metrics:
            return f"category {category.key!r}: metrics {missing or '()'} are not the benchmark's"
        ratings = [key for key in category.metrics if metrics[key].is_rating]
        if category.ranking == "rating" and len(ratings) != 1:
            return f"category {category.key!r} ranks by rating and needs exactly one rating metric"
        if category.ranking == "metrics" and ratings:
            return f"category {category.key!r}: rating metrics {ratings} need a rating category"
        rated.update(ratings)
    loose = [key for key, metric in metrics.items() if metric.is_rating and key not in rated]
    if loose:
        return f"rating metrics {loose} belong to no rating category"
    return ""
