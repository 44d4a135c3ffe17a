"""Verifying an entry evaluated by Podium: its hosted evaluation is the evidence, so it goes to
the Official board without a re-run, through the verification's one writer (the admin's
action, the request's admin page); an uploaded entry still cannot skip the re-run."""

import pytest
from django.urls import reverse

from core.exceptions import InvalidTransition, VerificationRefused
from core.models import AuditEvent
from submissions.enums import BoardKind, SubmissionSource, VerificationStatus
from submissions.models import BoardEntry, Submission
from submissions.next_step import next_step
from submissions.services import (
    SubmissionDetails,
    create_submission,
    recompute_board,
    score_evaluation,
    set_verification_status,
)
from submissions.verification import verification_summary
from tests.accounts.factories import UserFactory, maintainer_user
from verifying.models import RerunJob

from .conftest import FACTS, MODEL, demo_file, run, score_entry, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def hosted_entry(benchmark, owner, standin, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    request = run(submit(benchmark, owner, base_url=standin.base_url, model=MODEL["good"]), capture)
    score_entry(request, capture)
    return request


def test_an_entry_evaluated_by_podium_is_verified_without_a_rerun(
    hosted_entry, django_capture_on_commit_callbacks
):
    maintainer = maintainer_user()
    submission = hosted_entry.submission
    assert submission.verification_status == VerificationStatus.COMMUNITY
    assert "verify it from that evaluation, without a re-run" in (
        verification_summary(submission).explanation
    )

    with django_capture_on_commit_callbacks(execute=True):
        set_verification_status(submission, VerificationStatus.VERIFIED, actor=maintainer)

    submission.refresh_from_db()
    assert submission.verification_status == VerificationStatus.VERIFIED
    assert not RerunJob.objects.exists()
    event = AuditEvent.objects.get(action="submissions.verification.verified")
    evidence = event.data["evidence"]
    assert evidence["kind"] == "hosted"
    assert evidence["hosted_request"] == hosted_entry.pk
    assert (evidence["questions"], evidence["answered"], evidence["model"]) == (
        56,
        56,
        MODEL["good"],
    )
    assert evidence["summary"].startswith(
        f"hosted evaluation {hosted_entry.pk}: Podium asked {MODEL['good']} at http://127.0.0.1:"
    )
    recompute_board(submission.benchmark)
    assert BoardEntry.objects.get(submission=submission).board == BoardKind.OFFICIAL


def test_an_uploaded_entry_still_cannot_skip_the_rerun(benchmark, demo_files):
    maintainer = maintainer_user()
    upload = create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Uploaded-7B", model_facts=FACTS),
        predictions=demo_file(demo_files, "good").read_bytes(),
    )
    score_evaluation(upload.evaluations.get())

    with pytest.raises(VerificationRefused, match="verified on an independent re-run"):
        set_verification_status(upload, VerificationStatus.VERIFIED, actor=maintainer)
    for status in (
        VerificationStatus.NOMINATED,
        VerificationStatus.CONTACTED,
        VerificationStatus.ACCESS_GRANTED,
    ):
        set_verification_status(upload, status, actor=maintainer)
    upload.refresh_from_db()
    # Access granted is not "being verified": no move to verified without a re-run's report.
    with pytest.raises(InvalidTransition, match="cannot go from Model access granted to Verified"):
        set_verification_status(upload, VerificationStatus.VERIFIED, actor=maintainer)
    # Being verified without a re-run: the evidence rule refuses, naming the missing step.
    set_verification_status(upload, VerificationStatus.VERIFYING, actor=maintainer)
    with pytest.raises(VerificationRefused, match="The entry has no re-run"):
        set_verification_status(upload, VerificationStatus.VERIFIED, actor=maintainer)
    upload.refresh_from_db()
    assert upload.verification_status == VerificationStatus.VERIFYING


def test_a_hosted_entry_is_verified_once_scored_and_again_only_with_a_note(
    benchmark, owner, standin, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    maintainer = maintainer_user()
    request = run(submit(benchmark, owner, base_url=standin.base_url, model=MODEL["weak"]), capture)
    submission = request.submission

    with pytest.raises(VerificationRefused, match=f"hosted evaluation {request.pk} is not scored"):
        set_verification_status(submission, VerificationStatus.VERIFIED, actor=maintainer)

    score_entry(request, capture)
    set_verification_status(submission, VerificationStatus.VERIFIED, actor=maintainer)
    set_verification_status(
        submission, VerificationStatus.WITHDRAWN, actor=maintainer, reason="checking"
    )
    with pytest.raises(VerificationRefused, match="Say in the note why this withdrawn entry"):
        set_verification_status(submission, VerificationStatus.VERIFIED, actor=maintainer)
    set_verification_status(
        submission, VerificationStatus.VERIFIED, actor=maintainer, note="checked again"
    )
    submission.refresh_from_db()
    assert submission.verification_status == VerificationStatus.VERIFIED


def test_an_entry_marked_hosted_without_its_hosted_evaluation_is_not_verified(
    benchmark, demo_files
):
    forged = create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Forged-7B", model_facts=FACTS),
        predictions=demo_file(demo_files, "strong").read_bytes(),
        source=SubmissionSource.HOSTED,
    )
    score_evaluation(forged.evaluations.get())

    with pytest.raises(VerificationRefused, match="no finished hosted evaluation produced it"):
        set_verification_status(forged, VerificationStatus.VERIFIED, actor=maintainer_user())


def test_the_admin_shows_the_evidence_and_its_action_verifies(hosted_entry, client):
    maintainer = maintainer_user()
    client.force_login(maintainer)
    submission = hosted_entry.submission
    step = next_step(submission)
    assert step.text == (
        f"verify it (the action “Verify”): hosted evaluation {hosted_entry.pk} is its "
        "evidence, no re-run needed"
    )
    page = reverse("admin:hosting_hostedrequest_change", args=[hosted_entry.pk])
    assert step.url == page

    body = client.get(page).content.decode()
    assert "every one of the 56 questions itself (56 answered, 0 without a usable answer)" in body
    assert "verifying it needs no re-run" in body

    response = client.post(
        reverse("admin:hosting_hostedrequest_changelist"),
        {"action": "verify_entry", "_selected_action": [hosted_entry.pk]},
        follow=True,
    )
    assert response.status_code == 200
    submission.refresh_from_db()
    assert submission.verification_status == VerificationStatus.VERIFIED
    assert Submission.objects.get(pk=submission.pk).verified_by == maintainer


def test_answers_another_account_published_earlier_are_verified_only_with_a_note(
    benchmark, hosted_entry, standin, django_capture_on_commit_callbacks
):
    """The copy rule lets the same answers in (docs/hosted.md, "The copy rule"), but an endpoint
    can replay another's file: the later entry's hosted evaluation alone is no evidence."""
    capture = django_capture_on_commit_callbacks
    twin = submit(
        benchmark, UserFactory(), base_url=standin.base_url, model=MODEL["good"], name="Twin"
    )
    twin = run(twin, capture)
    score_entry(twin, capture)
    maintainer = maintainer_user()

    with pytest.raises(VerificationRefused) as refused:
        set_verification_status(twin.submission, VerificationStatus.VERIFIED, actor=maintainer)
    assert str(refused.value) == (
        f"The answers of hosted evaluation {twin.pk} are byte for byte those of “Hosted-7B” "
        f"(entry {hosted_entry.submission.pk}), which another account published earlier: an "
        "endpoint may replay another's file, so Podium's calls do not show whose model this "
        "is. Verify it only with a note saying why (for example: both asked the same public "
        "model)."
    )
    # The earlier entry is not held up by the later copy.
    set_verification_status(hosted_entry.submission, VerificationStatus.VERIFIED, actor=maintainer)
    set_verification_status(
        twin.submission, VerificationStatus.VERIFIED, actor=maintainer, note="same public model"
    )

    twin.submission.refresh_from_db()
    assert twin.submission.verification_status == VerificationStatus.VERIFIED
    event = AuditEvent.objects.filter(action="submissions.verification.verified").latest("pk")
    assert event.data["evidence"]["same_answers_as"] == hosted_entry.submission.pk
    assert event.data["evidence"]["summary"].endswith(
        f"; the same answers as entry {hosted_entry.submission.pk}, verified (same public model)"
    )
