"""A battle job's life outside the worker: its one status writer, queueing it, finishing it
(the battles stored, the category rated), failing, cancelling, and reaping jobs whose worker
died. Running a job again schedules a new one, so it lives with the scheduling
(`schedule.rerun_battles`), which builds on this module and not the other way round."""

from __future__ import annotations

import logging
from collections import defaultdict
from functools import partial
from typing import Any

from django.db import transaction

from benchmark.scoring.battles import battle_winner
from core.exceptions import DomainError
from inference import lifecycle
from inference.settings import KindSettings

from ..enums import ItemState, JobStatus, Shown
from ..models import Battle, BattleItem, BattleJob
from .rating import rate_category_now

logger = logging.getLogger(__name__)

# The battle jobs' timing settings: PODIUM_ARENA_<NAME>, else the judge's PODIUM_JUDGE_<NAME>.
ARENA = KindSettings("PODIUM_ARENA")
# Maintainers rerun and cancel battles with the judge's permission: it is the same judge.
RERUN_PERMISSION = "judging.rerun_judgejob"


def enqueue_job(job_id: int) -> None:
    # Imported here: django_q pulls in its models, and this module is imported at start-up.
    from django_q.tasks import async_task

    async_task("arena.tasks.task_run_battle_job", job_id, q_options={"group": "battles"})
    lifecycle.record_sent(BattleJob, job_id)


def set_job_status(
    job: BattleJob, new: JobStatus, *, actor: Any = None, message: str | None = None, note: str = ""
) -> BattleJob:
    """The one writer of `BattleJob.status` (`inference.lifecycle.set_status`: the move checked,
    the times stamped, an audit row `arena.job.<state>`). Call it inside the caller's
    transaction."""
    return lifecycle.set_status(BATTLE_JOBS, job, new, actor=actor, message=message, note=note)


def _battle(job: BattleJob, first: BattleItem, second: BattleItem) -> Battle:
    """The battle of two judged rounds (`first` is round 1): the reading of the round that
    showed model A's answer first and of the one that showed model B's first make the winner
    (MEDIC's rule)."""
    with_a_first, with_b_first = (
        (first, second) if first.shown_first == Shown.MODEL_A else (second, first)
    )
    return Battle(
        benchmark_id=job.benchmark_id,
        category=job.category,
        question=first.question,
        model_a_id=job.submission_id,
        model_b_id=first.opponent_id,
        job=job,
        round1_first=first.shown_first,
        round1_prompt_sha256=first.prompt_sha256,
        round1_verdict=first.verdict.answer,
        round1_reading=first.reading,
        round2_prompt_sha256=second.prompt_sha256,
        round2_verdict=second.verdict.answer,
        round2_reading=second.reading,
        winner=battle_winner(with_a_first.reading, with_b_first.reading),
        judge_model=job.model,
    )


def finish_job(job: BattleJob) -> BattleJob:
    """Once no item is pending: store a battle for every pairing and question whose two rounds
    were judged, count the ones whose judge calls got no usable verdict as dropped (never
    guessed), end the job and rate the category on commit. A battle the pair already has on
    that question (stored by another job meanwhile) is kept as it is: battles are never
    rewritten."""
    with transaction.atomic():
        locked = BattleJob.objects.select_for_update().get(pk=job.pk)
        if locked.state != JobStatus.RUNNING:
            return locked
        rounds: dict[tuple[int, str], dict[int, BattleItem]] = defaultdict(dict)
        for item in locked.items.select_related("verdict").order_by("id"):
            rounds[(item.opponent_id, item.question)][item.round] = item
        battles, dropped = [], 0
        for pair in sorted(rounds):
            first, second = rounds[pair].get(1), rounds[pair].get(2)
            if first is None or second is None or ItemState.FAILED in {first.state, second.state}:
                dropped += 1
                continue
            battles.append(_battle(locked, first, second))
        Battle.objects.bulk_create(battles, ignore_conflicts=True)
        locked.battles_judged = locked.battles.count()
        locked.battles_dropped = dropped
        locked.save(update_fields=["battles_judged", "battles_dropped"])
        message = f"{locked.battles_judged:,} battles judged"
        if dropped:
            message += (
                f", {dropped:,} dropped (no usable verdict after "
                f"{locked.endpoint.max_attempts} attempts; not rated, never guessed)"
            )
        set_job_status(locked, JobStatus.DONE, message=f"{message}.")
        transaction.on_commit(partial(rate_category_now, locked.benchmark_id, locked.category))
    return locked


def fail_job(job: BattleJob, message: str) -> BattleJob:
    """Fail the job with `message`: it stores no battle (its verdicts stay cached, so a rerun
    pays only for what was not judged)."""
    with transaction.atomic():
        locked = BattleJob.objects.select_for_update().get(pk=job.pk)
        if locked.state.is_terminal:
            return locked
        set_job_status(locked, JobStatus.FAILED, message=message)
    return locked


def may_manage_jobs(actor: Any) -> bool:
    """Whether `actor` may cancel a battle job or run it again (`RERUN_PERMISSION`)."""
    return bool(getattr(actor, "is_authenticated", False) and actor.has_perm(RERUN_PERMISSION))


def cancel_job(job: BattleJob, *, actor: Any) -> BattleJob:
    """A maintainer stops a job (its worker notices at its next heartbeat): it stores no battle.
    `DomainError` without the permission; a finished job is returned as it is."""
    if not may_manage_jobs(actor):
        raise DomainError("Only a maintainer may cancel battles.")
    with transaction.atomic():
        locked = BattleJob.objects.select_for_update().get(pk=job.pk)
        if locked.state.is_terminal:
            return locked
        set_job_status(locked, JobStatus.CANCELLED, actor=actor, message="Cancelled.")
    return locked


def reap_stale_jobs(*, as_task: bool = False) -> int:
    """Hand jobs whose worker stopped beating back to the queue (or fail them once picked up
    too often), and queue again jobs that waited too long for a worker. Scheduled every
    minute."""
    return lifecycle.reap(BATTLE_JOBS, as_task=as_task)


def reap_dead_workers_jobs() -> int:
    """Only the stale half of `reap_stale_jobs`, for the workers' few-second watchdog."""
    return lifecycle.reap_stale(BATTLE_JOBS)


BATTLE_JOBS = lifecycle.JobKind(
    model=BattleJob,
    label="A battle job",
    audit_prefix="arena.job",
    stale_after=ARENA.stale_after,
    max_runs=ARENA.max_runs,
    enqueue=lambda pk: enqueue_job(pk),
    fail=lambda job, message: fail_job(job, message),
    too_many_runs="The battles' worker stopped too many times; a maintainer can run them again.",
    select_related=("endpoint", "benchmark"),
)
