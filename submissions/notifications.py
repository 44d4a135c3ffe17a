"""Telling a submitter what happened to their entry (issue 6): nominated, model access
requested, verified, rejected or withdrawn (spec 8's verification workflow), and a scoring run
or LLM judge job that failed. Each notice is a `Notification` row, shown on the submitter's
pages until they mark it read, and one email through Django's email backend.

Everything here runs after the change it reports has committed: the verification writer calls
`verification_changed` on commit (registered in `SubmissionsConfig.ready`), the evaluation
writer calls `evaluation_failed_on_commit`, and `judging` calls `notify_judge_failed` on commit
(it sits above this app and may import it). A notice that cannot be stored or mailed is logged
and never fails the committed change; an email failure is kept on the row.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from core.text import one_line

from .board_refresh import bring_board_up_to_date
from .enums import EvaluationStatus, VerificationStatus
from .models import BoardEntry, Evaluation, Notification, NotificationKind, Submission

logger = logging.getLogger(__name__)

# How many unread notices the "My submissions" page lists.
UNREAD_SHOWN = 20

# The verification moves the submitter hears about, by the state moved to. The others
# (back to community, access granted, verifying) are the maintainers' own bookkeeping.
VERIFICATION_KIND: dict[VerificationStatus, NotificationKind] = {
    VerificationStatus.NOMINATED: NotificationKind.NOMINATED,
    VerificationStatus.CONTACTED: NotificationKind.ACCESS_REQUESTED,
    VerificationStatus.VERIFIED: NotificationKind.VERIFIED,
    VerificationStatus.REJECTED: NotificationKind.REJECTED,
    VerificationStatus.WITHDRAWN: NotificationKind.WITHDRAWN,
}

# The state an email names for each kind.
KIND_STATE: dict[NotificationKind, str] = {
    NotificationKind.NOMINATED: VerificationStatus.NOMINATED.label,
    NotificationKind.ACCESS_REQUESTED: VerificationStatus.CONTACTED.label,
    NotificationKind.VERIFIED: VerificationStatus.VERIFIED.label,
    NotificationKind.REJECTED: VerificationStatus.REJECTED.label,
    NotificationKind.WITHDRAWN: VerificationStatus.WITHDRAWN.label,
    NotificationKind.SCORING_FAILED: "Scoring failed",
    NotificationKind.JUDGE_FAILED: "Scored; the LLM judge failed, its metrics are pending",
    NotificationKind.JUDGE_HELD: "Scored; the LLM judge's metrics wait for a maintainer",
    NotificationKind.SCORED: "Scored; the caption metrics wait for the LLM judge",
    NotificationKind.COMPLETE: "Complete",
}


# --- writing -------------------------------------------------------------------------------------


def notify(submission: Submission, kind: NotificationKind, *, message: str) -> Notification | None:
    """Tell the submission's owner: store a `Notification` and email it.

    An entry without an owner (an imported published result) has no one to tell: returns None.
    The email goes to the owner's address, else the submission's contact email. A failure to
    send is logged and kept in `email_error`, never raised: the change being reported has
    committed already. Returns the notification.
    """
    owner = submission.owner
    if owner is None:
        return None
    # One line, whatever the stored name holds (an entry stored before names were checked):
    # a line break in a header makes every email fail ("Header values may not contain linefeed").
    subject = one_line(
        f"{kind.label}: {submission.model_name} on {submission.benchmark.name}",
        max_length=Notification._meta.get_field("subject").max_length,
    )
    notification = Notification.objects.create(
        recipient=owner,
        submission=submission,
        kind=kind,
        subject=subject,
        message=message,
    )
    _email(notification)
    return notification


def _email(notification: Notification) -> None:
    submission = notification.submission
    assert submission is not None
    address = notification.recipient.email or submission.contact_email
    if not address:
        notification.email_error = "No email address: neither the account nor the entry has one."
        notification.save(update_fields=["email_error"])
        return
    try:
        send_mail(
            notification.subject,
            render_to_string(
                f"submissions/emails/{notification.kind}.txt", _email_context(notification)
            ),
            None,  # DEFAULT_FROM_EMAIL
            [address],
        )
    except Exception as error:  # any backend's failure: SMTP, DNS, a refused address
        logger.exception("emailing notification %s to %s failed", notification.pk, address)
        notification.email_error = f"{type(error).__name__}: {error}"
        notification.save(update_fields=["email_error"])
    else:
        notification.emailed_at = timezone.now()
        notification.save(update_fields=["emailed_at"])


def _email_context(notification: Notification) -> dict[str, Any]:
    submission = notification.submission
    assert submission is not None
    site = settings.PODIUM_SITE_URL.rstrip("/")
    kind = NotificationKind(notification.kind)
    recipient = notification.recipient
    return {
        "recipient_name": recipient.get_full_name() or recipient.get_username(),
        "submission": submission,
        "benchmark": submission.benchmark,
        "message": notification.message,
        "rank": rank_sentence(submission, when="when this email was sent")
        if kind == NotificationKind.COMPLETE
        else "",
        "state": KIND_STATE[kind],
        "reason": submission.verification_reason
        if kind in (NotificationKind.REJECTED, NotificationKind.WITHDRAWN)
        else "",
        "url": site + submission.get_absolute_url(),
        "board_url": site + reverse("submissions:board", args=[submission.benchmark.slug]),
        "submissions_url": site + reverse("submissions:mine"),
    }


def _after_commit(function: Callable[..., None]) -> Callable[..., None]:
    """For the entry points run after a commit: an error is logged, never raised into the
    committed change's caller (a view, a worker's task)."""

    @functools.wraps(function)
    def guarded(*args: Any) -> None:
        try:
            function(*args)
        except Exception:
            logger.exception("notification %s%r failed", function.__name__, args)

    return guarded


@_after_commit
def verification_changed(submission_id: int, from_value: str, to_value: str) -> None:
    """The verification listener (`add_verification_listener`), called after the commit of
    a move: notify for the moves in `VERIFICATION_KIND`, with the reason for a rejection or a
    withdrawal."""
    kind = VERIFICATION_KIND.get(VerificationStatus(to_value))
    if kind is None:
        return
    submission = (
        Submission.objects.select_related("benchmark", "owner").filter(pk=submission_id).first()
    )
    if submission is None:
        return
    model, benchmark = submission.model_name, submission.benchmark.name
    reason = submission.verification_reason
    message = {
        NotificationKind.NOMINATED: (
            f"{model} on {benchmark} was nominated for the Official board."
        ),
        NotificationKind.ACCESS_REQUESTED: (
            f"The maintainers will contact you to provide model API access for {model} on "
            f"{benchmark}, so they can re-run it themselves."
        ),
        NotificationKind.VERIFIED: (
            f"{model} is verified and listed on the Official board of {benchmark}."
        ),
        NotificationKind.REJECTED: f"{model} on {benchmark} was not verified. Reason: {reason}",
        NotificationKind.WITHDRAWN: (
            f"{model} was withdrawn from the Official board of {benchmark}. Reason: {reason}"
        ),
    }[kind]
    notify(submission, kind, message=message)


def evaluation_failed_on_commit(evaluation: Evaluation) -> None:
    """Called by `set_evaluation_status` as a run moves to `failed`: tell the submitter once
    the move has committed."""
    transaction.on_commit(functools.partial(notify_evaluation_failed, evaluation.pk))


def evaluation_finished_on_commit(evaluation: Evaluation) -> None:
    """Called by `set_evaluation_status` as a run reaches its numbers: `complete` (every
    metric in), or `scored` when the judge will not start by itself (the submitter must start
    it). A run the judge starts automatically is reported once, when complete."""
    if evaluation.state == EvaluationStatus.COMPLETE:
        transaction.on_commit(functools.partial(notify_evaluation_complete, evaluation.pk))
    elif evaluation.state == EvaluationStatus.SCORED:
        transaction.on_commit(functools.partial(notify_evaluation_scored, evaluation.pk))


def _run_with_owner(evaluation_id: int) -> Evaluation | None:
    """The run with its entry's benchmark and owner (what a message names and who gets it), or
    None when it is gone by the time the commit's callback runs."""
    return (
        Evaluation.objects.select_related("submission__benchmark", "submission__owner")
        .filter(pk=evaluation_id)
        .first()
    )


@_after_commit
def notify_evaluation_failed(evaluation_id: int) -> None:
    """Notify a run's owner that scoring failed, with the run's message."""
    evaluation = _run_with_owner(evaluation_id)
    if evaluation is None:
        return
    submission = evaluation.submission
    problem = evaluation.error_message or evaluation.get_error_code_display()
    model, benchmark = submission.model_name, submission.benchmark.name
    message = f"Scoring {model} on {benchmark} failed: {problem}"
    notify(submission, NotificationKind.SCORING_FAILED, message=message)


@_after_commit
def notify_judge_failed(evaluation_id: int, message: str) -> None:
    """Notify a run's owner that its LLM judge job failed, with the job's message. `judging`
    calls it after the commit that fails the job."""
    evaluation = _run_with_owner(evaluation_id)
    if evaluation is None:
        return
    submission = evaluation.submission
    model, benchmark = submission.model_name, submission.benchmark.name
    text = f"The LLM judge could not finish {model} on {benchmark}: {message}"
    notify(submission, NotificationKind.JUDGE_FAILED, message=text)


@_after_commit
def notify_judge_held(evaluation_id: int, failed: int, total: int) -> None:
    """Notify a run's owner that its judge job is held: some items got no usable verdict, so
    nothing is published until a maintainer decides. `judging` calls it after the commit."""
    evaluation = _run_with_owner(evaluation_id)
    if evaluation is None:
        return
    submission = evaluation.submission
    text = (
        f"The LLM judge got no usable verdict for {failed:,} of {total:,} caption items of "
        f"{submission.model_name} on {submission.benchmark.name}, so its caption metrics are "
        "not published yet: the maintainers will either accept the judgement without those "
        "items (the board then says so beside each metric) or judge again."
    )
    notify(submission, NotificationKind.JUDGE_HELD, message=text)


@_after_commit
def notify_evaluation_scored(evaluation_id: int) -> None:
    """Tell the owner a run is scored and waits for them to start the LLM judge (not sent
    when the benchmark starts the judge by itself, nor for a judge rerun's copy)."""
    evaluation = _run_with_owner(evaluation_id)
    if evaluation is None or evaluation.state != EvaluationStatus.SCORED:
        return
    submission = evaluation.submission
    benchmark = submission.benchmark
    if benchmark.judge_auto_start or evaluation.requested_by_id != submission.owner_id:
        return
    text = (
        f"{submission.model_name} on {benchmark.name} is scored: its automatic metrics are on "
        "its page. The caption metrics are pending until the LLM judge scores them: start it "
        "from the page."
    )
    notify(submission, NotificationKind.SCORED, message=text)


@_after_commit
def notify_evaluation_complete(evaluation_id: int) -> None:
    """Tell the owner every metric of a run is in, with the entry's rank when it is listed."""
    evaluation = _run_with_owner(evaluation_id)
    if evaluation is None or evaluation.state != EvaluationStatus.COMPLETE:
        return
    submission = evaluation.submission
    if submission.publish:
        # The rank the email quotes is the board's after this run's change, not the one before
        # it (the board's refresh is another callback of the same commit, maybe a later one).
        bring_board_up_to_date(submission.benchmark_id)
    # The stored notice holds no rank: a rank changes as other entries arrive, and the pages
    # that list the notice show the board's rank at the time they are read (`rank_now`).
    text = f"All metrics of {submission.model_name} on {submission.benchmark.name} are in."
    notify(submission, NotificationKind.COMPLETE, message=text)


def rank_sentence(submission: Submission, *, when: str, entry: Any = ...) -> str:
    """ "It ranks 3 (mean rank 2.40) now." for a published entry on the board, "" otherwise;
    `when` ("now", "when this email was sent") says the time the rank is of. `entry` is its
    board row when the caller read it already (None: not on the board)."""
    if entry is ...:
        entry = BoardEntry.objects.filter(submission=submission).first()
    if entry is None or not submission.publish:
        return ""
    # A lexicographic board (MedSG-Bench) has no mean rank to quote.
    mean = "" if submission.benchmark.is_lexicographic else f" (mean rank {entry.mean_rank:.2f})"
    if when == "now":
        return f"It ranks {entry.rank}{mean} now."
    return f"It ranked {entry.rank}{mean} {when}."


def with_rank_now(notifications: list[Notification]) -> list[Notification]:
    """`notifications`, each "Results complete" one given `rank_now`: the board's rank of its
    entry as the page is read (what a listed notice says after its message). One query for
    all their board rows."""
    complete = [
        notification
        for notification in notifications
        if notification.kind == NotificationKind.COMPLETE and notification.submission
    ]
    entries = (
        {
            entry.submission_id: entry
            for entry in BoardEntry.objects.filter(
                submission_id__in={notification.submission_id for notification in complete}
            )
        }
        if complete
        else {}
    )
    for notification in notifications:
        notification.rank_now = ""
    for notification in complete:
        notification.rank_now = rank_sentence(
            notification.submission,
            when="now",
            entry=entries.get(notification.submission_id),
        )
    return notifications


def unread_count(user: Any) -> int:
    """How many unread notifications the viewer has (the header's badge)."""
    if not getattr(user, "is_authenticated", False):
        return 0
    return Notification.objects.filter(recipient=user, read_at__isnull=True).count()


def mark_notifications_read(user: Any) -> int:
    """Mark all of `user`'s unread notifications read (only theirs). Returns how many."""
    if not getattr(user, "is_authenticated", False):
        return 0
    return Notification.objects.filter(recipient=user, read_at__isnull=True).update(
        read_at=timezone.now()
    )


# --- reading -------------------------------------------------------------------------------------
# Kept beside the writes so the feature is one module; they follow the selectors' rule of
# taking the viewer.


def unread_notifications(user: Any) -> list[Notification]:
    """The viewer's unread notifications, newest first, at most `UNREAD_SHOWN`."""
    if not getattr(user, "is_authenticated", False):
        return []
    return with_rank_now(
        list(
            Notification.objects.filter(recipient=user, read_at__isnull=True).select_related(
                "submission__benchmark"
            )[:UNREAD_SHOWN]
        )
    )


def submission_notifications(submission: Submission, *, viewer: Any) -> list[Notification]:
    """The viewer's own notifications about `submission`, newest first (staff looking at
    someone else's entry see none of theirs)."""
    if not getattr(viewer, "is_authenticated", False):
        return []
    return with_rank_now(
        list(
            Notification.objects.filter(recipient=viewer, submission=submission).select_related(
                "submission__benchmark"
            )
        )
    )
