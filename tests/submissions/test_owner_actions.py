"""A submitter's own entry (issue 13, point 6): taken off the boards and published again, an
evaluate-only entry published later, its details edited; each audited, the board recomputed,
every path through the one writer, and nobody else's entry reachable."""

import pytest

from core.exceptions import DuplicatePredictions, InvalidName, NotYourEntry
from core.models import AuditEvent
from submissions import owner_actions
from submissions.boards import recompute_board
from submissions.models import BoardEntry, Submission
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory, maintainer_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


@pytest.fixture
def owner():
    return UserFactory()


def scored(benchmark, owner, predictions, name="Mine", publish=True):
    submission = create_submission(
        benchmark,
        owner=owner,
        details=SubmissionDetails(model_name=name, publish=publish, institution="Lab"),
        predictions=predictions,
    )
    score_evaluation(submission.evaluations.get())
    recompute_board(benchmark)
    submission.refresh_from_db()
    return submission


def on_board(submission):
    return BoardEntry.objects.filter(submission=submission).exists()


def test_the_owner_takes_an_entry_off_the_boards_and_publishes_it_again(
    benchmark, owner, perfect_predictions, django_capture_on_commit_callbacks
):
    entry = scored(benchmark, owner, perfect_predictions)
    assert on_board(entry)

    with django_capture_on_commit_callbacks(execute=True):
        owner_actions.set_published(entry, publish=False, actor=owner, note="a bug in my run")
    entry.refresh_from_db()
    assert not entry.publish
    assert not on_board(entry)
    event = AuditEvent.objects.get(action="submissions.submission.unpublished")
    assert (event.actor, event.data["note"]) == (owner, "a bug in my run")

    with django_capture_on_commit_callbacks(execute=True):
        owner_actions.set_published(entry, publish=True, actor=owner)
    assert on_board(entry)
    assert AuditEvent.objects.filter(action="submissions.submission.published").count() == 1


def test_nobody_else_decides_where_an_entry_is_shown(benchmark, owner, perfect_predictions):
    entry = scored(benchmark, owner, perfect_predictions)
    for other in (UserFactory(), maintainer_user()):
        with pytest.raises(NotYourEntry):
            owner_actions.set_published(entry, publish=False, actor=other)
    entry.refresh_from_db()
    assert entry.publish


def test_publishing_later_checks_the_name_and_the_file_as_an_upload_does(
    benchmark, owner, perfect_predictions, predictions_for, records
):
    private = scored(benchmark, owner, perfect_predictions, name="Taken", publish=False)
    other = UserFactory()
    scored(benchmark, other, predictions_for(["x"] * len(records)), name="taken")
    with pytest.raises(InvalidName, match="Taken"):
        owner_actions.set_published(private, publish=True, actor=owner)

    copy = scored(benchmark, other, perfect_predictions + b" ", name="Unique", publish=False)
    Submission.objects.filter(pk=copy.pk).update(predictions_sha256=private.predictions_sha256)
    Submission.objects.filter(pk=private.pk).update(model_name="Renamed", model_name_skeleton="")
    scored_copy = Submission.objects.get(pk=copy.pk)
    owner_actions.set_published(scored_copy, publish=True, actor=other)
    private.refresh_from_db()
    with pytest.raises(DuplicatePredictions):
        owner_actions.set_published(private, publish=True, actor=owner)
    private.refresh_from_db()
    assert not private.publish


def test_the_status_page_offers_the_owner_the_changes_and_they_work(
    client, benchmark, owner, perfect_predictions, django_capture_on_commit_callbacks
):
    entry = scored(benchmark, owner, perfect_predictions)
    client.force_login(owner)
    page = client.get(f"/submissions/{entry.pk}/").content.decode()
    assert "Take this entry off the boards" in page
    assert f'href="/submissions/{entry.pk}/details/"' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/submissions/{entry.pk}/details/",
            {
                "institution": "New Lab",
                "team_name": "Team",
                "authors": "A. Author",
                "model_url": "https://example.org/model",
                "paper_url": "",
                "code_url": "https://example.org/code",
            },
        )
    assert response.status_code == 302
    entry.refresh_from_db()
    assert (entry.institution, entry.code_url) == ("New Lab", "https://example.org/code")
    event = AuditEvent.objects.get(action="submissions.submission.edited")
    assert event.actor == owner
    assert event.data["changes"]["institution"] == {"from": "Lab", "to": "New Lab"}

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/submissions/{entry.pk}/publication/", {"publish": "0"})
    assert not on_board(entry)
    page = client.get(f"/submissions/{entry.pk}/").content.decode()
    assert "Publish this entry" in page


def test_another_persons_entry_is_not_found_for_these_changes(
    client, benchmark, owner, perfect_predictions
):
    entry = scored(benchmark, owner, perfect_predictions)
    client.force_login(UserFactory())
    assert client.post(f"/submissions/{entry.pk}/publication/", {"publish": "0"}).status_code == 404
    assert client.get(f"/submissions/{entry.pk}/details/").status_code == 404
    entry.refresh_from_db()
    assert entry.publish
