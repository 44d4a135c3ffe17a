"""Choices of the submissions app: the states of an evaluation run and of verification, with the
moves allowed between them (the data their one writer checks), and the two boards."""

from __future__ import annotations

from django.db import models


class EvaluationStatus(models.TextChoices):
    """Where one evaluation run of a submission is.

    received -> queued -> scoring -> scored -> judging -> complete; failed (with a code and a
    message) or cancelled end a run. A rerun is a new run, never a rewound one; the only
    backward move is scoring -> queued, when a crashed worker's job is handed out again.
    """

    RECEIVED = "received", "Received"
    QUEUED = "queued", "Queued"
    SCORING = "scoring", "Scoring"
    SCORED = "scored", "Scored (judge pending)"
    JUDGING = "judging", "Judging captions"
    COMPLETE = "complete", "Complete"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"

    @property
    def allowed_next(self) -> frozenset[EvaluationStatus]:
        return EVALUATION_TRANSITIONS[self]

    @property
    def is_terminal(self) -> bool:
        return not EVALUATION_TRANSITIONS[self]

    @property
    def has_scores(self) -> bool:
        """Whether the seven automatic metrics exist in this state."""
        return self in (
            EvaluationStatus.SCORED,
            EvaluationStatus.JUDGING,
            EvaluationStatus.COMPLETE,
        )


S = EvaluationStatus
EVALUATION_TRANSITIONS: dict[EvaluationStatus, frozenset[EvaluationStatus]] = {
    S.RECEIVED: frozenset({S.QUEUED, S.FAILED, S.CANCELLED}),
    S.QUEUED: frozenset({S.SCORING, S.FAILED, S.CANCELLED}),
    S.SCORING: frozenset({S.SCORED, S.QUEUED, S.FAILED}),
    S.SCORED: frozenset({S.JUDGING, S.COMPLETE, S.FAILED}),
    S.JUDGING: frozenset({S.COMPLETE, S.SCORED, S.FAILED}),
    S.COMPLETE: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELLED: frozenset(),
}

# The states in which a run has its automatic metrics, i.e. can be shown on a board.
STATES_WITH_SCORES: frozenset[EvaluationStatus] = frozenset(
    state for state in EvaluationStatus if state.has_scores
)
# The states in which the LLM judge's metrics may still arrive (spec 5: "pending").
STATES_JUDGE_PENDING: frozenset[EvaluationStatus] = frozenset({S.SCORED, S.JUDGING})

# The timestamp field each state stamps when a run enters it.
STATUS_TIMESTAMP_FIELD: dict[EvaluationStatus, str] = {
    S.RECEIVED: "created_at",
    S.QUEUED: "queued_at",
    S.SCORING: "scoring_started_at",
    S.SCORED: "scored_at",
    S.JUDGING: "judging_started_at",
    S.COMPLETE: "completed_at",
    S.FAILED: "finished_at",
    S.CANCELLED: "finished_at",
}


class FailureCode(models.TextChoices):
    """Why a run failed; the message beside it tells the submitter what to do."""

    INVALID_PREDICTIONS = "invalid_predictions", "The predictions file does not fit the test set"
    TEST_SET_UNAVAILABLE = "test_set_unavailable", "The test set could not be read"
    # The private file store (S3, a shared folder) could not be reached (docs/storage.md).
    FILES_UNAVAILABLE = "files_unavailable", "The stored files could not be reached"
    TIMED_OUT = "timed_out", "Scoring took too long"
    TOO_MANY_ATTEMPTS = "too_many_attempts", "Scoring was interrupted too often"
    INTERNAL_ERROR = "internal_error", "An internal error stopped scoring"


class SubmissionSource(models.TextChoices):
    """Where an entry's predictions came from. `hosted`: Podium asked the submitter's model
    endpoint every question itself and wrote the file (the `hosting` app, docs/hosted.md); the
    pages and the API say "evaluated by Podium", and its verification needs no re-run."""

    UPLOAD = "upload", "Uploaded predictions"
    IMPORTED = "imported", "Imported published result"
    HOSTED = "hosted", "Evaluated by Podium"


class VerificationStatus(models.TextChoices):
    """Where an entry is on its way to the Official board (spec 8: "Top performers will be
    contacted... Once verified, your model is added to the Official Leaderboard"). Separate from
    the evaluation state. Only `verified` entries form the Official board. Its one writer is
    `submissions.services.set_verification_status`, which checks `VERIFICATION_TRANSITIONS`.

    community -> nominated -> contacted -> access granted -> verifying -> verified, or rejected
    (with a reason the submitter sees) from any step; a verified entry can be withdrawn; a
    rejected or withdrawn one can be nominated again. An entry the maintainers evaluated
    themselves (an imported published result, a baseline), and one Podium evaluated through
    the endpoint its submitter gave (hosted evaluation), goes from community to verified
    directly, and back to verified from withdrawn or rejected with a note. What each move to
    verified needs as evidence is `submissions.verification.verification_evidence`.
    """

    COMMUNITY = "community", "Community"
    NOMINATED = "nominated", "Nominated"
    CONTACTED = "contacted", "Authors contacted"
    ACCESS_GRANTED = "access_granted", "Model access granted"
    VERIFYING = "verifying", "Being verified"
    VERIFIED = "verified", "Verified"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"

    @property
    def allowed_next(self) -> frozenset[VerificationStatus]:
        return VERIFICATION_TRANSITIONS[self]

    @property
    def in_progress(self) -> bool:
        """Between nomination and a decision."""
        return self in VERIFICATION_IN_PROGRESS


V = VerificationStatus
VERIFICATION_TRANSITIONS: dict[VerificationStatus, frozenset[VerificationStatus]] = {
    V.COMMUNITY: frozenset({V.NOMINATED, V.VERIFIED}),
    V.NOMINATED: frozenset({V.CONTACTED, V.REJECTED, V.COMMUNITY}),
    V.CONTACTED: frozenset({V.ACCESS_GRANTED, V.REJECTED}),
    V.ACCESS_GRANTED: frozenset({V.VERIFYING, V.REJECTED}),
    V.VERIFYING: frozenset({V.VERIFIED, V.REJECTED, V.ACCESS_GRANTED}),
    V.VERIFIED: frozenset({V.WITHDRAWN}),
    # -> verified: only the maintainers' own results and entries evaluated by Podium,
    # re-verified with a note (the writer checks who may take these moves; an upload goes
    # back through nomination).
    V.REJECTED: frozenset({V.NOMINATED, V.VERIFIED}),
    V.WITHDRAWN: frozenset({V.NOMINATED, V.VERIFIED}),
}
VERIFICATION_IN_PROGRESS = frozenset({V.NOMINATED, V.CONTACTED, V.ACCESS_GRANTED, V.VERIFYING})
# Moves that need a reason the submitter is shown.
VERIFICATION_NEEDS_REASON = frozenset({V.REJECTED, V.WITHDRAWN})


class BoardKind(models.TextChoices):
    """The two tables of a benchmark's board (spec 8): verified entries and the rest."""

    OFFICIAL = "official", "Official"
    COMMUNITY = "community", "Community"


class SnapshotReason(models.TextChoices):
    """Why a board snapshot was taken (issue 33, docs/boards.md "Snapshots"): a change of the
    Official board, recorded by the change's own writer, a maintainer's request, or the
    Community board's changes of the day."""

    VERIFIED = "verified", "An entry was verified"
    WITHDRAWN = "withdrawn", "An entry left the Official board"
    IMPORTED = "imported", "A published result was imported"
    RESCORED = "rescored", "An Official entry was re-scored"
    EDITED = "edited", "An Official entry's details were corrected"
    LISTED = "listed", "An Official entry was taken off or put back"
    RATINGS = "ratings", "The ratings were recomputed"
    RANKS = "ranks", "Official ranks moved with the Community board"
    MAINTAINER = "maintainer", "Taken by a maintainer"
    DAILY = "daily", "The Community board changed"
