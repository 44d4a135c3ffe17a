"""Writes for submissions, evaluation runs and the boards. Each state field has exactly one
writer here: `set_evaluation_status`, `set_verification_status`, and `recompute_board` for the
materialised board rows."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark import scoring
from benchmark.enums import RankingScope
from benchmark.models import Benchmark
from benchmark.scoring.ranking import Entry, MetricSpec, RankedEntry, RankingPolicy, rank_entries
from benchmark.scoring.tasks import JUDGE_METRICS
from benchmark.selectors import TestSetFileError, active_testset, load_scoring_testset
from core import audit
from core.exceptions import DomainError, InvalidPredictions, InvalidTransition, QuotaExceeded

from .enums import (
    STATES_JUDGE_PENDING,
    STATUS_TIMESTAMP_FIELD,
    VERIFICATION_NEEDS_REASON,
    BoardKind,
    EvaluationStatus,
    FailureCode,
    SubmissionSource,
    VerificationStatus,
)
from .judge_step import notify_scored
from .models import BoardEntry, Evaluation, Submission
from .notifications import evaluation_failed_on_commit
from .selectors import (
    board_candidates,
    metric_specs,
    published_name_taken,
    ranking_entry,
    ranking_policy,
)

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
    state's time, records the failure code and message for `failed`, saves only those fields
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


# --- verification -----------------------------------------------------------------------------


def set_verification_status(
    submission: Submission,
    new: VerificationStatus,
    *,
    actor: Any,
    note: str = "",
    reason: str = "",
    verified_at: datetime | None = None,
) -> Submission:
    """Move an entry along the verification workflow: the one writer of
    `Submission.verification_status` (and `verified_at`, `verified_by`, `verification_reason`).

    Refuses, with `InvalidTransition`: a move the transition map does not allow; verifying an
    evaluate-only entry (it is never on a board) or a run without scores; the direct
    community -> verified move for an entry the maintainers did not evaluate themselves (an
    uploaded one goes through the re-run); rejecting or withdrawing without a `reason` (the
    submitter is shown it). `verified_at` defaults to now; an imported published result passes
    the date the original board verified it. Locks the row, saves only these fields, writes one
    `submissions.verification.<state>` audit row {from, to, note, reason} and, when the Official
    board changes, recomputes the board on commit.
    """
    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission.pk)
        current = VerificationStatus(submission.verification_status)
        if new not in current.allowed_next:
            raise InvalidTransition(f"An entry cannot go from {current.label} to {new.label}.")
        if new == VerificationStatus.NOMINATED and not submission.publish:
            raise InvalidTransition(
                "An evaluate-only entry is never published, so it cannot be nominated."
            )
        if new == VerificationStatus.VERIFIED:
            if not submission.publish:
                raise InvalidTransition(
                    "An evaluate-only entry is never published, so it cannot be verified."
                )
            if current == VerificationStatus.COMMUNITY and not submission.is_maintainer_result:
                raise InvalidTransition(
                    "An uploaded entry is verified through the workflow (nominate, contact, "
                    "re-run); only results the maintainers produced are verified directly."
                )
        reason = reason.strip()
        if new in VERIFICATION_NEEDS_REASON and not reason:
            raise InvalidTransition(
                f"Say why the entry is {new.label.lower()}: the authors see it."
            )
        submission.verification_status = new
        submission.verification_changed_at = timezone.now()
        if new == VerificationStatus.VERIFIED:
            submission.verified_at = verified_at or timezone.now()
            submission.verified_by = actor if getattr(actor, "is_authenticated", False) else None
        elif current == VerificationStatus.VERIFIED:
            submission.verified_at, submission.verified_by = None, None
        submission.verification_reason = reason if new in VERIFICATION_NEEDS_REASON else ""
        submission.save(
            update_fields=[
                "verification_status",
                "verification_changed_at",
                "verified_at",
                "verified_by",
                "verification_reason",
            ]
        )
        audit.record(
            f"submissions.verification.{new.value}",
            actor=actor,
            target=submission,
            **{"from": current.value, "to": new.value, "note": note, "reason": reason},
        )
        if submission.publish and VerificationStatus.VERIFIED in (current, new):
            schedule_board_refresh(submission.benchmark_id)
        for listener in _verification_listeners:
            transaction.on_commit(partial(listener, submission.pk, current.value, new.value))
    return submission


# Callbacks (submission_id, from, to) after a committed verification move: notifications.
_verification_listeners: list[Any] = []


def add_verification_listener(listener: Any) -> None:
    if listener not in _verification_listeners:
        _verification_listeners.append(listener)


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
    """Refuse a file over the benchmark's size cap (`InvalidPredictions`). A form calls it
    with the upload's declared size before reading the file into memory."""
    limit = benchmark.max_upload_mb * 1024 * 1024
    if size > limit:
        raise InvalidPredictions(
            f"The file is {size / 1e6:.1f} MB; this benchmark accepts at most "
            f"{benchmark.max_upload_mb} MB."
        )


def validate_predictions(benchmark: Benchmark, raw: bytes) -> scoring.TestSet:
    """Check an upload against the active test set before anything is stored.

    Raises `InvalidPredictions` with the scorer's row-by-row messages, or `DomainError` when
    the benchmark takes no submissions. Returns the parsed test set it was checked against.
    """
    check_upload_size(benchmark, len(raw))
    test_set = active_testset(benchmark)
    if test_set is None:
        raise DomainError(f"{benchmark.name} has no active test set yet; submissions are closed.")
    parsed = load_scoring_testset(test_set)
    try:
        scoring.load_predictions(raw, parsed)
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

    Synchronous checks first (size, JSON, every row against the test set, a published model
    name free on this benchmark); any failure raises and stores nothing. The daily quota is
    checked under a lock on the owner's row, so parallel uploads cannot exceed it. On commit
    the scoring task is queued. Returns the submission.
    """
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
            if details.publish and published_name_taken(benchmark, details.model_name):
                raise DomainError(
                    f"A published entry named {details.model_name!r} already exists on "
                    f"{benchmark.name}; choose another model name."
                )
            submission = Submission.objects.create(
                benchmark=benchmark,
                owner=owner,
                source=SubmissionSource.UPLOAD,
                predictions_file=str(relative),
                predictions_sha256=hashlib.sha256(predictions).hexdigest(),
                predictions_size=len(predictions),
                **vars(details),
            )
            audit.record("submissions.submission.created", actor=owner, target=submission)
            start_evaluation(submission, test_set=test_set, actor=owner)
    except (DomainError, IntegrityError) as error:
        (Path(settings.PODIUM_PRIVATE_DIR) / relative).unlink(missing_ok=True)
        if isinstance(error, IntegrityError):
            raise DomainError(
                f"A published entry named {details.model_name!r} already exists; choose another."
            ) from None
        raise
    return submission


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


def score_evaluation(evaluation: Evaluation) -> Evaluation:
    """Compute the automatic metrics of a queued run and store them; idempotent.

    A run that already has scores is returned untouched (the broker may deliver a job twice).
    A run found in `scoring` was interrupted: it is scored again unless it has used up its
    attempts. Failures are stored on the run with a code and a message the submitter can act
    on; nothing is left in `scoring`.
    """
    with transaction.atomic():
        evaluation = Evaluation.objects.select_for_update().get(pk=evaluation.pk)
        if evaluation.state.has_scores or evaluation.state.is_terminal:
            return evaluation
        if evaluation.attempts >= MAX_SCORING_ATTEMPTS:
            return set_evaluation_status(
                evaluation,
                EvaluationStatus.FAILED,
                error_code=FailureCode.TOO_MANY_ATTEMPTS,
                error_message="Scoring was interrupted too many times; please contact the maintainers.",
            )
        if evaluation.state == EvaluationStatus.QUEUED:
            set_evaluation_status(evaluation, EvaluationStatus.SCORING)
        evaluation.attempts += 1
        evaluation.save(update_fields=["attempts"])

    try:
        result = _compute(evaluation)
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
        if evaluation.state != EvaluationStatus.SCORING:
            return evaluation  # another delivery finished first
        evaluation.metrics = result.metrics
        evaluation.result = result.to_dict()
        evaluation.scorer_version = result.scorer_version
        evaluation.save(update_fields=["metrics", "result", "scorer_version"])
        set_evaluation_status(evaluation, EvaluationStatus.SCORED)
        notify_scored(evaluation.pk)
    return evaluation


def _compute(evaluation: Evaluation) -> scoring.ScoreResult:
    submission = evaluation.submission
    test_set = load_scoring_testset(evaluation.test_set)
    try:
        raw = submission.predictions_path.read_bytes()
        predictions = scoring.load_predictions(raw, test_set)
    except scoring.PredictionsError as error:
        raise InvalidPredictions([str(problem) for problem in error.problems]) from None
    return scoring.evaluate(test_set, predictions)


def _fail(evaluation: Evaluation, code: FailureCode, message: str) -> Evaluation:
    with transaction.atomic():
        evaluation = Evaluation.objects.select_for_update().get(pk=evaluation.pk)
        if evaluation.state.is_terminal:
            return evaluation
        return set_evaluation_status(
            evaluation, EvaluationStatus.FAILED, error_code=code, error_message=message
        )


def reap_stale_evaluations(*, older_than: timedelta | None = None) -> int:
    """Hand runs stuck in `scoring` (their worker died) back to the queue, or fail them once
    they used up their attempts. Returns how many were touched. Run periodically."""
    older_than = older_than or timedelta(seconds=settings.Q_CLUSTER["timeout"] * 2)
    cutoff = timezone.now() - older_than
    touched = 0
    stale = Evaluation.objects.filter(
        status=EvaluationStatus.SCORING, scoring_started_at__lt=cutoff
    ).values_list("pk", flat=True)
    for pk in stale:
        with transaction.atomic():
            evaluation = Evaluation.objects.select_for_update().get(pk=pk)
            if evaluation.state != EvaluationStatus.SCORING:
                continue
            if evaluation.attempts >= MAX_SCORING_ATTEMPTS:
                set_evaluation_status(
                    evaluation,
                    EvaluationStatus.FAILED,
                    error_code=FailureCode.TOO_MANY_ATTEMPTS,
                    error_message="Scoring was interrupted too many times; please contact the maintainers.",
                )
            else:
                set_evaluation_status(
                    evaluation, EvaluationStatus.QUEUED, note="requeued after a stalled worker"
                )
                transaction.on_commit(lambda pk=pk: enqueue_scoring(pk))
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
    import) and verifies the entry as of `verified_at`. Metric keys the benchmark does not
    have are refused (`DomainError`), as is a model name a published entry already uses;
    metrics not given are missing. The run requests nothing on anyone's quota. The board is
    recomputed on commit. Returns the submission.
    """
    known = set(benchmark.metrics.values_list("key", flat=True))
    unknown = sorted(set(values) - known)
    if unknown:
        raise DomainError(f"{benchmark.name} has no metric {', '.join(unknown)}.")
    note = note or "imported published result"
    with transaction.atomic():
        if published_name_taken(benchmark, model_name):
            raise DomainError(f"A published entry named {model_name!r} already exists.")
        submission = Submission.objects.create(
            benchmark=benchmark,
            source=SubmissionSource.IMPORTED,
            model_name=model_name,
            institution=institution,
            model_url=model_url,
            is_baseline=is_baseline,
            publish=True,
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


# --- the boards -------------------------------------------------------------------------------


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

        now = timezone.now()
        BoardEntry.objects.filter(benchmark=benchmark).delete()
        rows = BoardEntry.objects.bulk_create(
            [
                _board_entry(benchmark, run, ranked[run.submission_id], highlights, computed_at=now)
                for run in runs
            ]
        )
    rows.sort(key=lambda row: (row.board, row.rank))
    return rows


def _judged_over(run: Evaluation) -> dict[str, dict[str, int]]:
    """The judge metrics the run publishes over a subset of their items (accepted by a
    maintainer: `judging.services.accept_partial_judgement`)."""
    counts = (run.result or {}).get("counts") or {}
    return {
        name: {"judged": counts[name]["scored"], "items": counts[name]["total"]}
        for name in JUDGE_METRICS
        if name in counts
        and run.metrics.get(name) is not None
        and counts[name].get("scored", 0) < counts[name].get("total", 0)
    }


def _board_entry(
    benchmark: Benchmark,
    run: Evaluation,
    ranked: RankedEntry,
    highlights: dict[int, dict[str, str]],
    *,
    computed_at: datetime,
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
        values=run.metrics,
        highlights=highlights.get(submission.pk, {}),
        judge_pending=run.state in STATES_JUDGE_PENDING,
        judged_over=_judged_over(run),
        listed_at=(submission.verified_at if submission.is_verified else None)
        or run.scored_at
        or run.created_at,
        computed_at=computed_at,
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
