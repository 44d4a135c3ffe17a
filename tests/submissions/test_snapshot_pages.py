"""The history page, a snapshot's board page and `?as_of=` on the live board (issue 33): the
page of a snapshot is the live board's over the snapshot's rows, under a banner naming it,
with its citation; later changes do not reach it."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from submissions.enums import VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardSnapshot
from submissions.selectors import BoardFilter, BoardSort
from submissions.services import import_published_result, set_verification_status
from submissions.snapshot_board import snapshot_selection
from submissions.snapshots import DERIVED_KEPT, DecodedSnapshot, decoded_snapshot
from tests.accounts.factories import maintainer_user

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def two_snapshots(medvidbench, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = import_published_result(
            medvidbench, model_name="GPT-4o", values={"CVS_acc": 0.6}, verified_at=timezone.now()
        )
    compute_rank_intervals(medvidbench)
    with django_capture_on_commit_callbacks(execute=True):
        import_published_result(
            medvidbench, model_name="Claude", values={"CVS_acc": 0.7}, verified_at=timezone.now()
        )
    compute_rank_intervals(medvidbench)
    with django_capture_on_commit_callbacks(execute=True):
        set_verification_status(
            first, VerificationStatus.WITHDRAWN, actor=maintainer_user(), reason="re-checked"
        )
    compute_rank_intervals(medvidbench)
    return list(BoardSnapshot.objects.order_by("pk"))


def page(url, **params):
    response = Client().get(url, params)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_the_history_lists_every_snapshot_newest_first(medvidbench, two_snapshots):
    html = page(reverse("submissions:history", args=["medvidbench"]))

    links = [f'/b/medvidbench/history/{snapshot.pk}/"' for snapshot in two_snapshots]
    positions = [html.index(link) for link in links]
    assert positions == sorted(positions, reverse=True)
    assert two_snapshots[0].sha256[:16] in html
    assert "An entry left the Official board" in html


def test_a_snapshot_page_shows_the_board_as_it_was_with_its_banner_and_citation(
    medvidbench, two_snapshots
):
    first = two_snapshots[0]
    url = reverse("submissions:snapshot", args=["medvidbench", first.pk])

    html = page(url)

    assert 'id="snapshot-banner"' in html
    assert f"snapshot {first.pk}" in html
    assert first.sha256 in html
    assert "GPT-4o" in html
    assert "Claude" not in html
    assert f"@misc{{podium-medvidbench-snapshot-{first.pk}," in html
    assert f"/b/medvidbench/history/{first.pk}/" in html
    # Its Community board, sorted and searched as the live one is.
    community = page(reverse("submissions:snapshot_community", args=["medvidbench", first.pk]))
    assert "No entries on this board yet." in community
    last = two_snapshots[-1]
    searched = page(
        reverse("submissions:snapshot_community", args=["medvidbench", last.pk]), q="gpt"
    )
    assert "GPT-4o" in searched
    assert "aria-sort" in page(
        reverse("submissions:snapshot", args=["medvidbench", last.pk]), sort="model"
    )


def test_as_of_on_the_live_board_goes_to_the_snapshot_of_that_moment(medvidbench, two_snapshots):
    moment = two_snapshots[1].taken_at + timedelta(microseconds=1)

    response = Client().get(
        reverse("submissions:community", args=["medvidbench"]),
        {"as_of": moment.isoformat(), "sort": "model"},
    )

    assert response.status_code == 302
    assert response["Location"] == (
        reverse("submissions:snapshot_community", args=["medvidbench", two_snapshots[1].pk])
        + "?sort=model"
    )
    before = Client().get(
        reverse("submissions:board", args=["medvidbench"]), {"as_of": "2020-01-01"}
    )
    assert before.status_code == 404
    assert two_snapshots[0].taken_at.date().isoformat() in before.content.decode()


def test_the_live_board_cites_its_latest_snapshot(medvidbench, two_snapshots):
    html = page(reverse("submissions:board", args=["medvidbench"]))

    latest = two_snapshots[-1]
    assert f"podium-medvidbench-snapshot-{latest.pk}" in html
    assert latest.sha256 in html


def test_a_kept_snapshot_page_reads_none_of_its_stored_bytes(medvidbench, two_snapshots):
    # The decoded rows are kept per process (`decoded_snapshot`): the second request for a
    # snapshot's page, searched so its table is not cached, reads neither stored column.
    last = two_snapshots[-1]
    url = reverse("submissions:snapshot", args=["medvidbench", last.pk])
    assert "Claude" in page(url, q="cla")

    with CaptureQueriesContext(connection) as queries:
        html = page(url, q="cla")

    assert "Claude" in html
    snapshot_reads = [
        query["sql"] for query in queries if '"submissions_boardsnapshot"."rows"' in query["sql"]
    ]
    assert snapshot_reads == []
    assert not any('"submissions_boardsnapshot"."csv"' in query["sql"] for query in queries)


def test_a_snapshots_selection_is_derived_once_and_kept(medvidbench, two_snapshots):
    decoded = decoded_snapshot(two_snapshots[-1])
    everything = BoardFilter()

    first = snapshot_selection(decoded, ["official"], everything, BoardSort("model"))
    again = snapshot_selection(decoded, ["official"], everything, BoardSort("model"))
    other = snapshot_selection(decoded, ["official"], everything, BoardSort("model", True))

    assert again is first
    assert [row["model"] for row in first] == ["Claude"]
    assert other is not first
    assert decoded_snapshot(two_snapshots[-1]) is decoded


def test_a_decoded_snapshot_keeps_only_the_last_questions():
    decoded = DecodedSnapshot(())
    for number in range(DERIVED_KEPT + 5):
        decoded.derived(("question", number), lambda number=number: [number])
    asked = []

    decoded.derived(("question", 0), lambda: asked.append(0) or [0])  # forgotten: derived again
    decoded.derived(("question", DERIVED_KEPT + 4), lambda: asked.append(1) or [1])  # kept

    assert asked == [0]
