"""The next step on an entry's way to the Official board, as a sentence and a link, for the
maintainers' messages: a refused move ("Verify" clicked before the re-run is done) says what is
missing and links to where it is done, and the entry's admin page shows it.

The steps up to "access granted" are this app's admin actions. The steps after it (register the
model's endpoint, start the re-run, wait for it, verify from its report) belong to `verifying`,
which sits above this app and so adds its guide here (`add_step_guide`, VerifyingConfig.ready)
instead of being imported. The rule that refuses a move stays in the services; this only
explains it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from . import hooks
from .enums import VerificationStatus
from .models import Submission


@dataclass(frozen=True)
class NextStep:
    """`text` completes "Next step: ..."; `url` is where a maintainer does it."""

    text: str
    url: str

    def link(self) -> SafeString:
        return format_html('<a href="{}">{}</a>', self.url, self.text)

    def html(self) -> SafeString:
        """For a message: "Next step: <a ...>register the model's endpoint</a>." """
        return format_html("Next step: {}.", self.link())


StepGuide = Callable[[Submission], NextStep | None]


def add_step_guide(guide: StepGuide) -> None:
    """Ask `guide(submission)` first; a guide answers None for entries it has no step for."""
    hooks.add_step_guide(guide)


# The admin actions (SubmissionAdmin.actions) that make the early moves.
ACTION_STEPS = {
    VerificationStatus.COMMUNITY: "nominate it (the action “Nominate for the Official board”)",
    VerificationStatus.NOMINATED: (
        "record the contact (the action “Record that the authors were contacted”)"
    ),
    VerificationStatus.CONTACTED: (
        "record the access (the action “Record that model access was granted”)"
    ),
}


def entry_in_admin_list(submission: Submission) -> str:
    """The admin's list of entries showing only this one, ready for an action."""
    changelist = reverse("admin:submissions_submission_changelist")
    return f"{changelist}?{urlencode({'id__exact': submission.pk})}"


def next_step(submission: Submission) -> NextStep | None:
    """What a maintainer does next to bring `submission` to the Official board; None when
    nothing is left to do (verified), for an evaluate-only entry, and for the maintainers' own
    results, which are verified directly."""
    if not submission.publish or submission.is_maintainer_result:
        return None
    for guide in hooks.step_guides:
        step = guide(submission)
        if step is not None:
            return step
    status = VerificationStatus(submission.verification_status)
    if status in (VerificationStatus.REJECTED, VerificationStatus.WITHDRAWN):
        return NextStep(
            "nominate it again (the action “Nominate for the Official board”)",
            entry_in_admin_list(submission),
        )
    if status in ACTION_STEPS:
        return NextStep(ACTION_STEPS[status], entry_in_admin_list(submission))
    return None
