"""The submitter hears when the numbers are in (issue 13, point 7): a notification and an email
when a run is complete, and when it is scored and waits for them to start the judge; the
header counts unread notifications."""

import pytest
from django.core import mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from judging import services as judging
from submissions.board_refresh import count_board_change
from submissions.boards import recompute_board
from submissions.models import BoardEntry, Notification, NotificationKind, Submission
from submissions.notifications import mark_notifications_read
from submissions.services import (
    SubmissionDetails,
    create_submission,
    import_published_result,
    score_evaluation,
)
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
    assert complete.message == "All metrics of Mine on MedVidBench are in."
    assert "It ranked 1 (mean rank " in mail.outbox[-1].body
    assert "95% interval" in mail.outbox[-1].body


# An imported official row that beats "Mine" on three automatic metrics and loses on the judge's
# three: "Mine" ranks 2 while its judge metrics are pending (they rank last), 1 once judged.
RIVAL = {
    "CVS_acc": 0.5,
    "NAP_acc": 0.5,
    "TAG_mIoU@0.3": 0.9,
    "TAG_mIoU@0.5": 0.9,
    "DVC_F1": 0.9,
    "DVC_llm": 0.5,
    "VS_llm": 0.5,
    "RC_llm": 0.5,
}


def test_the_rank_told_at_completion_is_the_boards_after_the_run_and_is_never_kept(
    client, judged_benchmark, owner, upload, standin, django_capture_on_commit_callbacks
):
    """Issue 32, point 2: the notice, its email and the status page said "It ranks 2" (the
    rank with the judge metrics pending) when the board, recomputed a moment later, said 1."""
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    import_published_result(
        judged_benchmark, model_name="Rival", values=RIVAL, verified_at=timezone.now()
    )
    run = upload_and_score(judged_benchmark, owner, upload, django_capture_on_commit_callbacks)
    assert BoardEntry.objects.get(submission=run.submission).rank == 2  # judge pending

    with django_capture_on_commit_callbacks(execute=True):
        judging.run_job(judging.start_judge(run, enqueue=False).pk)

    assert BoardEntry.objects.get(submission=run.submission).rank == 1
    complete = Notification.objects.get(recipient=owner, kind=NotificationKind.COMPLETE)
    assert complete.message == "All metrics of Mine on MedVidBench are in."  # no number kept
    assert "It ranked 1 (mean rank 1.30) when this email was sent." in mail.outbox[-1].body
    client.force_login(owner)
    mine = client.get(reverse("submissions:mine")).content.decode()
    assert "All metrics of Mine on MedVidBench are in. It ranks 1 (mean rank 1.30) now." in mine

    # Another entry moves it: the listed notice follows the board, the stored one holds nothing.
    better = {key: 5.0 if key.endswith("_llm") else 1.0 for key in RIVAL}
    better |= {"SA_acc": 1.0, "STG_mIoU": 1.0}
    with django_capture_on_commit_callbacks(execute=True):
        import_published_result(
            judged_benchmark, model_name="Champion", values=better, verified_at=timezone.now()
        )
    mine = client.get(reverse("submissions:mine")).content.decode()
    assert "It ranks 2 (mean rank " in mine


def test_the_status_page_shows_no_rank_while_the_board_is_behind_the_run(
    client, judged_benchmark, owner, upload, standin, django_capture_on_commit_callbacks
):
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    run = upload_and_score(judged_benchmark, owner, upload, django_capture_on_commit_callbacks)
    client.force_login(owner)
    status_url = reverse("submissions:status", args=[run.submission.pk])
    assert "Rank <strong>1</strong>" in client.get(status_url).content.decode()

    with transaction.atomic():  # a change committed, its refresh not run yet
        count_board_change(judged_benchmark.pk)

    page = client.get(status_url).content.decode()
    assert "Placing the new numbers on the board" in page
    assert "Rank <strong>" not in page
    assert 'hx-trigger="every' in page  # the page polls until the board has it


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


def test_the_board_says_who_scored_its_judge_columns_and_when_they_mix_judges(
    client, judged_benchmark, owner, upload, standin, django_capture_on_commit_callbacks
):
    """Issue 32, point 4: the MedVidBench boards did not say their judge columns came from the
    demo's stand-in judge, and imported numbers (judged elsewhere) shared those columns."""
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    with django_capture_on_commit_callbacks(execute=True):
        import_published_result(
            judged_benchmark, model_name="Rival", values=RIVAL, verified_at=timezone.now()
        )
    run = upload_and_score(judged_benchmark, owner, upload, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        job = judging.start_judge(run, enqueue=False)
        judging.run_job(job.pk)
    job.refresh_from_db()
    rubric = job.rubric_version[:8]

    community = client.get("/b/medvidbench/community/").content.decode()
    official = client.get("/b/medvidbench/").content.decode()

    assert (
        "DVC_llm, VS_llm, RC_llm: scored by the LLM judge stand-in: standin-judge, rubric "
        f"{rubric} on every row of this board."
    ) in community
    assert (
        "DVC_llm, VS_llm, RC_llm: scored as published with the imported results on every row "
        "of this board."
    ) in official

    # A judged entry verified beside the imported one: the Official board's columns mix judges.
    with django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(pk=run.submission_id).update(
            verification_status="verified", verified_at=timezone.now()
        )
        recompute_board(judged_benchmark)
    official = client.get("/b/medvidbench/").content.decode()
    assert (
        "DVC_llm, VS_llm, RC_llm mix judges on this board: 1 row scored by stand-in: "
        f"standin-judge, rubric {rubric}; 1 row as published with the imported results. Compare "
        "these columns only between rows scored by the same judge; the other columns are scored "
        "alike."
    ) in official
