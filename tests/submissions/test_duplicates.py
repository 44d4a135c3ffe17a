"""Duplicate files (issue 13, point 4): found by checksum per benchmark. Your own earlier file is
accepted and flagged (page, message, API); another account's published file is refused with a
clear message, storing nothing; another account's evaluate-only file is not revealed."""

import re
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from accounts.services import create_api_token
from core.exceptions import DomainError, DuplicatePredictions
from core.models import AuditEvent
from submissions.models import Evaluation, Submission
from submissions.owner_actions import set_published
from submissions.services import SubmissionDetails, create_submission, evaluations_left_today
from tests.accounts.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


def entry(benchmark, owner, predictions, name, publish=True):
    return create_submission(
        benchmark,
        owner=owner,
        details=SubmissionDetails(model_name=name, publish=publish),
        predictions=predictions,
    )


def form_post(client, predictions, name):
    return client.post(
        "/b/medvidbench/submit/",
        {
            "model_name": name,
            "institution": "Lab",
            "contact_email": "me@example.org",
            "model_url": "https://example.org/model",
            "predictions": SimpleUploadedFile("p.json", predictions, "application/json"),
        },
        follow=True,
    )


NOTE = (
    "This file is byte for byte the one of your entry “First”: it scores the same and counts "
    "towards your daily evaluations. “First” is on the boards with it, so this entry is "
    "evaluate-only: the same results are listed once. To list them under this entry's name "
    "instead, take “First” off the boards, then publish this one."
)


def visible(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())


def test_your_own_published_file_under_a_new_name_is_evaluate_only_with_a_pointer(
    client, benchmark, perfect_predictions
):
    """Issue 32, point 9: the copy was published, so the same results were listed twice under
    two names, and the flash and the page named different entries."""
    owner = UserFactory()
    first = entry(benchmark, owner, perfect_predictions, "First")
    client.force_login(owner)

    page = form_post(client, perfect_predictions, "Second").content.decode()

    second = Submission.objects.get(model_name="Second")
    assert second.predictions_sha256 == first.predictions_sha256
    assert (second.publish, Submission.objects.get(pk=first.pk).publish) == (False, True)
    flash = re.search(r'<li class="warning">(.*?)</li>', page, re.S).group(1)
    assert visible(flash) == NOTE
    paragraph = re.search(r'<p class="notice duplicate-file">(.*?)</p>', page, re.S).group(1)
    assert re.sub(r" \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)", "", visible(paragraph)) == NOTE
    assert f'<a href="/submissions/{first.pk}/">“First”</a>' in paragraph
    event = AuditEvent.objects.get(action="submissions.submission.created", object_id=second.pk)
    assert event.data["note"] == f"evaluate-only: the file of the published entry #{first.pk}"

    # Publishing it is refused while "First" is listed; taken off, this one may be listed.
    with pytest.raises(DomainError, match="Your entry “First” is on the boards with this same"):
        set_published(second, publish=True, actor=owner)
    set_published(first, publish=False, actor=owner)
    assert set_published(second, publish=True, actor=owner).publish


def test_your_own_evaluate_only_file_may_be_published_under_a_new_name(
    benchmark, perfect_predictions
):
    owner = UserFactory()
    entry(benchmark, owner, perfect_predictions, "Trial", publish=False)

    second = entry(benchmark, owner, perfect_predictions, "Release")

    assert second.publish  # only one of the two is listed


def test_another_accounts_published_file_is_refused_and_nothing_is_stored(
    client, benchmark, perfect_predictions, private_dir
):
    entry(benchmark, UserFactory(), perfect_predictions, "Theirs")
    copier = UserFactory()
    files_before = sorted(private_dir.rglob("*.json"))
    left = evaluations_left_today(copier, benchmark)

    with pytest.raises(DuplicatePredictions, match="“Theirs”, an entry another account"):
        entry(benchmark, copier, perfect_predictions, "Mine")

    assert not Submission.objects.filter(owner=copier).exists()
    assert Evaluation.objects.count() == 1
    assert sorted(private_dir.rglob("*.json")) == files_before
    assert evaluations_left_today(copier, benchmark) == left
    client.force_login(copier)
    page = form_post(client, perfect_predictions, "Mine").content.decode()
    assert "This file is byte for byte the predictions of “Theirs”" in page
    assert 'id="id_predictions"' in page  # the form is shown again, with the error


def test_another_accounts_evaluate_only_file_is_not_revealed(benchmark, perfect_predictions):
    entry(benchmark, UserFactory(), perfect_predictions, "Private", publish=False)
    mine = entry(benchmark, UserFactory(), perfect_predictions, "Mine")
    assert mine.pk


def test_the_api_flags_your_duplicate_and_refuses_a_copy_with_its_code(
    benchmark, perfect_predictions
):
    owner = UserFactory()
    first = entry(benchmark, owner, perfect_predictions, "First")
    api = APIClient()
    _, raw = create_api_token(owner, name="script")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    def submit(client, name):
        upload = SimpleUploadedFile("p.json", perfect_predictions, "application/json")
        return client.post(
            "/api/v1/benchmarks/medvidbench/submissions/",
            {
                "model_name": name,
                "institution": "Lab",
                "contact_email": "me@example.org",
                "model_url": "https://example.org/model",
                "predictions": upload,
            },
            format="multipart",
        )

    created = submit(api, "Second")
    assert created.status_code == 201, created.json()
    assert created.json()["duplicate_of"] == [first.pk]
    assert created.json()["publish"] is False  # "First" lists these results already

    other = APIClient()
    _, raw = create_api_token(UserFactory(), name="script")
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    refused = submit(other, "Copy")
    assert refused.status_code == 409
    assert refused.json()["code"] == "duplicate_predictions"
    assert "“First”" in refused.json()["detail"]


# --- races (issue 31, point 4): the rule is decided under a lock every writer takes ------------
#
# Another transaction publishes a file and has not committed when this path checks it, so the
# check alone cannot see it: the path waits on the copy rule's lock (PostgreSQL's advisory
# lock) and, once the other commits, is refused. SQLite serialises whole transactions instead
# (IMMEDIATE, core/locks.py); the suite's in-memory SQLite cannot hold two connections' writes
# at once, so the waits are PostgreSQL's, as the look-alike names' race tests.

race = pytest.mark.django_db(transaction=True)


def held_open(write):
    """Run `write()` in another thread and connection inside a transaction that stays open a
    second after it returns (the other path runs meanwhile). Returns the thread and what it
    reports: the object written or the error raised."""
    import threading
    import time

    from django.db import connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("a writer waiting on another's uncommitted entry needs PostgreSQL")
    written, outcome = threading.Event(), []

    def run():
        try:
            with transaction.atomic():
                outcome.append(write())
                written.set()
                time.sleep(1.0)  # the other path checks meanwhile, and must wait
        except Exception as error:  # reported by the main thread
            outcome.append(error)
            written.set()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert written.wait(20)
    return thread, outcome


def published_owners(benchmark, checksum):
    return sorted(
        Submission.objects.filter(
            benchmark=benchmark, predictions_sha256=checksum, publish=True
        ).values_list("owner__username", flat=True)
    )


@race
def test_two_accounts_uploading_the_same_file_at_once_publish_it_once(
    benchmark, perfect_predictions, private_dir
):
    first, copier = UserFactory(username="first"), UserFactory(username="copier")
    thread, outcome = held_open(lambda: entry(benchmark, first, perfect_predictions, "Theirs"))
    try:
        with pytest.raises(DuplicatePredictions, match="“Theirs”, an entry another account"):
            entry(benchmark, copier, perfect_predictions, "Mine")
    finally:
        thread.join(20)

    assert isinstance(outcome[0], Submission), outcome
    assert published_owners(benchmark, outcome[0].predictions_sha256) == ["first"]
    assert not Submission.objects.filter(owner=copier).exists()
    stored = sorted((private_dir / "predictions").rglob("*.json"))
    assert stored == [private_dir / outcome[0].predictions_file]  # the refused file deleted


@race
def test_an_upload_while_another_account_publishes_the_same_file_is_refused(
    benchmark, perfect_predictions
):
    """The publish (submissions/owner_actions.py) is held open while the upload checks."""
    owner, other = UserFactory(username="owner"), UserFactory(username="other")
    hidden = entry(benchmark, owner, perfect_predictions, "Hidden", publish=False)

    thread, outcome = held_open(lambda: set_published(hidden, publish=True, actor=owner))
    try:
        with pytest.raises(DuplicatePredictions, match="“Hidden”, an entry another account"):
            entry(benchmark, other, perfect_predictions, "Upload")
    finally:
        thread.join(20)

    assert isinstance(outcome[0], Submission), outcome
    assert published_owners(benchmark, hidden.predictions_sha256) == ["owner"]


@race
def test_publishing_while_another_account_uploads_the_same_file_is_refused(
    benchmark, perfect_predictions
):
    """The upload is held open while the publish (submissions/owner_actions.py) checks."""
    owner, other = UserFactory(username="owner"), UserFactory(username="other")
    hidden = entry(benchmark, owner, perfect_predictions, "Hidden", publish=False)

    thread, outcome = held_open(lambda: entry(benchmark, other, perfect_predictions, "Upload"))
    try:
        with pytest.raises(DuplicatePredictions, match="“Upload”, an entry another account"):
            set_published(hidden, publish=True, actor=owner)
    finally:
        thread.join(20)

    assert isinstance(outcome[0], Submission), outcome
    assert published_owners(benchmark, hidden.predictions_sha256) == ["other"]
    hidden.refresh_from_db()
    assert hidden.publish is False


@race
def test_the_api_refuses_a_copy_published_at_the_same_moment(benchmark, perfect_predictions):
    first = UserFactory(username="first")
    api = APIClient()
    _, raw = create_api_token(UserFactory(username="copier"), name="script")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    thread, outcome = held_open(lambda: entry(benchmark, first, perfect_predictions, "Theirs"))
    try:
        refused = api.post(
            "/api/v1/benchmarks/medvidbench/submissions/",
            {
                "model_name": "Copy",
                "institution": "Lab",
                "contact_email": "me@example.org",
                "model_url": "https://example.org/model",
                "predictions": SimpleUploadedFile("p.json", perfect_predictions),
            },
            format="multipart",
        )
    finally:
        thread.join(20)

    assert (refused.status_code, refused.json()["code"]) == (409, "duplicate_predictions")
    assert published_owners(benchmark, outcome[0].predictions_sha256) == ["first"]


@race
def test_one_owner_uploading_the_same_file_twice_at_once_keeps_both_listing_one(
    benchmark, perfect_predictions
):
    """The lock serialises, it does not change the rule: the owner's own copies are accepted,
    and the second waits for the first, so it sees it published and stays evaluate-only (the
    same results are listed once, issue 32)."""
    owner = UserFactory(username="owner")
    thread, outcome = held_open(lambda: entry(benchmark, owner, perfect_predictions, "First"))
    try:
        second = entry(benchmark, owner, perfect_predictions, "Second")
    finally:
        thread.join(20)

    assert isinstance(outcome[0], Submission), outcome
    assert published_owners(benchmark, second.predictions_sha256) == ["owner"]
    assert not second.publish
    assert Submission.objects.filter(owner=owner).count() == 2
