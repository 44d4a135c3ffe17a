"""Notifications (issue 6): who is told what, by email and on their pages, for every
verification move, a failed scoring run and a failed judge job."""

import re
from html import unescape

import pytest
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.db import transaction
from django.utils import timezone

from judging.enums import JobStatus
from judging.models import JudgeEndpoint, JudgeJob
from judging.services import _fail_job
from submissions import services
from submissions.enums import (
    VERIFICATION_NEEDS_REASON,
    VERIFICATION_TRANSITIONS,
    EvaluationStatus,
    FailureCode,
    VerificationStatus,
)
from submissions.models import Notification, NotificationKind
from submissions.notifications import UNREAD_SHOWN, VERIFICATION_KIND, notify
from tests.accounts.factories import UserFactory, maintainer_user
from tests.benchmark.factories import BenchmarkFactory
from tests.verifying.factories import rerun_report

from .factories import EvaluationFactory, SubmissionFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

V = VerificationStatus
K = NotificationKind
REASON = "The re-run scored 12 points lower than the upload."


class BrokenBackend(BaseEmailBackend):
    """An email backend whose server refuses every connection."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError("smtp.example.org:587 refused the connection")


@pytest.fixture
def owner():
    return UserFactory(first_name="Ada", last_name="Lovelace")


@pytest.fixture
def submission(owner):
    return SubmissionFactory(
        owner=owner, model_name="SurgVLM", benchmark=BenchmarkFactory(name="MedVidBench")
    )


@pytest.fixture
def move(django_capture_on_commit_callbacks):
    """A function: move an entry along verification as a maintainer would, running what the
    service schedules on commit."""
    maintainer = UserFactory(is_staff=True)

    def move(submission, new, *, reason="", note=""):
        submission.refresh_from_db(fields=["verification_status"])
        if new == V.VERIFIED and submission.verification_status == V.VERIFYING:
            rerun_report(submission)  # the evidence: a re-run within the tolerance
        with django_capture_on_commit_callbacks(execute=True):
            return services.set_verification_status(
                submission, new, actor=maintainer, reason=reason, note=note
            )

    return move


def kinds(user=None):
    rows = Notification.objects.filter(**({"recipient": user} if user else {}))
    return [row.kind for row in rows.order_by("id")]


# --- verification moves ---------------------------------------------------------------------


# Sorted: the allowed moves are a set, whose order changes from process to process, and the
# pytest-xdist workers must collect the same tests in the same order.
MOVES = [
    (current, new)
    for current, allowed in VERIFICATION_TRANSITIONS.items()
    for new in sorted(allowed)
]


@pytest.mark.parametrize(("current", "new"), MOVES)
def test_every_verification_move_notifies_exactly_when_the_submitter_must_hear(
    move, owner, current, new
):
    # States set by the test; verified from anywhere but `verifying` is for the maintainers'
    # own results only (a baseline here), re-verified with a note.
    submission = SubmissionFactory(
        owner=owner, verification_status=current, is_baseline=current != V.VERIFYING
    )
    EvaluationFactory(submission=submission, status=EvaluationStatus.COMPLETE, metrics={})
    reason = REASON if new in VERIFICATION_NEEDS_REASON else ""

    move(submission, new, reason=reason, note="re-checked")

    expected = VERIFICATION_KIND.get(new)
    assert kinds() == ([expected] if expected else [])
    assert len(mail.outbox) == (1 if expected else 0)
    if expected:
        notification = Notification.objects.get()
        assert (notification.recipient, notification.submission) == (owner, submission)
        assert notification.email_error == ""
        assert notification.emailed_at is not None
        assert notification.read_at is None
        email = mail.outbox[0]
        assert email.to == [owner.email]
        assert email.subject == notification.subject
        assert notification.message in email.body
        assert f"Status:    {new.label}" in email.body
        assert (f"Reason:    {REASON}" in email.body) == bool(reason)


def test_the_email_names_the_model_benchmark_state_reason_and_links_the_page(
    move, submission, settings
):
    settings.PODIUM_SITE_URL = "https://podium.example.org/"
    move(submission, V.NOMINATED)
    move(submission, V.REJECTED, reason=REASON)

    email = mail.outbox[1]
    assert email.subject == "Not verified: SurgVLM on MedVidBench"
    assert email.from_email == settings.DEFAULT_FROM_EMAIL
    assert email.body == (
        "Hello Ada Lovelace,\n"
        "\n"
        f"SurgVLM on MedVidBench was not verified. Reason: {REASON}\n"
        "\n"
        "Your entry stays on the Community board. If you can address the reason,\n"
        "tell the maintainers: a rejected entry can be nominated again.\n"
        "\n"
        "Model:     SurgVLM\n"
        "Benchmark: MedVidBench\n"
        "Status:    Rejected\n"
        f"Reason:    {REASON}\n"
        "\n"
        f"Your submission's page: https://podium.example.org/submissions/{submission.pk}/\n"
        "\n"
        "--\n"
        "Podium. You receive this because you submitted this model. The same notice is on your\n"
        "submissions page until you mark it read: https://podium.example.org/submissions/\n"
    )


def test_access_requested_says_the_maintainers_will_ask_for_model_api_access(move, submission):
    move(submission, V.NOMINATED)
    move(submission, V.CONTACTED)

    assert kinds() == [K.NOMINATED, K.ACCESS_REQUESTED]
    notification = Notification.objects.get(kind=K.ACCESS_REQUESTED)
    assert notification.message == (
        "The maintainers will contact you to provide model API access for SurgVLM on "
        "MedVidBench, so they can re-run it themselves."
    )
    assert mail.outbox[1].subject == "Model access requested: SurgVLM on MedVidBench"


def test_the_plain_text_email_is_not_html_escaped(move):
    submission = SubmissionFactory(model_name="R&D <v2>", benchmark=BenchmarkFactory(name="A&B"))

    move(submission, V.NOMINATED)

    assert "R&D <v2> on A&B was nominated for the Official board." in mail.outbox[0].body
    assert "Model:     R&D <v2>\n" in mail.outbox[0].body


def test_the_whole_workflow_tells_the_submitter_four_times(move, submission):
    EvaluationFactory(submission=submission, status=EvaluationStatus.COMPLETE, metrics={})
    for state in (V.NOMINATED, V.CONTACTED, V.ACCESS_GRANTED, V.VERIFYING, V.VERIFIED):
        move(submission, state)
    move(submission, V.WITHDRAWN, reason="The authors asked for it.")

    assert kinds() == [K.NOMINATED, K.ACCESS_REQUESTED, K.VERIFIED, K.WITHDRAWN]
    assert [email.to for email in mail.outbox] == [[submission.owner.email]] * 4
    assert Notification.objects.get(kind=K.WITHDRAWN).message == (
        "SurgVLM was withdrawn from the Official board of MedVidBench. "
        "Reason: The authors asked for it."
    )


def test_taking_a_nomination_back_sends_nothing_more(move, submission):
    move(submission, V.NOMINATED)
    move(submission, V.COMMUNITY)

    assert kinds() == [K.NOMINATED]
    assert len(mail.outbox) == 1


def test_a_move_that_is_rolled_back_tells_no_one(submission, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        services.set_verification_status(submission, V.NOMINATED, actor=None)
        transaction.set_rollback(True)

    assert (kinds(), mail.outbox) == ([], [])


def test_an_imported_result_has_no_one_to_tell(django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory()
    with django_capture_on_commit_callbacks(execute=True):
        imported = services.import_published_result(
            benchmark, model_name="GPT-4o", values={}, verified_at=timezone.now()
        )
    with django_capture_on_commit_callbacks(execute=True):
        services.set_verification_status(imported, V.WITHDRAWN, actor=None, reason="Retracted.")

    assert imported.owner is None
    assert (kinds(), mail.outbox) == ([], [])


def test_without_an_account_address_the_entry_contact_email_is_used(move):
    submission = SubmissionFactory(owner=UserFactory(email=""), contact_email="lab@example.org")

    move(submission, V.NOMINATED)

    assert [email.to for email in mail.outbox] == [["lab@example.org"]]


def test_without_any_address_the_notice_is_still_shown(move):
    submission = SubmissionFactory(owner=UserFactory(email=""), contact_email="")

    move(submission, V.NOMINATED)

    notification = Notification.objects.get()
    assert (notification.kind, notification.emailed_at, mail.outbox) == (K.NOMINATED, None, [])
    assert notification.email_error == (
        "No email address: neither the account nor the entry has one."
    )


def test_a_failing_mail_server_is_recorded_and_does_not_undo_the_move(
    move, submission, settings, caplog
):
    settings.MAILERS = {"default": {"BACKEND": f"{__name__}.BrokenBackend"}}

    move(submission, V.NOMINATED)

    submission.refresh_from_db()
    assert submission.verification_status == V.NOMINATED
    notification = Notification.objects.get()
    assert notification.kind == K.NOMINATED
    assert notification.emailed_at is None
    assert notification.email_error == (
        "ConnectionRefusedError: smtp.example.org:587 refused the connection"
    )
    assert f"emailing notification {notification.pk}" in caplog.text


# --- failed runs ------------------------------------------------------------------------------


def test_a_failed_scoring_run_notifies_its_owner_once(
    submission, django_capture_on_commit_callbacks
):
    evaluation = EvaluationFactory(submission=submission, status=EvaluationStatus.QUEUED)

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        services.set_evaluation_status(evaluation, EvaluationStatus.SCORING)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        services.set_evaluation_status(
            evaluation,
            EvaluationStatus.FAILED,
            error_code=FailureCode.INVALID_PREDICTIONS,
            error_message="Row 3: the answer is not a time span.",
        )

    notification = Notification.objects.get()
    assert (notification.kind, notification.recipient, notification.submission) == (
        K.SCORING_FAILED,
        submission.owner,
        submission,
    )
    assert notification.message == (
        "Scoring SurgVLM on MedVidBench failed: Row 3: the answer is not a time span."
    )
    assert [email.subject for email in mail.outbox] == ["Scoring failed: SurgVLM on MedVidBench"]
    assert "Status:    Scoring failed" in mail.outbox[0].body


def test_a_failed_run_of_an_entry_without_owner_tells_no_one(django_capture_on_commit_callbacks):
    evaluation = EvaluationFactory(
        submission=SubmissionFactory(owner=None), status=EvaluationStatus.QUEUED
    )

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        services.set_evaluation_status(
            evaluation, EvaluationStatus.FAILED, error_code=FailureCode.INTERNAL_ERROR
        )

    assert (kinds(), mail.outbox) == ([], [])


def judge_job(submission):
    """A running judge job of a run being judged (states set by the test)."""
    evaluation = EvaluationFactory(submission=submission, status=EvaluationStatus.JUDGING)
    endpoint = JudgeEndpoint.objects.create(
        benchmark=submission.benchmark, name="test", base_url="http://127.0.0.1:9/v1", model="m"
    )
    return JudgeJob.objects.create(
        evaluation=evaluation,
        endpoint=endpoint,
        model="m",
        rubric_version="1",
        rubric_template="t",
        status=JobStatus.RUNNING,
    )


def test_a_failed_judge_job_notifies_the_owner_once(submission, django_capture_on_commit_callbacks):
    job = judge_job(submission)

    with django_capture_on_commit_callbacks(execute=True):
        _fail_job(job, "The endpoint refused the connection.")
    with django_capture_on_commit_callbacks(execute=True):
        _fail_job(job, "A second failure of a failed job changes nothing.")

    job.evaluation.refresh_from_db()
    assert job.evaluation.state == EvaluationStatus.SCORED
    notification = Notification.objects.get()
    assert (notification.kind, notification.recipient) == (K.JUDGE_FAILED, submission.owner)
    assert notification.message == (
        "The LLM judge could not finish SurgVLM on MedVidBench: "
        "The endpoint refused the connection."
    )
    assert [email.subject for email in mail.outbox] == ["LLM judge failed: SurgVLM on MedVidBench"]


# --- the pages --------------------------------------------------------------------------------


def shown(content):
    """The notifications a page lists, as their text."""
    items = re.findall(r'<li class="notification [^"]*">(.*?)</li>', content, re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", "", item)).split()) for item in items]


def page(client, url):
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_my_submissions_shows_my_unread_notifications_newest_first(client, submission, owner):
    other = SubmissionFactory()
    notify(other, K.NOMINATED, message="Someone else's entry was nominated.")
    first = notify(submission, K.NOMINATED, message="Nominated.")
    second = notify(submission, K.ACCESS_REQUESTED, message="Access requested.")
    client.force_login(owner)

    assert shown(page(client, "/submissions/")) == [
        f"{second.created_at:%Y-%m-%d %H:%M} Model access requested: Access requested.",
        f"{first.created_at:%Y-%m-%d %H:%M} Nominated for the Official board: Nominated.",
    ]


def test_my_submissions_lists_at_most_twenty_unread(client, submission, owner):
    for number in range(UNREAD_SHOWN + 1):
        notify(submission, K.SCORING_FAILED, message=f"Failure {number}.")
    client.force_login(owner)

    messages = [text.rsplit(": ", 1)[1] for text in shown(page(client, "/submissions/"))]

    assert messages == [f"Failure {number}." for number in range(UNREAD_SHOWN, 0, -1)]


@pytest.mark.parametrize("count", [1, 3])
def test_my_submissions_with_notifications_costs_constant_queries(
    client, submission, owner, count, django_assert_num_queries
):
    for number in range(count):
        notify(submission, K.SCORING_FAILED, message=f"Failure {number}.")
    client.force_login(owner)

    # The session, the user, the submissions, the notifications with their submissions, and
    # the header's count of unread ones.
    with django_assert_num_queries(5):
        content = page(client, "/submissions/")
    assert len(shown(content)) == count


def test_marking_read_clears_my_notifications_only(client, submission, owner):
    mine = notify(submission, K.NOMINATED, message="Nominated.")
    theirs = notify(SubmissionFactory(), K.NOMINATED, message="Theirs.")
    client.force_login(owner)

    response = client.post("/submissions/notifications/read/")

    assert (response.status_code, response.url) == (302, "/submissions/")
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.read_at is not None, theirs.read_at) == (True, None)
    content = page(client, "/submissions/")
    assert (shown(content), "Mark all read" in content) == ([], False)


def test_marking_read_takes_a_signed_in_post(client, submission, owner):
    notify(submission, K.NOMINATED, message="Nominated.")

    assert client.post("/submissions/notifications/read/").url == (
        "/accounts/login/?next=/submissions/notifications/read/"
    )
    client.force_login(owner)
    assert client.get("/submissions/notifications/read/").status_code == 405
    assert Notification.objects.filter(read_at=None).count() == 1


def test_the_detail_page_lists_that_entrys_notifications_read_or_not(client, submission, owner):
    read = notify(submission, K.NOMINATED, message="Nominated.")
    Notification.objects.filter(pk=read.pk).update(read_at=read.created_at)
    unread = notify(submission, K.ACCESS_REQUESTED, message="Access requested.")
    notify(SubmissionFactory(owner=owner), K.NOMINATED, message="My other entry.")
    client.force_login(owner)

    content = page(client, f"/submissions/{submission.pk}/")

    assert shown(content) == [
        f"{unread.created_at:%Y-%m-%d %H:%M} Model access requested: Access requested.",
        f"{read.created_at:%Y-%m-%d %H:%M} Nominated for the Official board: Nominated.",
    ]
    assert content.count('class="notification notification-access_requested unread"') == 1


def test_a_maintainer_viewing_an_entry_does_not_see_its_owners_notifications(client, submission):
    notify(submission, K.NOMINATED, message="Nominated.")
    client.force_login(maintainer_user())

    assert shown(page(client, f"/submissions/{submission.pk}/")) == []
