"""django-q2 entry points: take a primary key, re-fetch, call one service."""

from __future__ import annotations

import logging

from benchmark.models import Benchmark

from . import board_json, board_orders, intervals, services
from .models import Evaluation

logger = logging.getLogger(__name__)


def task_score_evaluation(evaluation_id: int) -> str:
    evaluation = Evaluation.objects.filter(pk=evaluation_id).select_related("submission").first()
    if evaluation is None:
        logger.warning("evaluation %s vanished before scoring", evaluation_id)
        return "missing"
    return services.score_evaluation(evaluation).status


def task_reap_stale_evaluations() -> int:
    """The periodic backstop (every worker process also reaps every few seconds, see
    `core.workers`): also sends again the tasks of queued runs that were lost."""
    return services.reap_stale_evaluations(requeue_waiting=True, as_task=True)


def task_recompute_board(benchmark_id: int, changes: int | None = None) -> int:
    """Rebuild a benchmark's board (queued when a synchronous recompute failed) unless it
    includes `changes` changes already (a later recompute did). Returns the number of rows
    the board has, or -1 if the benchmark vanished."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        logger.warning("benchmark %s vanished before its board was recomputed", benchmark_id)
        return -1
    return services.recompute_board(benchmark, unless_built=changes).count()


def task_rank_intervals(benchmark_id: int, force: bool = False) -> int:
    """The board's rank intervals and tiers, queued by every recompute (issue 12), and with
    `force` by the board reaper for a snapshot whose build lost them (issue 33). Returns
    the number of rows written: 0 when the board changed meanwhile (the newer recompute
    queued its own) or already has them."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return -1
    return intervals.compute_rank_intervals(benchmark, force=force)


def task_write_board_json(benchmark_id: int) -> int:
    """The board rows' API JSON, queued by every recompute (issue 16). Returns the number of
    rows written: 0 when they already have it, -1 if the benchmark vanished."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return -1
    return board_json.write_board_json(benchmark)


def task_write_board_orders(benchmark_id: int) -> int:
    """The boards' sorted orders, queued by every recompute (issue 16). Returns the number of
    orders written: 0 when the board changed meanwhile (the newer recompute queued its own),
    -1 if the benchmark vanished."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return -1
    return board_orders.write_board_orders(benchmark)
