"""The evaluation state machine: `set_evaluation_status` is the one writer of
`Evaluation.status` (re-exported by `submissions.services`, where the other apps find it)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from core import audit
from core.exceptions import InvalidTransition
from core.workers import worker_id

from .board_refresh import schedule_board_refresh
from .enums import (
    STATUS_TIMESTAMP_FIELD,
    EvaluationStatus,
    SnapshotReason,
    SubmissionSource,
    VerificationStatus,
)
from .models import Evaluation
from .notifications import evaluation_failed_on_commit, evaluation_finished_on_commit
from .snapshots import SnapshotRequest


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
    if new == EvaluationStatus.COMPLETE or (
        new == EvaluationStatus.SCORED and current == EvaluationStatus.SCORING
    ):
        evaluation_finished_on_commit(evaluation)  # told once the numbers have committed
    audit.record(
        f"submissions.evaluation.{new.value}",
        actor=actor,
        target=evaluation,
        **{"from": current.value, "to": new.value, "note": note or error_message},
    )
    if current.has_scores or new.has_scores:
        submission = evaluation.submission
        if submission.publish:
            schedule_board_refresh(
                submission.benchmark_id, _official_change(evaluation, current, new)
            )
    return evaluation


def _official_change(
    evaluation: Evaluation, current: EvaluationStatus, new: EvaluationStatus
) -> SnapshotRequest | None:
    """The snapshot a run of an Official entry asks for when its scores change (issue 33): an
    imported result's first, or a re-scoring (a corrected test set, the judge's metrics)."""
    submission = evaluation.submission
    if submission.verification_status != VerificationStatus.VERIFIED:
        return None
    version = (
        f"test set v{evaluation.test_set.version}" if evaluation.test_set_id else "no test set"
    )
    if submission.source == SubmissionSource.IMPORTED and not current.has_scores:
        return SnapshotRequest(
            SnapshotReason.IMPORTED, f"{submission.model_name!r} imported ({version})"
        )
    return SnapshotRequest(
        SnapshotReason.RESCORED, f"{submission.model_name!r}: run {new.label.lower()} ({version})"
    )
