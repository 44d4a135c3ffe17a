"""The board as `recompute_board` computed it before issue 16, restated as a reference: model
instances from `board_candidates`, one `ranking_entry` per row, `rank_entries` per scope group
and per category, the highlights through `rank_entries` with "dense" ties, every JSON value
decoded and built in Python. `recompute_board` now reads plain columns, ranks one matrix with
`rank_table` and writes tuples (COPY on PostgreSQL); the tests hold its rows equal to these,
field by field, on random boards with ties (test_board_recompute.py, the toy's categories).
"""

from __future__ import annotations

from typing import Any

from benchmark.enums import RankingScope
from benchmark.scoring.ranking import RankingPolicy, rank_entries
from submissions.boards import HIGHLIGHTS, category_ranking, category_ratings
from submissions.enums import STATES_JUDGE_PENDING, BoardKind
from submissions.models import BoardEntry, RunReplicates
from submissions.selectors import (
    board_candidates,
    metric_specs,
    metric_value,
    ranking_entry,
    ranking_policy,
)

# What each stored row is compared on (everything `recompute_board` writes but `computed_at`).
FIELDS = (
    "evaluation_id", "board", "rank", "mean_rank", "wins", "values", "highlights",
    "judge_pending", "judged_over", "intervals", "listed_at", "model_key", "team_key",
    "category_ranks", "rating_battles", "model_facts", "metric_ranks", "rank_sum",
    "normalized_sum", "position", "overall_position",
)  # fmt: skip


def stored_rows(benchmark) -> dict[int, dict[str, Any]]:
    """The board's rows as stored: submission id -> {field: value}, the per-metric ranks by
    metric (`BoardEntry.metric_keys`)."""
    rows = BoardEntry.objects.filter(benchmark=benchmark).values(
        "submission_id", "metric_keys", *FIELDS
    )
    return {
        row["submission_id"]: {
            **{field: row[field] for field in FIELDS},
            "metric_ranks": dict(zip(row["metric_keys"], row["metric_ranks"], strict=True)),
        }
        for row in rows
    }


def reference_rows(benchmark) -> dict[int, dict[str, Any]]:
    """What the board's rows should hold, computed the way recompute_board did before issue
    16 (and the per-metric ranks and tiebreak values it now stores, from the same ranking)."""
    metrics = list(benchmark.metrics.all())
    categories = list(benchmark.categories.all())
    runs = board_candidates(benchmark) if metrics else []
    ratings = category_ratings(benchmark, metrics, categories) if runs else {}
    shown = {
        run.submission_id: _overlaid(run, ratings.get(run.submission_id, {}), metrics)
        for run in runs
    }
    entries = {
        run.submission_id: ranking_entry(
            run.submission_id, run.submission.model_name, shown[run.submission_id], metrics
        )
        for run in runs
    }
    boards = {kind: [run for run in runs if run.submission.board == kind] for kind in BoardKind}
    groups = [runs]
    if benchmark.ranking_scope == RankingScope.PER_BOARD:
        groups = list(boards.values())
    specs, policy = metric_specs(metrics), ranking_policy(benchmark)
    ranked = {}
    category_ranks: dict[int, dict[str, int]] = {run.submission_id: {} for run in runs}
    for group in filter(None, groups):
        group_entries = [entries[run.submission_id] for run in group]
        for row in rank_entries(group_entries, specs, policy):
            ranked[row.key] = row
        for category in categories:
            category_specs, category_policy = category_ranking(category, metrics, policy)
            if not category_specs:
                continue
            for row in rank_entries(group_entries, category_specs, category_policy):
                category_ranks[row.key][category.key] = row.rank
    highlights: dict[int, dict[str, str]] = {}
    for group in boards.values():
        if not group:
            continue
        group_entries = [entries[run.submission_id] for run in group]
        dense = RankingPolicy(tie_method="dense", decimals=benchmark.ranking_decimals)
        for row in rank_entries(group_entries, specs, dense):
            highlights[row.key] = {
                key: HIGHLIGHTS[rank]
                for key, rank in row.metric_ranks.items()
                if rank in HIGHLIGHTS and entries[row.key].values[key] is not None
            }
    intervals = dict(
        RunReplicates.objects.filter(evaluation__in=[run.pk for run in runs]).values_list(
            "evaluation_id", "intervals"
        )
    )
    judge_metrics = [metric.key for metric in metrics if metric.is_judge_metric]
    expected = {}
    for run in runs:
        submission = run.submission
        place = ranked[submission.pk]
        rated = ratings.get(submission.pk, {})
        expected[submission.pk] = {
            "evaluation_id": run.pk,
            "board": submission.board.value,
            "rank": place.rank,
            "mean_rank": place.mean_rank,
            "wins": place.wins,
            "values": shown[submission.pk],
            "highlights": highlights.get(submission.pk, {}),
            "judge_pending": run.state in STATES_JUDGE_PENDING,
            "judged_over": _judged_over(run, judge_metrics),
            "intervals": {
                **(intervals.get(run.pk) or {}),
                **{
                    key: None if rating.ci_low is None else [rating.ci_low, rating.ci_high]
                    for key, rating in rated.items()
                },
            },
            "listed_at": submission.published_at
            or (submission.verified_at if submission.is_verified else None)
            or run.scored_at
            or run.created_at,
            "model_key": submission.model_name.casefold(),
            "team_key": (submission.team_name or submission.institution).casefold(),
            "category_ranks": category_ranks[submission.pk],
            "rating_battles": {key: rating.battles for key, rating in rated.items()},
            "model_facts": dict(submission.model_facts or {}),
            "metric_ranks": dict(place.metric_ranks),
            "rank_sum": place.rank_sum,
            "normalized_sum": place.normalized_sum,
        }
    # The positions: each board's rows in rank order, and all rows by rank then submission.
    by_rank = sorted(expected, key=lambda key: (expected[key]["rank"], key))
    for position, key in enumerate(by_rank, 1):
        expected[key]["overall_position"] = position
    for board in BoardKind:
        on_board = [key for key in by_rank if expected[key]["board"] == board.value]
        for position, key in enumerate(on_board, 1):
            expected[key]["position"] = position
    return expected


def _overlaid(run, ratings, metrics) -> dict[str, float | None]:
    values = {key: metric_value(value) for key, value in run.metrics.items()}
    for metric in metrics:
        if metric.is_rating:
            rating = ratings.get(metric.key)
            values[metric.key] = metric_value(rating.rating) if rating is not None else None
    return values


def _judged_over(run, judge_metrics) -> dict[str, dict[str, int]]:
    counts = (run.result or {}).get("counts") or {}
    return {
        name: {"judged": counts[name]["scored"], "items": counts[name]["total"]}
        for name in judge_metrics
        if name in counts
        and run.metrics.get(name) is not None
        and counts[name].get("scored", 0) < counts[name].get("total", 0)
    }
