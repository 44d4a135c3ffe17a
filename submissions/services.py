"""Writes for submissions and evaluation runs: creating an entry, the quota, scoring, imports.
Each state field has exactly one writer: `set_evaluation_status` here,
`set_verification_status` in `submissions.verification`, and `recompute_board` (the
materialised board rows) in `submissions.boards`; both are re-exported here, where the other
apps have always found them."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from benchmark import scoring
from benchmark.models import Benchmark
from benchmark.scoring.evaluate import evaluate_with_contributions
from benchmark.selectors import TestSetFileError, active_testset, load_scoring_testset
from core import audit
from core.exceptions import (
    DomainError,
    InvalidName,
    InvalidPredictions,
    InvalidTransition,
    QuotaExceeded,
)
from core.workers import (
    CONNECTION_ERRORS,
    Heartbeat,
    retry_on_lost_connection,
    worker_id,
    worker_is_gone,
)

from .boards import (
    enqueue_board_recompute,
    recompute_board,
    refresh_board,
    schedule_board_refresh,
)
from .enums import (
    STATUS_TIMESTAMP_FIELD,
    EvaluationStatus,
    FailureCode,
    SubmissionSource,
    VerificationStatus,
)
from .intervals import ComputedReplicates, compute_replicates, store_replicates
from .judge_step import notify_scored
from .models import Evaluation, Submission
from .names import (
    clean_names,
    confusable_key,
    published_name_message,
    refuse_published_lookalike,
)
from .notifications import evaluation_failed_on_commit
from .selectors import published_lookalike
from .verification import (
    Evidence,
    add_verification_listener,
    set_rerun_evidence_check,
    set_verification_status,
    verification_evidence,
)

__all__ = [
    "Evidence",
    "SubmissionDetails",
    "add_verification_listener",
    "create_submission",
    "enqueue_board_recompute",
    "recompute_board",
    "refresh_board",
    "schedule_board_refresh",
    "set_evaluation_status",
    "set_rerun_evidence_check",
    "set_verification_status",
    "verification_evidence",
]

logger = logging.getLogger(__name__)

# How often a run may be started before it is failed (a worker crash hands a job out again).
MAX_SCORING_ATTEMPTS = 3


@dataclass(frozen=True)
class SubmissionDetails:
    """The form's fields, as plain data (a view, the API and a command build it alike)."""

    model_name: str
    institution: str = ""
    contact_email: str = ""
    model_url: str = ""
    paper_url: str = ""
    code_url: str = ""
    is_challenge_entry: bool = False
    team_name: str = ""
    authors: str = ""
    publish: bool = True


# --- the evaluation state machine ---------------------------------------------------------------


def set_evaluation_status(
    evaluation: Evaluation,
    new: EvaluationStatus,
    *,
    actor: Any = None,
    error_code: str = "",
    error_message: str = "",
    note: str = "",
) -> Evaluation:
    """Move `evaluation` to `new`: the one writer of `Evaluation.status`.

    Refuses a move the transition map does not allow (`InvalidTransition`), stamps the new
    state's time, records the failure code and message for `failed` and this worker and a first
    heartbeat for `scoring`, saves only those fields
    and writes an audit row. When a published entry's run gains, changes or loses its scores
    (a move into or out of scored / judging / complete), its benchmark's board is recomputed
    once the transaction commits. Call it inside the caller's transaction.
    """
    current = evaluation.state
    if new not in current.allowed_next:
        raise InvalidTransition(f"An evaluation cannot go from {current.label} to {new.label}.")
    if new == EvaluationStatus.FAILED and not error_code:
        raise ValueError("a failed evaluation needs an error code")
    evaluation.status = new
    fields = ["status"]
    stamp = STATUS_TIMESTAMP_FIELD[new]
    setattr(evaluation, stamp, timezone.now())
    fields.append(stamp)
    if new == EvaluationStatus.FAILED:
        evaluation.error_code, evaluation.error_message = error_code, error_message
        fields += ["error_code", "error_message"]
        evaluation_failed_on_commit(evaluation)  # the submitter is told once this commits
    if new == EvaluationStatus.SCORING:  # this process now holds the run (score_evaluation)
        evaluation.worker, evaluation.heartbeat_at = worker_id(), getattr(evaluation, stamp)
        fields += ["worker", "heartbeat_at"]
    evaluation.save(update_fields=fields)
    audit.record(
        f"submissions.evaluation.{new.value}",
        actor=actor,
        target=evaluation,
        **{"from": current.value, "to": new.value, "note": note or error_message},
    )
    if current.has_scores or new.has_scores:
        submission = evaluation.submission
        if submission.publish:
            schedule_board_refresh(submission.benchmark_id)
    return evaluation


# --- quota ------------------------------------------------------------------------------------


def quota_window_start(now: datetime | None = None) -> datetime:
    """The start of the current quota day: midnight UTC."""
    now = now or timezone.now()
    return now.astimezone(timezone.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def evaluations_used_today(user: Any, benchmark: Benchmark) -> int:
    """Evaluations this user requested of their own submissions on this benchmark since
    midnight UTC (cancelled ones and runs the platform itself failed do not count; a
    maintainer's reruns of other people's entries are not theirs to pay for)."""
    return (
        Evaluation.objects.filter(
            submission__benchmark=benchmark,
            submission__owner=user,
            requested_by=user,
            created_at__gte=quota_window_start(),
        )
        .exclude(status=EvaluationStatus.CANCELLED)
        .exclude(error_code__in=[FailureCode.INTERNAL_ERROR, FailureCode.TEST_SET_UNAVAILABLE])
        .count()
    )


def evaluations_left_today(user: Any, benchmark: Benchmark) -> int:
    return max(0, benchmark.daily_submission_limit - evaluations_used_today(user, benchmark))


# --- submitting ---------------------------------------------------------------------------------


def check_upload_size(benchmark: Benchmark, size: int) -> None:
    """Refuse a file over the benchmark's size cap (`InvalidPredictions`). The form and the API
    call it with the upload's size before reading its content into memory (Django has spooled
    an upload over FILE_UPLOAD_MAX_MEMORY_SIZE to a temporary file by then)."""
    limit = benchmark.max_upload_mb * 1024 * 1024
    if size > limit:
        raise InvalidPredictions(
            f"The file is {size / 1e6:.1f} MB; this benchmark accepts at most "
            f"{benchmark.max_upload_mb} MB."
        )


def validate_predictions(benchmark: Benchmark, raw: bytes) -> scoring.TestSet:
    """Check an upload against the active test set before anything is stored: its size, then
    the scorer's strict reading (JSON, every row and field, the benchmark's length limit on a
    prediction).

    Raises `InvalidPredictions` with the scorer's row-by-row messages, or `DomainError` when
    the benchmark takes no submissions. Returns the parsed test set it was checked against.
    """
    check_upload_size(benchmark, len(raw))
    test_set = active_testset(benchmark)
    if test_set is None:
        raise DomainError(f"{benchmark.name} has no active test set yet; submissions are closed.")
    parsed = load_scoring_testset(test_set)
    try:
        scoring.load_predictions(raw, parsed, max_prediction_chars=benchmark.max_prediction_chars)
    except scoring.PredictionsError as error:
        raise InvalidPredictions(
            [str(problem) for problem in error.problems],
            problems=[
                {"row": problem.row, "field": problem.field, "message": problem.message}
                for problem in error.problems
            ],
            total=error.total,
        ) from None
    return parsed


def create_submission(
    benchmark: Benchmark, *, owner: Any, details: SubmissionDetails, predictions: bytes
) -> Submission:
    """Validate, store and queue a new submission with its first evaluation run.

    Synchronous checks first (the names, normalised and checked by `submissions.names`; size,
    JSON, every row against the test set; a published model name that neither is nor looks
    like another published entry's on this benchmark); any failure raises (`InvalidName`,
    `InvalidPredictions`, ...) and stores nothing. The daily quota is checked under a lock on
    the owner's row, so parallel uploads cannot exceed it; the unique index of published
    names' skeletons settles two look-alikes racing. On commit the scoring task is queued.
    Returns the submission, its names as normalised.
    """
    details = replace(details, **clean_names(vars(details)))
    validate_predictions(benchmark, predictions)
    test_set = active_testset(benchmark)
    relative = Path("predictions") / benchmark.slug / f"{uuid.uuid4().hex}.json"
    _write_private_file(relative, predictions)
    try:
        with transaction.atomic():
            # Lock the owner's row: concurrent uploads by one person queue here, so the count
            # below sees every run committed before this one.
            get_user_model().objects.select_for_update().get(pk=owner.pk)
            if evaluations_left_today(owner, benchmark) <= 0:
                raise QuotaExceeded(
                    f"You have used all {benchmark.daily_submission_limit} evaluations for "
                    f"{benchmark.name} today; the count resets at midnight UTC."
                )
            if details.publish:
                refuse_published_lookalike(benchmark, details.model_name)
            submission = Submission.objects.create(
                benchmark=benchmark,
                owner=owner,
                source=SubmissionSource.UPLOAD,
                model_name_skeleton=confusable_key(details.model_name),
                predictions_file=str(relative),
                predictions_sha256=hashlib.sha256(predictions).hexdigest(),
                predictions_size=len(predictions),
                **vars(details),
            )
            audit.record("submissions.submission.created", actor=owner, target=submission)
            start_evaluation(submission, test_set=test_set, actor=owner)
    except (DomainError, IntegrityError) as error:
        (Path(settings.PODIUM_PRIVATE_DIR) / relative).unlink(missing_ok=True)
        if isinstance(error, IntegrityError):  # a look-alike published meanwhile
            raise _name_taken(benchmark, details.model_name) from None
        raise
    return submission


def _name_taken(benchmark: Benchmark, model_name: str) -> DomainError:
    """The refusal for a published name that lost a race to the unique indexes."""
    existing = published_lookalike(benchmark, model_name)
    if existing is None:
        return DomainError(f"A published entry named {model_name!r} already exists.")
    return InvalidName(published_name_message(model_name, existing, benchmark), field="model_name")


def start_evaluation(submission: Submission, *, test_set: Any, actor: Any) -> Evaluation:
    """Create a run in `received`, queue it, and hand it to the worker when the transaction
    commits. Used for first runs and reruns alike."""
    evaluation = Evaluation.objects.create(
        submission=submission, test_set=test_set, requested_by=actor
    )
    set_evaluation_status(evaluation, EvaluationStatus.QUEUED, actor=actor)
    transaction.on_commit(lambda: enqueue_scoring(evaluation.pk))
    return evaluation


def enqueue_scoring(evaluation_id: int) -> None:
    # Imported here: django_q's async_task pulls in the broker machinery, which services
    # that never queue anything (and the scoring package's tests) do not need.
    from django_q.tasks import async_task

    async_task(
        "submissions.tasks.task_score_evaluation", evaluation_id, q_options={"group": "scoring"}
    )


def _write_private_file(relative: Path, content: bytes) -> None:
    target = Path(settings.PODIUM_PRIVATE_DIR) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(content)
    os.replace(temporary, target)


# --- scoring (the worker's side) -------------------------------------------------------------


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


def _compute(evaluation: Evaluation) -> tuple[scoring.ScoreResult, ComputedReplicates]:
    """The run's result, and its metrics on every bootstrap replicate (issue 12), from one
    scoring pass."""
    submission = evaluation.submission
    test_set = load_scoring_testset(evaluation.test_set)
    try:
        raw = submission.predictions_path.read_bytes()
        predictions = scoring.load_predictions(
            raw, test_set, max_prediction_chars=submission.benchmark.max_prediction_chars
        )
    except scoring.PredictionsError as error:
        raise InvalidPredictions([str(problem) for problem in error.problems]) from None
    result, contributions = evaluate_with_contributions(test_set, predictions)
    replicates = compute_replicates(
        evaluation.test_set.checksum,
        submission.benchmark.bootstrap_replicates,
        test_set,
        contributions,
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


def reap_stale_evaluations(*, requeue_waiting: bool = False) -> int:
    """Hand runs whose worker died back to the queue, or fail them once they used up their
    attempts; returns how many were touched. A run in `scoring` is dead when its heartbeat is
    older than PODIUM_SCORING_STALE_SECONDS, or at once when its worker ran on this host and
    that process is gone. Each worker process runs this every PODIUM_WORKER_REAP_SECONDS
    (`core.workers`); it costs one indexed query when nothing is stale.

    With `requeue_waiting` (the periodic schedule), runs queued for longer than the broker's
    retry period are queued again, in case their task was lost; a duplicate delivery is
    refused by the claim.
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
        waiting = Evaluation.objects.filter(
            status=EvaluationStatus.QUEUED,
            queued_at__lt=now - timedelta(seconds=settings.Q_CLUSTER.get("retry", 720)),
        )
        for pk in waiting.values_list("pk", flat=True):
            enqueue_scoring(pk)
            touched += 1
    return touched


# --- imported published results ---------------------------------------------------------------


def import_published_result(
    benchmark: Benchmark,
    *,
    model_name: str,
    values: dict[str, float | None],
    verified_at: datetime,
    is_baseline: bool = False,
    actor: Any = None,
    institution: str = "",
    model_url: str = "",
    note: str = "",
) -> Submission:
    """Put a result published elsewhere (e.g. the official board, spec 7) on the Official board.

    Creates a `Submission` (source imported, published, no predictions file, no owner) and a
    run with the given metric values and no test set, walks the run through the state machine
    (received -> queued -> scoring -> scored -> complete, each step audited, noted as an
    import) and verifies the entry as of `verified_at`, which is also its published date (the
    board's date column, kept when the row is later withdrawn and verified again). Metric keys the benchmark does not
    have are refused (`DomainError`); the names are normalised and checked as an upload's
    (`InvalidName`), and a model name that is or looks like a published entry's is refused;
    metrics not given are missing. The run requests nothing on anyone's quota. The board is
    recomputed on commit. Returns the submission.
    """
    known = set(benchmark.metrics.values_list("key", flat=True))
    unknown = sorted(set(values) - known)
    if unknown:
        raise DomainError(f"{benchmark.name} has no metric {', '.join(unknown)}.")
    names = clean_names({"model_name": model_name, "institution": institution})
    model_name = names["model_name"]
    note = note or "imported published result"
    with transaction.atomic():
        refuse_published_lookalike(benchmark, model_name)
        submission = Submission.objects.create(
            benchmark=benchmark,
            source=SubmissionSource.IMPORTED,
            model_name=model_name,
            model_name_skeleton=confusable_key(model_name),
            institution=names["institution"],
            model_url=model_url,
            is_baseline=is_baseline,
            publish=True,
            published_at=verified_at,
        )
        audit.record("submissions.submission.imported", actor=actor, target=submission, note=note)
        evaluation = Evaluation.objects.create(
            submission=submission,
            metrics={key: values.get(key) for key in known},
            result={"source": "imported"},
        )
        for state in (
            EvaluationStatus.QUEUED,
            EvaluationStatus.SCORING,
            EvaluationStatus.SCORED,
            EvaluationStatus.COMPLETE,
        ):
            set_evaluation_status(evaluation, state, actor=actor, note=note)
        set_verification_status(
            submission, VerificationStatus.VERIFIED, actor=actor, note=note, verified_at=verified_at
        )
    return submission
