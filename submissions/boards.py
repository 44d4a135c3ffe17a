"""The materialised boards: `recompute_board` is the one writer of `BoardEntry`, and
`schedule_board_refresh` is how every change that moves a board asks for it (docs/boards.md)."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from functools import partial

from django.db import transaction
from django.utils import timezone

from benchmark.enums import RankingScope
from benchmark.models import Benchmark, Category, Metric
from benchmark.scoring.ranking import Entry, MetricSpec, RankedEntry, RankingPolicy, rank_entries

from .enums import STATES_JUDGE_PENDING, BoardKind
from .hooks import add_board_listener as add_board_listener  # the name callers know
from .hooks import board_listeners
from .intervals import enqueue_rank_intervals
from .models import BoardEntry, CategoryRating, Evaluation, RunReplicates
from .selectors import (
    board_candidates,
    metric_specs,
    metric_value,
    ranking_entry,
    ranking_policy,
)

logger = logging.getLogger(__name__)


def recompute_board(benchmark: Benchmark) -> list[BoardEntry]:
    """Rank the benchmark's published entries and rewrite its board: the one writer of
    `BoardEntry`.

    In one transaction, serialised on the benchmark row: reads each published entry's newest
    run with scores, ranks the entries with `benchmark.scoring.ranking.rank_entries` under the
    benchmark's policy (tie method and rounding; scope: the union of both boards, or each board
    on its own rows), marks the best and second-best value of every column within each board,
    and replaces all of the benchmark's rows. Verified entries form the Official board, the
    others the Community board. A pending judge metric is missing to the ranking, so it ranks
    last until the judge has run (docs/boards.md). Issue 15: a rating metric's value and
    interval come from the entry's `CategoryRating` (missing, so last, until its battles are
    run), and each row stores its rank in every category (`category_ranking`, under the same
    scope) and its model facts. Idempotent. Returns the new rows.
    """
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        metrics = list(benchmark.metrics.all())
        categories = list(benchmark.categories.all())
        runs = board_candidates(benchmark) if metrics else []
        ratings = _category_ratings(benchmark, metrics, categories) if runs else {}
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
        ranked: dict[int, RankedEntry] = {}
        category_ranks: dict[int, dict[str, int]] = {run.submission_id: {} for run in runs}
        for group in filter(None, groups):  # the ranking refuses nothing to rank on
            group_entries = [entries[run.submission_id] for run in group]
            for row in rank_entries(group_entries, specs, policy):
                ranked[row.key] = row
            for category in categories:
                category_specs, category_policy = category_ranking(category, metrics, policy)
                if not category_specs:
                    continue  # none of its metrics exists (a definition still being set up)
                for row in rank_entries(group_entries, category_specs, category_policy):
                    category_ranks[row.key][category.key] = row.rank
        highlights: dict[int, dict[str, str]] = {}
        for group in boards.values():
            highlights.update(
                _column_highlights(
                    [entries[run.submission_id] for run in group], specs, benchmark.ranking_decimals
                )
            )

        intervals = dict(
            RunReplicates.objects.filter(evaluation__in=[run.pk for run in runs]).values_list(
                "evaluation_id", "intervals"
            )
        )
        now = timezone.now()
        judge_metrics = [metric.key for metric in metrics if metric.is_judge_metric]
        BoardEntry.objects.filter(benchmark=benchmark).delete()
        rows = BoardEntry.objects.bulk_create(
            [
                _board_entry(
                    benchmark,
                    run,
                    ranked[run.submission_id],
                    highlights,
                    intervals.get(run.pk) or {},
                    computed_at=now,
                    judge_metrics=judge_metrics,
                    shown=shown[run.submission_id],
                    ratings=ratings.get(run.submission_id, {}),
                    category_ranks=category_ranks[run.submission_id],
                )
                for run in runs
            ]
        )
        # The rank intervals need every row's replicates: seconds for a large board, so they
        # follow in the background (docs/statistics.md).
        if rows:
            transaction.on_commit(partial(enqueue_rank_intervals, benchmark.pk))
        for listener in board_listeners:  # hooks.add_board_listener
            transaction.on_commit(partial(listener, benchmark.pk))
    rows.sort(key=lambda row: (row.board, row.rank))
    return rows


def _category_ratings(
    benchmark: Benchmark, metrics: list[Metric], categories: list[Category]
) -> dict[int, dict[str, CategoryRating]]:
    """Each entry's stored ratings by the rating metric they fill (issue 15): submission id ->
    {metric key: its `CategoryRating`}, in one query (none without a rating category)."""
    rating_keys = {metric.key for metric in metrics if metric.is_rating}
    metric_of = {
        category.key: next(key for key in category.metric_keys if key in rating_keys)
        for category in categories
        if category.ranks_by_rating and rating_keys.intersection(category.metric_keys)
    }
    found: dict[int, dict[str, CategoryRating]] = {}
    if not metric_of:
        return found
    for rating in CategoryRating.objects.filter(benchmark=benchmark, category__in=list(metric_of)):
        found.setdefault(rating.submission_id, {})[metric_of[rating.category]] = rating
    return found


def _overlaid(
    run: Evaluation, ratings: dict[str, CategoryRating], metrics: list[Metric]
) -> dict[str, float | None]:
    """The values a row shows: the run's, cleaned as every reader cleans them (a number or
    None, so the board can sort on them in the database: `selectors.board_page`), with each
    rating metric taken from the entry's rating (None, pending, until its battles are run)
    rather than from the run: a rating is the platform's, never the scorer's."""
    values = {key: metric_value(value) for key, value in run.metrics.items()}
    for metric in metrics:
        if metric.is_rating:
            rating = ratings.get(metric.key)
            values[metric.key] = metric_value(rating.rating) if rating is not None else None
    return values


def category_ranking(
    category: Category, metrics: list[Metric], policy: RankingPolicy
) -> tuple[list[MetricSpec], RankingPolicy]:
    """What ranks a category's tab (docs/boards.md, "Categories"): a rating category by its
    rating, highest first (a pending rating last, ties by model name); a metrics category by
    its metrics under the benchmark's policy, a lexicographic order keeping the keys that are
    the category's (mean rank over them when none is). No specs when it has nothing to rank
    on."""
    by_key = {metric.key: metric for metric in metrics}
    keys = [key for key in category.metric_keys if key in by_key]
    if category.ranks_by_rating:
        rating = next((key for key in keys if by_key[key].is_rating), None)
        if rating is None:
            return [], policy
        return [MetricSpec(rating, higher_is_better=True)], RankingPolicy(
            tie_method=policy.tie_method,
            decimals=policy.decimals,
            method="lexicographic",
            order=(rating,),
        )
    specs = metric_specs([by_key[key] for key in keys])
    if policy.method != "lexicographic":
        return specs, policy
    order = tuple(key for key in policy.order if key in keys)
    if not order:
        return specs, replace(policy, method="mean_rank", order=())
    return specs, replace(policy, order=order)


def _judged_over(run: Evaluation, judge_metrics: list[str]) -> dict[str, dict[str, int]]:
    """The judge metrics the run publishes over a subset of their items (accepted by a
    maintainer: `judging.services.accept_partial_judgement`)."""
    counts = (run.result or {}).get("counts") or {}
    return {
        name: {"judged": counts[name]["scored"], "items": counts[name]["total"]}
        for name in judge_metrics
        if name in counts
        and run.metrics.get(name) is not None
        and counts[name].get("scored", 0) < counts[name].get("total", 0)
    }


def _board_entry(
    benchmark: Benchmark,
    run: Evaluation,
    ranked: RankedEntry,
    highlights: dict[int, dict[str, str]],
    intervals: dict[str, list[float] | None],
    *,
    computed_at: datetime,
    judge_metrics: list[str],
    shown: dict[str, float | None],
    ratings: dict[str, CategoryRating],
    category_ranks: dict[str, int],
) -> BoardEntry:
    submission = run.submission
    # A rating's 95% interval is the row's interval for its metric, in the bootstrap's shape
    # ([low, high] or None), so every reader of intervals shows it as it shows the others.
    intervals = {
        **intervals,
        **{
            key: None if rating.ci_low is None else [rating.ci_low, rating.ci_high]
            for key, rating in ratings.items()
        },
    }
    return BoardEntry(
        benchmark=benchmark,
        submission=submission,
        evaluation=run,
        board=submission.board,
        rank=ranked.rank,
        mean_rank=ranked.mean_rank,
        wins=ranked.wins,
        values=shown,
        highlights=highlights.get(submission.pk, {}),
        judge_pending=run.state in STATES_JUDGE_PENDING,
        judged_over=_judged_over(run, judge_metrics),
        intervals=intervals,
        listed_at=submission.published_at
        or (submission.verified_at if submission.is_verified else None)
        or run.scored_at
        or run.created_at,
        computed_at=computed_at,
        model_key=submission.model_name.casefold(),
        team_key=(submission.team_name or submission.institution).casefold(),
        category_ranks=category_ranks,
        rating_battles={key: rating.battles for key, rating in ratings.items()},
        model_facts=dict(submission.model_facts or {}),
    )


# Highlight classes by dense rank within a board: the best value, then the next distinct one.
HIGHLIGHTS = {1: "best", 2: "second"}


def _column_highlights(
    entries: list[Entry], specs: list[MetricSpec], decimals: int | None
) -> dict[int, dict[str, str]]:
    """Per entry, the columns where it holds the board's best or second-best value.

    Dense ranks on the values as the board ranks them (rounded the same way), so equal values
    share a highlight and "second" is the next distinct value. A missing value is never
    highlighted, even where dense ranking puts it second.
    """
    if not entries:
        return {}
    values = {entry.key: entry.values for entry in entries}
    marks: dict[int, dict[str, str]] = {}
    for row in rank_entries(entries, specs, RankingPolicy(tie_method="dense", decimals=decimals)):
        marks[row.key] = {
            key: HIGHLIGHTS[rank]
            for key, rank in row.metric_ranks.items()
            if rank in HIGHLIGHTS and values[row.key][key] is not None
        }
    return marks


def schedule_board_refresh(benchmark_id: int) -> None:
    """Recompute the benchmark's board when the current transaction commits (at once outside a
    transaction).

    Synchronous, in the committing process (the web server for a verification, the worker
    after scoring): the board is right as soon as the change is visible, and tests and the
    demo need no worker for it. Several changes in one transaction recompute several times;
    each recompute is complete and idempotent, and a board of 1,000 entries takes well under a
    second (docs/boards.md).
    """
    transaction.on_commit(partial(refresh_board, benchmark_id))


def refresh_board(benchmark_id: int) -> None:
    """Recompute a board now; if that fails, log it and queue `task_recompute_board` so the
    worker retries. The change that asked for it has committed already and must not fail
    because derived data could not be rebuilt."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return
    try:
        recompute_board(benchmark)
    except Exception:
        logger.exception(
            "recomputing the board of benchmark %s failed; queued a retry", benchmark_id
        )
        enqueue_board_recompute(benchmark_id)


def enqueue_board_recompute(benchmark_id: int) -> None:
    # Imported here for the same reason as in enqueue_scoring.
    from django_q.tasks import async_task

    async_task(
        "submissions.tasks.task_recompute_board", benchmark_id, q_options={"group": "boards"}
    )
