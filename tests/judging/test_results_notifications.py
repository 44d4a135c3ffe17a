"""The submitter hears when the numbers are in (issue 13, point 7): a notification and an email
when a run is complete, and when it is scored and waits for them to start the judge; the
header counts unread notifications."""

import pytest
from django.core import mail

from judging import services as judging
from submissions.models import Notification, NotificationKind
from submissions.notifications import mark_notifications_read
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.fixture
def owner():
    return UserFactory(email="owner@example.org")


def upload_and_score(benchmark, owner, upload, callbacks):
    with callbacks(execute=False):
        submission = create_submission(
            benchmark,
            owner=owner,
            details=SubmissionDetails(model_name="Mine"),
            predictions=upload(),
        )
    with callbacks(execute=True):
        return score_evaluation(submission.evaluations.get())


def test_a_run_waiting_for_its_owner_to_start_the_judge_is_reported_scored(
    judged_benchmark, owner, upload, django_capture_on_commit_callbacks
):
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])

    upload_and_score(judged_benchmark, owner, upload, django_capture_on_commit_callbacks)

    notification = Notification.objects.get(recipient=owner)
    assert notification.kind == NotificationKind.SCORED
    assert "start it from the page" in notification.message
    (email,) = mail.outbox
    assert email.to == ["owner@example.org"]
    assert "Start the judge on your submission's page" in email.body


def test_a_complete_run_is_reported_once_with_its_rank(
    judged_benchmark, owner, upload, standin, django_capture_on_commit_callbacks
):
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    run = upload_and_score(judged_benchmark, owner, upload, django_capture_on_commit_callbacks)

    with django_capture_on_commit_callbacks(execute=True):
        judging.run_job(judging.start_judge(run, enqueue=False).pk)

    kinds = list(Notification.objects.filter(recipient=owner).values_list("kind", flat=True))
    assert sorted(kinds) == ["complete", "scored"]
    complete = Notification.objects.get(recipient=owner, kind=NotificationKind.COMPLETE)
    assert complete.message.startswith("All metrics of Mine on MedVidBench are in. It ranks 1")
    assert "95% interval" in mail.outbox[-1].body


def test_with_the_automatic_judge_only_completion_is_reported(
    judged_benchmark, owner, upload, django_capture_on_commit_callbacks
):
    judged_benchmark.judge_auto_start = True
    judged_benchmark.save(update_fields=["judge_auto_start"])

    upload_and_score(judged_benchmark, owner, upload, django_capture_on_commit_callbacks)

    assert not Notification.objects.filter(recipient=owner).exists()


def test_the_header_counts_unread_notifications_until_they_are_read(
    client, judged_benchmark, owner, upload, django_capture_on_commit_callbacks
):
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    upload_and_score(judged_benchmark, owner, upload, django_capture_on_commit_callbacks)
    client.force_login(owner)

    page = client.get("/submissions/").content.decode()
    assert (
        '<span class="unread-count">1<span class="visually-hidden"> unread notification'
        "</span></span>"
    ) in page

    mark_notifications_read(owner)
    assert 'class="unread-count"' not in client.get("/submissions/").content.decode()
