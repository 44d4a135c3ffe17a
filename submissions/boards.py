"""The materialised boards: `recompute_board` is the one writer of `BoardEntry`, and
`schedule_board_refresh` is how every change that moves a board asks for it (docs/boards.md)."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial

from django.db import transaction
from django.utils import timezone

from benchmark.enums import RankingScope
from benchmark.models import Benchmark
from benchmark.scoring.ranking import Entry, MetricSpec, RankedEntry, RankingPolicy, rank_entries

from .enums import STATES_JUDGE_PENDING, BoardKind
from .intervals import enqueue_rank_intervals
from .models import BoardEntry, Evaluation, RunReplicates
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
    last until the judge has run (docs/boards.md). Idempotent. Returns the new rows.
    """
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        metrics = list(benchmark.metrics.all())
        runs = board_candidates(benchmark) if metrics else []
        entries = {
            run.submission_id: ranking_entry(
                run.submission_id, run.submission.model_name, run.metrics, metrics
            )
            for run in runs
        }
        boards = {kind: [run for run in runs if run.submission.board == kind] for kind in BoardKind}
        groups = [runs]
        if benchmark.ranking_scope == RankingScope.PER_BOARD:
            groups = list(boards.values())
        specs, policy = metric_specs(metrics), ranking_policy(benchmark)
        ranked: dict[int, RankedEntry] = {}
        for group in filter(None, groups):  # the ranking refuses nothing to rank on
            for row in rank_entries([entries[run.submission_id] for run in group], specs, policy):
                ranked[row.key] = row
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
                )
                for run in runs
            ]
        )
        # The rank intervals need every row's replicates: seconds for a large board, so they
        # follow in the background (docs/statistics.md).
        if rows:
            transaction.on_commit(partial(enqueue_rank_intervals, benchmark.pk))
    rows.sort(key=lambda row: (row.board, row.rank))
    return rows


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
) -> BoardEntry:
    submission = run.submission
    return BoardEntry(
        benchmark=benchmark,
        submission=submission,
        evaluation=run,
        board=submission.board,
        rank=ranked.rank,
        mean_rank=ranked.mean_rank,
        wins=ranked.wins,
        # Cleaned as every reader cleans them (a number or None), so the board can sort on them in
        # the database (`selectors.board_page`).
        values={key: metric_value(value) for key, value in run.metrics.items()},
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
