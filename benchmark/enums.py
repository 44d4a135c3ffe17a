"""Choices for benchmark definitions and their ranking policy (spec 6)."""

from django.db import models


class MetricDirection(models.TextChoices):
    """Which way a metric improves. Every MedVidBench metric is higher-is-better (spec 4)."""

    HIGHER = "higher", "Higher is better"
    LOWER = "lower", "Lower is better"


class TieMethod(models.TextChoices):
    """How equal values share a per-metric rank (spec 6); the values are the ones
    ``benchmark.scoring.ranking.RankingPolicy`` takes."""

    MIN = "min", "Shared smaller rank (1, 1, 3)"
    DENSE = "dense", "Dense rank (1, 1, 2)"


class RankingMethod(models.TextChoices):
    """What orders a board (spec 6; issue 14); the values are the ones
    ``benchmark.scoring.ranking.RankingPolicy`` takes."""

    MEAN_RANK = "mean_rank", "Mean rank over all metrics"
    LEXICOGRAPHIC = "lexicographic", "By an ordered list of metrics"


class RankingScope(models.TextChoices):
    """Which rows a rank is computed against (spec 6)."""

    GLOBAL = "global", "All entries (official and community together)"
    PER_BOARD = "per_board", "Each board on its own rows"


class CategoryRanking(models.TextChoices):
    """How a category's tab is ranked (issue 15; `definitions.CATEGORY_RANKINGS` names the
    same values): by its metrics under the benchmark's policy, or by its one rating metric,
    highest first."""

    METRICS = "metrics", "By the category's metrics"
    RATING = "rating", "By its pairwise rating, highest first"
