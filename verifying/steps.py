"""The re-run's steps on an entry's way to the Official board, for the maintainers' messages
(`submissions.next_step`, which asks this guide first): register the model's endpoint, start
the re-run, wait for it, verify from its report. Each step links to the admin page where it is
done.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse

from hosting.selectors import hosted_request_of
from submissions.enums import SubmissionSource, VerificationStatus
from submissions.models import Submission
from submissions.next_step import NextStep, entry_in_admin_list

from .enums import ACTIVE_RERUN_STATES, RerunStatus
from .models import RerunJob
from .services import active_endpoint


def job_page(job: RerunJob) -> str:
    return reverse("admin:verifying_rerunjob_change", args=[job.pk])


def register_endpoint_page(submission: Submission) -> str:
    """The endpoint form with the entry already picked."""
    add = reverse("admin:verifying_modelendpoint_add")
    return f"{add}?{urlencode({'submission': submission.pk})}"


def entry_endpoints_page(submission: Submission) -> str:
    """The entry's endpoints, where "Start a re-run with this endpoint" is an action."""
    changelist = reverse("admin:verifying_modelendpoint_changelist")
    return f"{changelist}?{urlencode({'submission__id__exact': submission.pk})}"


def hosted_request_page(request_id: int) -> str:
    return reverse("admin:hosting_hostedrequest_change", args=[request_id])


def hosted_step(submission: Submission) -> NextStep | None:
    """An entry evaluated by Podium: verify it on its hosted evaluation (no re-run), linked to
    the request whose page shows the evidence."""
    status = submission.verification_status
    if status == VerificationStatus.VERIFIED:
        return None
    request = hosted_request_of(submission)
    if request is None:
        return None
    if status in (VerificationStatus.REJECTED, VerificationStatus.WITHDRAWN):
        return NextStep(
            f"verify it again with a note saying why (the action “Verify”): hosted evaluation "
            f"{request.pk} is its evidence",
            hosted_request_page(request.pk),
        )
    if status not in (VerificationStatus.COMMUNITY, VerificationStatus.VERIFYING):
        return None
    return NextStep(
        f"verify it (the action “Verify”): hosted evaluation {request.pk} is its evidence, no "
        "re-run needed",
        hosted_request_page(request.pk),
    )


def rerun_step(submission: Submission) -> NextStep | None:
    """The next re-run step of an entry whose authors granted access or that is being
    verified (for an entry evaluated by Podium, `hosted_step`); None for any other entry."""
    if submission.source == SubmissionSource.HOSTED:
        return hosted_step(submission)
    status = submission.verification_status
    if status not in (VerificationStatus.ACCESS_GRANTED, VerificationStatus.VERIFYING):
        return None
    job = submission.reruns.order_by("-created_at", "-id").first()
    if status == VerificationStatus.VERIFYING and job is not None:
        if job.state in ACTIVE_RERUN_STATES:
            return NextStep(
                f"wait for re-run {job.pk} to finish ({job.items_finished:,} of "
                f"{job.items_total:,} questions answered), then verify from its report",
                job_page(job),
            )
        if job.state == RerunStatus.DONE:
            return NextStep(f"verify from the report of re-run {job.pk}", job_page(job))
    endpoint = active_endpoint(submission)
    if endpoint is None:
        return NextStep("register the model's endpoint", register_endpoint_page(submission))
    if status == VerificationStatus.VERIFYING:
        return NextStep(
            "move it back to access granted (the action “Record that model access was "
            "granted”), then start a re-run",
            entry_in_admin_list(submission),
        )
    return NextStep(
        f"start a re-run with {endpoint.model} (the action “Start a re-run with this endpoint”)",
        entry_endpoints_page(submission),
    )
