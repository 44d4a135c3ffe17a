"""The snapshots' diff in the API (issue 33, point 3): added, removed, moved and re-scored
entries between two snapshots, either order, an ETag of both, 400 and 404 as documented; and
the entry's `rank_history`."""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from submissions.intervals import compute_rank_intervals
from submissions.models import BoardSnapshot
from submissions.services import import_published_result
from tests.submissions.snapshot_data import NEWER, OLDER, sealed_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def diff(slug="medvidbench", **params):
    return Client().get(reverse("api:snapshot-diff", args=[slug]), params)


def test_the_diff_of_two_snapshots_older_to_newer_in_either_order(medvidbench):
    older = sealed_snapshot(medvidbench, OLDER, days_ago=2)
    newer = sealed_snapshot(medvidbench, NEWER, days_ago=1)

    response = diff(**{"from": newer.pk, "to": older.pk})

    assert response.status_code == 200
    body = response.json()
    assert (body["older"]["id"], body["newer"]["id"]) == (older.pk, newer.pk)
    assert body["older"]["url"].endswith(f"/b/medvidbench/history/{older.pk}/")
    assert body["counts"] == {
        "added": 1,
        "removed": 1,
        "changed": 2,
        "moved_rank": 2,
        "moved_board": 1,
        "changed_values": 1,
        "rescored": 1,
        "unchanged": 0,
    }
    assert body["added"] == [
        {
            "submission_id": 105,
            "model": "Epsilon",
            "board": "community",
            "rank": 3,
            "position": 1,
            "overall": 3,
        }
    ]
    assert [entry["model"] for entry in body["removed"]] == ["Gamma"]
    beta, alpha = body["changed"]
    assert beta["board"] == {"old": "community", "new": "official"}
    assert beta["rank"] == {"old": 2, "new": 1}
    assert beta["values"] == {}
    assert alpha["values"] == {"CVS_acc": {"old": 0.7, "new": 0.65}}
    assert alpha["testset_version"] == {"old": 1, "new": 2}
    assert alpha["scorer_version"] == {"old": "s1", "new": "s2"}
    assert (alpha["rescored"], alpha["moved_board"]) == (True, False)


def test_the_answer_never_changes_so_it_is_cached_by_both_snapshots(medvidbench):
    older = sealed_snapshot(medvidbench, OLDER, days_ago=2)
    newer = sealed_snapshot(medvidbench, NEWER, days_ago=1)

    first = diff(**{"from": older.pk, "to": newer.pk})
    again = Client().get(
        reverse("api:snapshot-diff", args=["medvidbench"]),
        {"from": older.pk, "to": newer.pk},
        HTTP_IF_NONE_MATCH=first["ETag"],
    )

    assert "max-age=31536000" in first["Cache-Control"]
    assert again.status_code == 304


@pytest.mark.parametrize(
    ("params", "status"),
    [({}, 400), ({"from": "x", "to": "1"}, 400), ({"from": "999999", "to": "999998"}, 404)],
)
def test_bad_and_unknown_ids(medvidbench, params, status):
    sealed_snapshot(medvidbench, OLDER)

    response = diff(**params)

    assert response.status_code == status
    body = response.json()
    expected = {
        400: {"code": "invalid", "named": ["from", "to"] if not params else ["from"]},
        404: {"code": "not_found", "named": []},
    }[status]
    assert body["code"] == expected["code"]
    assert list(body.get("errors", {})) == expected["named"]


def test_a_snapshot_of_another_benchmark_is_404(medvidbench, benchmark):
    mine = sealed_snapshot(medvidbench, OLDER)
    theirs = sealed_snapshot(benchmark, NEWER)

    response = diff(**{"from": mine.pk, "to": theirs.pk})

    assert response.status_code == 404
    assert response.json()["detail"] == f"{medvidbench.name} has no snapshot {theirs.pk}."


def test_the_entry_api_has_its_rank_history(medvidbench, django_capture_on_commit_callbacks):
    def imported(name, value):
        with django_capture_on_commit_callbacks(execute=True):
            entry = import_published_result(
                medvidbench, model_name=name, values={"CVS_acc": value}, verified_at=timezone.now()
            )
        compute_rank_intervals(medvidbench)
        return entry

    gpt = imported("GPT-4o", 0.6)
    imported("Claude", 0.7)
    snapshots = list(BoardSnapshot.objects.filter(sealed_at__isnull=False).order_by("pk"))

    body = Client().get(reverse("api:entry", args=["medvidbench", gpt.pk])).json()

    assert [
        (point["snapshot"], point["board"], point["rank"]) for point in body["rank_history"]
    ] == [(snapshots[0].pk, "official", 1), (snapshots[1].pk, "official", 2)]
    assert body["rank_history"][0]["taken_at"].startswith(snapshots[0].taken_at.date().isoformat())
