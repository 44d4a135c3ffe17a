"""The verification workflow's one writer, `set_verification_status`, and the evidence a move to
verified needs (docs/maintainers.md).

Every path to the Official board (the admin's bulk action, the entry page, "Verify from report"
on a re-run, `add_official_result`, an import, a shell) ends in `set_verification_status`, so
the evidence rule lives there and nothing can skip it:

- an uploaded entry is verified only from `verifying`, on the report of its newest re-run: done,
  against the run the entry is ranked by, every compared metric within the benchmark's
  tolerance, or a forced verify with a note saying why. That check belongs to the `verifying`
  app, which registers it here (`set_rerun_evidence_check`); without it an upload is never
  verified;
- a result the maintainers produced themselves (an imported published row, a baseline) is
  verified directly, and re-verified after a withdrawal or rejection only with a note;
- an entry evaluated by Podium (hosted evaluation: Podium asked the model endpoint every
  question itself) needs no re-run: the hosted evaluation is its evidence, so it is verified
  from the Community board directly (or from `verifying`), and re-verified after a withdrawal
  or rejection only with a note. `verifying`'s registered check reads that evidence (the
  answers came from Podium's own calls, docs/hosted.md); without it nothing is verified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core import audit
from core.exceptions import InvalidTransition, VerificationRefused

from .board_refresh import schedule_board_refresh
from .enums import (
    VERIFICATION_NEEDS_REASON,
    SnapshotReason,
    SubmissionSource,
    VerificationStatus,
)
from .hooks import add_verification_listener as add_verification_listener  # callers' name
from .hooks import rerun_evidence_check, verification_listeners
from .models import Submission
from .snapshots import SnapshotRequest

V = VerificationStatus


@dataclass(frozen=True)
class Evidence:
    """What a move to verified rests on; `data` goes into the move's audit row."""

    summary: str
    data: dict[str, Any] = field(default_factory=dict)


# (submission, *, force, note) -> Evidence, raising VerificationRefused: the re-run check that
# `verifying` registers when it is ready.
RerunEvidenceCheck = Callable[..., Evidence]


def set_rerun_evidence_check(check: RerunEvidenceCheck | None) -> None:
    """Install the check an uploaded entry's verification must pass (`verifying` does)."""
    rerun_evidence_check.set(check)


def verification_evidence(
    submission: Submission, current: VerificationStatus, *, force: bool = False, note: str = ""
) -> Evidence:
    """The evidence for moving `submission` from `current` to verified, or `VerificationRefused`
    naming the missing step. Also the "can this be verified now" predicate of the interfaces."""
    if not submission.publish:
        raise VerificationRefused(
            "An evaluate-only entry is never published, so it cannot be verified.",
        )
    if submission.is_maintainer_result and current != V.VERIFYING:
        if current in (V.WITHDRAWN, V.REJECTED) and not note:
            raise VerificationRefused(
                f"Say in the note why this {current.label.lower()} result of the maintainers' "
                "own is verified again: the note is kept in its audit trail.",
            )
        imported = submission.source == SubmissionSource.IMPORTED
        kind = "imported published result" if imported else "baseline"
        return Evidence(f"the maintainers' own result ({kind})", {"kind": "maintainer_result"})
    if submission.source == SubmissionSource.HOSTED:
        return _hosted_evidence(submission, current, force=force, note=note)
    if current != V.VERIFYING:
        raise VerificationRefused(
            "An uploaded entry is verified on an independent re-run of its model: nominate it, "
            "record the contact with the authors, grant access and start a re-run, then verify "
            f"from the re-run's report. This entry is {current.label.lower()}.",
        )
    if rerun_evidence_check.callback is None:
        raise VerificationRefused(
            "No re-run can be checked on this server (the verifying app is not installed), so "
            "an uploaded entry cannot be verified.",
        )
    return rerun_evidence_check.callback(submission, force=force, note=note)


def _hosted_evidence(
    submission: Submission, current: VerificationStatus, *, force: bool, note: str
) -> Evidence:
    """An entry evaluated by Podium: its hosted evaluation is the evidence (no re-run), from any
    state the transition map lets go to verified; re-verifying after a withdrawal or a
    rejection needs a note, as for the maintainers' own results."""
    if current in (V.WITHDRAWN, V.REJECTED) and not note:
        raise VerificationRefused(
            f"Say in the note why this {current.label.lower()} entry evaluated by Podium is "
            "verified again: the note is kept in its audit trail.",
        )
    if rerun_evidence_check.callback is None:
        raise VerificationRefused(
            "No hosted evaluation can be checked on this server (the verifying app is not "
            "installed), so an entry evaluated by Podium cannot be verified.",
        )
    return rerun_evidence_check.callback(submission, force=force, note=note)


def set_verification_status(
    submission: Submission,
    new: VerificationStatus,
    *,
    actor: Any,
    note: str = "",
    reason: str = "",
    verified_at: datetime | None = None,
    force: bool = False,
) -> Submission:
    """Move an entry along the verification workflow: the one writer of
    `Submission.verification_status` (and `verified_at`, `verified_by`, `verification_reason`).

    Refuses, with `InvalidTransition`: a move the transition map does not allow; nominating an
    evaluate-only entry; rejecting or withdrawing without a `reason` (the submitter is shown
    it); and, with `VerificationRefused`, any move to verified without its evidence
    (`verification_evidence`: the newest re-run's report for an upload, a note for re-verifying
    the maintainers' own result). `force=True` with a `note` verifies an upload whose re-run is
    done although its report is outside the tolerance. `verified_at` (only for the maintainers'
    own results) is the date another board verified an imported row; it defaults to now. Locks
    the row, saves only these fields, writes one `submissions.verification.<state>` audit row
    {from, to, note, reason, and for verified the evidence} and, when the Official board
    changes, recomputes the board on commit.
    """
    note = note.strip()
    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission.pk)
        current = VerificationStatus(submission.verification_status)
        if new not in current.allowed_next:
            raise InvalidTransition(f"An entry cannot go from {current.label} to {new.label}.")
        if new == V.NOMINATED and not submission.publish:
            raise InvalidTransition(
                "An evaluate-only entry is never published, so it cannot be nominated."
            )
        evidence = None
        if new == V.VERIFIED:
            evidence = verification_evidence(submission, current, force=force, note=note)
            if verified_at is not None and not submission.is_maintainer_result:
                raise ValueError("only the maintainers' own results carry another verified date")
        reason = reason.strip()
        if new in VERIFICATION_NEEDS_REASON and not reason:
            raise InvalidTransition(
                f"Say why the entry is {new.label.lower()}: the authors see it."
            )
        submission.verification_status = new
        submission.verification_changed_at = timezone.now()
        if new == V.VERIFIED:
            submission.verified_at = verified_at or timezone.now()
            submission.verified_by = actor if getattr(actor, "is_authenticated", False) else None
        elif current == V.VERIFIED:
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
        data = {"from": current.value, "to": new.value, "note": note, "reason": reason}
        if evidence is not None:
            data["evidence"] = {"summary": evidence.summary, **evidence.data}
        audit.record(
            f"submissions.verification.{new.value}", actor=actor, target=submission, **data
        )
        if submission.publish and V.VERIFIED in (current, new):
            # A change of the Official board: snapshotted (issue 33), a forced verification
            # with its note.
            entered = new == V.VERIFIED
            schedule_board_refresh(
                submission.benchmark_id,
                SnapshotRequest(
                    _snapshot_reason(submission, current, new),
                    f"{submission.model_name!r} {new.label.lower()}"
                    + ("" if entered else f" (was {current.label.lower()})"),
                    note if force else "",
                ),
            )
        for listener in verification_listeners:  # hooks.add_verification_listener
            transaction.on_commit(partial(listener, submission.pk, current.value, new.value))
    return submission


def _snapshot_reason(
    submission: Submission, current: VerificationStatus, new: VerificationStatus
) -> SnapshotReason:
    if new != V.VERIFIED:
        return SnapshotReason.WITHDRAWN
    if submission.source == SubmissionSource.IMPORTED and current == V.COMMUNITY:
        return SnapshotReason.IMPORTED  # `services.import_published_result`'s verification
    return SnapshotReason.VERIFIED


# --- what the submitter is shown ------------------------------------------------------------------

# The four steps of the original "How to get on the Official Leaderboard", and the states in
# which each is done (the next one is then the current step).
OFFICIAL_STEPS = (
    "Submit your model's predictions: they are scored and shown on the Community board.",
    "Top performers are contacted by the benchmark's maintainers.",
    "Provide model API access so the maintainers can independently verify the results.",
    "Once verified, your model is added to the Official board.",
)
_STEPS_DONE = {
    V.COMMUNITY: 1,
    V.NOMINATED: 1,
    V.CONTACTED: 2,
    V.ACCESS_GRANTED: 3,
    V.VERIFYING: 3,
    V.VERIFIED: 4,
}
_EXPLANATIONS = {
    V.COMMUNITY: "On the Community board, not verified. The maintainers contact top performers "
    "to verify their results.",
    V.NOMINATED: "Nominated for verification: the maintainers will contact you.",
    V.CONTACTED: "The maintainers asked you for access to the model's API, to re-run it "
    "independently.",
    V.ACCESS_GRANTED: "Model access granted: the maintainers will re-run the model through its API.",
    V.VERIFYING: "Being verified: the maintainers are re-running the model through its API.",
    V.VERIFIED: "Verified: on the Official board.",
    V.REJECTED: "Not verified; the entry stays on the Community board. If you can address the "
    "reason, tell the maintainers: it can be nominated again.",
    V.WITHDRAWN: "Withdrawn from the Official board; the entry is back on the Community board.",
}


@dataclass(frozen=True)
class VerificationStep:
    number: int
    text: str
    state: str  # "done", "current" or "todo"


@dataclass(frozen=True)
class VerificationSummary:
    """Where an entry stands on its way to the Official board, in the submitter's words."""

    status: VerificationStatus
    label: str
    explanation: str
    reason: str
    verified_at: datetime | None
    changed_at: datetime | None
    steps: tuple[VerificationStep, ...]


def verification_summary(submission: Submission) -> VerificationSummary:
    """For the entry page and My submissions (no query: the submission's own fields)."""
    status = VerificationStatus(submission.verification_status)
    if not submission.publish:
        return VerificationSummary(
            status,
            "Evaluate only",
            "Never published, so never verified.",
            "",
            None,
            None,
            (),
        )
    done = _STEPS_DONE.get(status, 1)
    steps = tuple(
        VerificationStep(
            number,
            text,
            "done" if number <= done else "current" if number == done + 1 else "todo",
        )
        for number, text in enumerate(OFFICIAL_STEPS, start=1)
    )
    explanation = _EXPLANATIONS[status]
    if submission.source == SubmissionSource.HOSTED and status == V.COMMUNITY:
        explanation = (
            "On the Community board, not verified yet. Podium evaluated it itself (hosted "
            "evaluation), so the maintainers verify it from that evaluation, without a re-run."
        )
    return VerificationSummary(
        status,
        status.label,
        explanation,
        submission.verification_reason,
        submission.verified_at if status == V.VERIFIED else None,
        submission.verification_changed_at,
        steps,
    )


def contact_href(benchmark: Any) -> str:
    """The link "contact the maintainers": the benchmark's own contact URL, else the site's
    contact address."""
    return benchmark.contact_url or f"mailto:{settings.PODIUM_CONTACT_EMAIL}"
