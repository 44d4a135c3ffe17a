"""What a submitter may do with their own entry after uploading it (issue 13, point 6): take it
off the boards, publish an evaluate-only entry later, and correct the details the boards show
(links, team, authors, institution). Each is audited and the board follows on commit.

`set_published` is the one writer of `Submission.publish` after an entry was created (the
creating writers set it once): it checks, on every path, what `create_submission` checks for a
published entry, so an entry cannot reach a board with a name or a file a new upload could
not have.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from accounts.roles import can_view_all_entries
from core import audit
from core.exceptions import DomainError, InvalidName, NotYourEntry

from .board_refresh import schedule_board_refresh
from .enums import SnapshotReason, SubmissionSource, VerificationStatus
from .maintenance import update_entry_details
from .models import Submission
from .names import published_name_message, refuse_published_lookalike
from .selectors import own_published_copy, published_lookalike
from .services import lock_published_file, refuse_published_copy
from .snapshots import SnapshotRequest


def _is_owner(actor: Any, submission: Submission) -> bool:
    return bool(getattr(actor, "is_authenticated", False)) and actor.pk == submission.owner_id


def set_published(
    submission: Submission, *, publish: bool, actor: Any, note: str = ""
) -> Submission:
    """Put the owner's entry on the boards (`publish=True`) or take it off them (False).

    Only the entry's owner decides where their entry is shown (`NotYourEntry` otherwise; the
    maintainers move entries between the boards with the verification workflow). Publishing
    refuses, with `create_submission`'s messages, a model name that is or looks the same as a
    published entry's (`InvalidName`) and a file another account published
    (`DuplicatePredictions`, under the copy rule's lock `services.lock_published_file`: two
    accounts publishing the same bytes at once cannot both succeed). An imported result is not
    anyone's to take off. Taking an entry off keeps its runs, scores and verification:
    publishing it again puts it back where it was (a verified entry on the Official board).
    Audited as `submissions.submission.published` / `.unpublished` with the note; the board
    is recomputed on commit. Returns the entry; asking for the state it is in changes nothing.
    """
    if not _is_owner(actor, submission):
        raise NotYourEntry("Only the entry's owner can publish it or take it off the boards.")
    if submission.source == SubmissionSource.IMPORTED:
        raise NotYourEntry("An imported published result is not taken off by its owner.")
    try:
        with transaction.atomic():
            if publish:
                # The copy rule's lock before the entry's row lock, as every writer takes them
                # (the benchmark and the file never change).
                lock_published_file(submission.benchmark, submission.predictions_sha256)
            locked = Submission.objects.select_for_update().get(pk=submission.pk)
            if locked.publish == publish:
                return locked
            if publish:
                refuse_own_published_copy(locked)
                refuse_published_lookalike(locked.benchmark, locked.model_name)
                refuse_published_copy(
                    locked.benchmark,
                    locked.owner,
                    locked.predictions_sha256,
                    source=SubmissionSource(locked.source),
                )
            locked.publish = publish
            locked.save(update_fields=["publish"])
            audit.record(
                f"submissions.submission.{'published' if publish else 'unpublished'}",
                actor=actor,
                target=locked,
                note=note,
            )
            schedule_board_refresh(
                locked.benchmark_id,
                SnapshotRequest(
                    SnapshotReason.LISTED,
                    f"{locked.model_name!r} {'put back on' if publish else 'taken off'} the boards",
                )
                if locked.verification_status == VerificationStatus.VERIFIED
                else None,
            )
    except IntegrityError:  # a look-alike published meanwhile (the unique indexes settle it)
        existing = published_lookalike(submission.benchmark, submission.model_name)
        raise InvalidName(
            published_name_message(submission.model_name, existing, submission.benchmark)
            if existing is not None
            else "Another published entry has this model name.",
            field="model_name",
        ) from None
    return locked


def refuse_own_published_copy(submission: Submission) -> None:
    """The same results are listed once (issue 32, point 9): `DomainError` when the owner's
    other entry with this same file is published already."""
    listed = own_published_copy(
        submission.benchmark,
        submission.owner_id,
        submission.predictions_sha256,
        other_than=submission.pk,
    )
    if listed is not None:
        raise DomainError(
            f"Your entry “{listed.model_name}” is on the boards with this same file: the same "
            "results are listed once. Take it off the boards first to list them under "
            f"“{submission.model_name}” instead."
        )


def edit_own_entry(submission: Submission, *, actor: Any, **changes: str) -> Submission:
    """The owner corrects their entry's presentation details (the fields and checks of
    `maintenance.update_entry_details`, which writes and audits them, and recomputes the board
    of a published entry). Maintainers and superusers may too (`can_view_all_entries`), as in
    the admin; anyone else gets `NotYourEntry`."""
    if not (_is_owner(actor, submission) or can_view_all_entries(actor)):
        raise NotYourEntry("Only the entry's owner or a maintainer can edit its details.")
    return update_entry_details(submission, actor=actor, **changes)
