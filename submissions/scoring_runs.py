"""Scoring a run, the worker's side: claiming it, computing its metrics and replicates under a
heartbeat, storing them, and reaping runs whose worker died (docs/workers.md). Re-exported by
`submissions.services`."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from benchmark.plugins import ScoredResult, plugin_for
from benchmark.scoring.errors import PredictionsError
from benchmark.selectors import TestSetFileError, load_scoring_testset
from core.exceptions import DomainError, InvalidPredictions, StorageUnavailable
from core.workers import (
    CONNECTION_ERRORS,
    Heartbeat,
    retry_on_lost_connection,
    worker_id,
    worker_is_gone,
)

from .enums import EvaluationStatus, FailureCode
from .evaluation_status import set_evaluation_status
from .intervals import ComputedReplicates, compute_replicates, store_replicates
from .judge_step import notify_scored
from .models import Evaluation
from .selectors.files import predictions_bytes

logger = logging.getLogger(__name__)

# How often a run may be started before it is failed (a worker crash hands a job out again).
MAX_SCORING_ATTEMPTS = 3


def enqueue_scoring(evaluation_id: int) -> None:
    # Imported here: django_q's async_task pulls in the broker machinery, which services
    # that never queue anything (and the scoring package's tests) do not need.
    from django_q.tasks import async_task

    async_task(
        "submissions.tasks.task_score_evaluation", evaluation_id, q_options={"group": "scoring"}
    )
    # The broker holds the task now, and delivers it (again after `Q_RETRY` if a worker took
    # it and died): the backstop leaves the run to it (`_send_again`).
    Evaluation.objects.filter(pk=evaluation_id).update(sent_at=timezone.now())


def scoring_heartbeat_seconds() -> float:
    return float(settings.PODIUM_SCORING_HEARTBEAT_SECONDS)


def scoring_stale_after() -> timedelta:
    """A run in `scoring` whose heartbeat is older than this has lost its worker."""
    return timedelta(seconds=settings.PODIUM_SCORING_STALE_SECONDS)


TOO_MANY_ATTEMPTS_MESSAGE = (
    "Scoring was interrupted too many times (its worker stopped {attempts} times); "
    "please contact the maintainers."
)


def _held_elsewhere(evaluation: Evaluation, now: datetime) -> bool:
    """Whether a run in `scoring` is held by another worker that is still alive: its heartbeat
    is fresh and, if that worker ran on this host, its process still exists."""
    if evaluation.worker == worker_id():
        return False
    fresh = evaluation.heartbeat_at and now - evaluation.heartbeat_at < scoring_stale_after()
    return bool(fresh) and not worker_is_gone(evaluation.worker)


def score_evaluation(evaluation: Evaluation) -> Evaluation:
    """Claim a queued run for this worker, compute its automatic metrics and store them; safe
    to call again for the same run (the broker delivers a task again after a crash).

    The claim refuses a run that already has scores or has ended, and one that another live
    worker holds (fresh heartbeat); it takes over a run whose worker died (scoring -> queued
    -> scoring), counting an attempt, and fails the run after MAX_SCORING_ATTEMPTS. While the
    metrics are computed a thread beats every PODIUM_SCORING_HEARTBEAT_SECONDS, so the reaper
    can tell a slow run from a dead one. If the database connection breaks, it is closed and
    the whole attempt is made once more on a new one; if that fails too, the heartbeat has
    stopped and the reaper hands the run out again. Failures are stored on the run with a
    code and a message the submitter can act on; nothing is left in `scoring`.
    """
    return retry_on_lost_connection(
        lambda: _score_once(evaluation.pk), what=f"scoring evaluation {evaluation.pk}"
    )


def _score_once(evaluation_id: int) -> Evaluation:
    evaluation = _claim(evaluation_id)
    if evaluation.state != EvaluationStatus.SCORING or evaluation.worker != worker_id():
        return evaluation  # refused: finished, failed, or another worker's
    me = worker_id()

    def beat() -> bool:
        still_ours = Evaluation.objects.filter(
            pk=evaluation_id, status=EvaluationStatus.SCORING, worker=me
        )
        return still_ours.update(heartbeat_at=timezone.now()) == 1

    # A beat comes from another connection: inside an outer transaction (a test, a caller's
    # atomic block) it could not see the uncommitted claim, and nobody else could either.
    beating = not connection.in_atomic_block
    try:
        if beating:
            with Heartbeat(beat, every=scoring_heartbeat_seconds(), name=f"score-{evaluation_id}"):
                result, replicates = _compute(evaluation)
        else:
            result, replicates = _compute(evaluation)
    except CONNECTION_ERRORS:
        raise  # the connection, not the submission: retried once, else reaped
    except StorageUnavailable:
        logger.error("evaluation %s: the private file store cannot be reached", evaluation.pk)
        return _fail(
            evaluation,
            FailureCode.FILES_UNAVAILABLE,
            "The server's file store could not be reached; the maintainers have been told. "
            "This run does not count towards your quota; please try again later.",
        )
    except DomainError as error:
        return _fail(evaluation, FailureCode.INVALID_PREDICTIONS, str(error))
    except TestSetFileError as error:
        logger.error("evaluation %s: %s", evaluation.pk, error)
        return _fail(
            evaluation,
            FailureCode.TEST_SET_UNAVAILABLE,
            "The test set could not be read on the server; the maintainers have been told. "
            "This run does not count towards your quota.",
        )
    except Exception:
        logger.exception("evaluation %s failed", evaluation.pk)
        return _fail(
            evaluation,
            FailureCode.INTERNAL_ERROR,
            "An internal error stopped scoring. This run does not count towards your quota; "
            "please try again later.",
        )
    with transaction.atomic():
        evaluation = Evaluation.objects.select_for_update().get(pk=evaluation.pk)
        if evaluation.state != EvaluationStatus.SCORING or evaluation.worker != me:
            return evaluation  # handed to another worker meanwhile, which stores its own
        evaluation.metrics = result.metrics
        evaluation.result = result.to_dict()
        evaluation.scorer_version = result.scorer_version
        evaluation.save(update_fields=["metrics", "result", "scorer_version"])
        store_replicates(evaluation, replicates)
        set_evaluation_status(evaluation, EvaluationStatus.SCORED)
        if not plugin_for(evaluation.submission.benchmark).judge_step:
            # The benchmark has no judge step (MedSG-Bench): every metric is in.
            set_evaluation_status(
                evaluation, EvaluationStatus.COMPLETE, note="no judge step: every metric is in"
            )
        notify_scored(evaluation.pk)
    return evaluation


def _claim(evaluation_id: int) -> Evaluation:
    """Mark the run `scoring` for this worker and count the attempt; or return it as it is when
    there is nothing to do here (see score_evaluation)."""
    with transaction.atomic():
        evaluation = (
            Evaluation.objects.select_for_update()
            .select_related("submission")
            .get(pk=evaluation_id)
        )
        state = evaluation.state
        if state.has_scores or state.is_terminal or state == EvaluationStatus.RECEIVED:
            return evaluation
        if state == EvaluationStatus.SCORING:
            if _held_elsewhere(evaluation, timezone.now()):
                return evaluation
            set_evaluation_status(
                evaluation, EvaluationStatus.QUEUED, note="picked up again: its worker stopped"
            )
        if evaluation.attempts >= MAX_SCORING_ATTEMPTS:
            return set_evaluation_status(
                evaluation,
                EvaluationStatus.FAILED,
                error_code=FailureCode.TOO_MANY_ATTEMPTS,
                error_message=TOO_MANY_ATTEMPTS_MESSAGE.format(attempts=evaluation.attempts),
            )
        set_evaluation_status(evaluation, EvaluationStatus.SCORING)
        evaluation.attempts += 1
        evaluation.save(update_fields=["attempts"])
    return evaluation


def _compute(evaluation: Evaluation) -> tuple[ScoredResult, ComputedReplicates]:
    """The run's result, and its metrics on every bootstrap replicate (issue 12), from one
    scoring pass by the benchmark's plugin."""
    submission = evaluation.submission
    benchmark = submission.benchmark
    plugin = plugin_for(benchmark)
    test_set = load_scoring_testset(evaluation.test_set)
    try:
        raw = predictions_bytes(submission)
        predictions = plugin.check_predictions(
            raw,
            test_set,
            options=submission.options,
            max_prediction_chars=benchmark.max_prediction_chars,
        )
    except PredictionsError as error:
        raise InvalidPredictions([str(problem) for problem in error.problems]) from None
    result, contributions = plugin.score(test_set, predictions, options=submission.options)
    replicates = compute_replicates(
        evaluation.test_set.checksum,
        benchmark.bootstrap_replicates,
        test_set,
        contributions,
        plugin=plugin,
    )
    return result, replicates


def _fail(evaluation: Evaluation, code: FailureCode, message: str) -> Evaluation:
    with transaction.atomic():
        evaluation = Evaluation.objects.select_for_update().get(pk=evaluation.pk)
        if evaluation.state.is_terminal:
            return evaluation
        return set_evaluation_status(
            evaluation, EvaluationStatus.FAILED, error_code=code, error_message=message
        )


def reap_stale_evaluations(*, requeue_waiting: bool = False, as_task: bool = False) -> int:
    """Hand runs whose worker died back to the queue, or fail them once they used up their
    attempts; returns how many were touched. A run in `scoring` is dead when its heartbeat is
    older than PODIUM_SCORING_STALE_SECONDS, or at once when its worker ran on this host and
    that process is gone. Each worker process runs this every PODIUM_WORKER_REAP_SECONDS
    (`core.workers`); it costs one indexed query when nothing is stale.

    With `requeue_waiting` (the periodic schedule), queued runs whose task was lost are sent
    again (`_send_again`); `as_task`: this call runs as a task of the broker's (the
    schedule's), which holds that one task while it runs.
    """
    now = timezone.now()
    host = worker_id().rpartition(":")[0]
    suspects = Evaluation.objects.filter(status=EvaluationStatus.SCORING).filter(
        Q(heartbeat_at__isnull=True)
        | Q(heartbeat_at__lt=now - scoring_stale_after())
        | Q(worker__startswith=f"{host}:")
    )
    touched = 0
    for pk, worker, heartbeat_at in suspects.values_list("pk", "worker", "heartbeat_at"):
        fresh = heartbeat_at and now - heartbeat_at < scoring_stale_after()
        if (fresh and not worker_is_gone(worker)) or worker == worker_id():
            continue  # cheap filter; decided again under the lock
        with transaction.atomic():
            evaluation = Evaluation.objects.select_for_update().get(pk=pk)
            if evaluation.state != EvaluationStatus.SCORING or _held_elsewhere(
                evaluation, timezone.now()
            ):
                continue
            if evaluation.worker == worker_id():
                continue  # this very process is scoring it
            touched += 1
            if evaluation.attempts >= MAX_SCORING_ATTEMPTS:
                set_evaluation_status(
                    evaluation,
                    EvaluationStatus.FAILED,
                    error_code=FailureCode.TOO_MANY_ATTEMPTS,
                    error_message=TOO_MANY_ATTEMPTS_MESSAGE.format(attempts=evaluation.attempts),
                )
                continue
            why = "is gone" if worker_is_gone(evaluation.worker) else "stopped beating"
            set_evaluation_status(
                evaluation, EvaluationStatus.QUEUED, note=f"requeued: its worker {why}"
            )
            transaction.on_commit(lambda pk=pk: enqueue_scoring(pk))
    if requeue_waiting:
        touched += _send_again(now, holding=1 if as_task else 0)
    return touched


def _send_again(now: datetime, *, holding: int) -> int:
    """Send again the tasks of queued runs that the broker does not hold; how many. Both
    brokers deliver a task again when the worker that took it dies (`Q_RETRY`), so a task is
    lost only on its way to the broker (the process died between the run's commit and
    `enqueue_scoring`, or the broker was unreachable then: the run was queued after it was
    last sent), or when the broker itself loses what it held (a Redis without persistence,
    restarted): then, once the broker holds no task at all, every run still queued. Runs
    queued within `PODIUM_TASK_SEND_GRACE_SECONDS` are left to their sender. A run waiting
    in a long queue is never sent twice (each pass did so once the wait passed `Q_RETRY`,
    doubling the backlog); a duplicate that turns up after all is refused by the claim."""
    from core.task_broker import lost_tasks  # django_q's broker: only where used

    waiting = Evaluation.objects.annotate(last_queued=F("queued_at")).filter(
        status=EvaluationStatus.QUEUED,
        last_queued__lt=now - timedelta(seconds=settings.PODIUM_TASK_SEND_GRACE_SECONDS),
    )
    lost = lost_tasks(waiting, holding=holding)
    for pk in lost:
        logger.warning("scoring run %s was queued but its task is lost: sending it again", pk)
        enqueue_scoring(pk)
    return len(lost)


# --- imported published results ---------------------------------------------------------------
