"""The snapshots' API and the rankings' `?as_of=` (issue 33's contract): the list, the CSV
whose sha256 is listed, bodies that never change, and "as of" equal to the live board at
that moment over random sequences of changes."""

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from submissions.board_refresh import schedule_board_refresh
from submissions.enums import VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.maintenance import update_entry_details
from submissions.models import BoardSnapshot, Submission
from submissions.services import import_published_result, set_verification_status
from tests.accounts.factories import maintainer_user
from tests.submissions.factories import scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

BOARDS = ("official", "community", "all")


@pytest.fixture
def change(medvidbench, django_capture_on_commit_callbacks):
    """A function: run a change as its writer runs it, then what follows its commit (the
    board's refresh) and the rank intervals, as the worker would."""

    def run(action, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            result = action(*args, **kwargs)
        compute_rank_intervals(medvidbench)
        return result

    return run


def imported(benchmark, name, value):
    return import_published_result(
        benchmark, model_name=name, values={"CVS_acc": value}, verified_at=timezone.now()
    )


def community(benchmark, name, value):
    scored_entry(benchmark, name, {"CVS_acc": value, "NAP_acc": value / 2})
    schedule_board_refresh(benchmark.pk)  # what scoring it does


def listed(slug="medvidbench"):
    response = Client().get(reverse("api:snapshots", args=[slug]))
    assert response.status_code == 200
    return response.json()


def rankings(slug, **params):
    return Client().get(reverse("api:rankings", args=[slug]), params)


def test_the_list_is_newest_first_and_each_csv_is_what_its_sha256_names(medvidbench, change):
    change(imported, medvidbench, "GPT-4o", 0.6)
    change(imported, medvidbench, "Claude", 0.7)

    snapshots = listed()

    assert [item["entries"] for item in snapshots] == [2, 1]
    assert snapshots[0]["taken_at"] >= snapshots[1]["taken_at"]
    first = snapshots[0]
    assert set(first) >= {"id", "taken_at", "reason", "sha256", "entries", "url"}
    assert first["reason"] == "imported"
    assert first["url"].endswith(f"/b/medvidbench/history/{first['id']}/")
    for item in snapshots:
        body = Client().get(item["csv"])
        assert body.status_code == 200
        assert body["Content-Type"] == "text/csv; charset=utf-8"
        assert hashlib.sha256(body.content).hexdigest() == item["sha256"]
        assert "immutable" in body["Cache-Control"]
        as_json = Client().get(item["json"]).json()
        assert (as_json["id"], as_json["sha256"]) == (item["id"], item["sha256"])
        assert len(as_json["rows"]) == item["entries"]


def test_the_bodies_never_change_after_later_changes(medvidbench, change):
    first = change(imported, medvidbench, "GPT-4o", 0.6)
    [item] = listed()
    csv_before = Client().get(item["csv"]).content
    json_before = Client().get(item["json"]).content

    change(imported, medvidbench, "Claude", 0.7)
    change(
        set_verification_status,
        first,
        VerificationStatus.WITHDRAWN,
        actor=maintainer_user(),
        reason="a test",
    )
    change(update_entry_details, first, actor=maintainer_user(), institution="Elsewhere")

    assert Client().get(item["csv"]).content == csv_before
    assert Client().get(item["json"]).content == json_before
    assert len(listed()) == 3  # the details of a Community row ask for none


def test_as_of_before_the_first_snapshot_is_404_naming_its_date(medvidbench, change):
    change(imported, medvidbench, "GPT-4o", 0.6)
    first = BoardSnapshot.objects.get()
    day = first.taken_at.date()

    response = rankings("medvidbench", as_of=(day - timedelta(days=1)).isoformat())

    assert response.status_code == 404
    assert day.isoformat() in response.json()["detail"]
    assert "the first was taken" in response.json()["detail"]
    # A date is its whole day: the day of the first snapshot finds it.
    assert rankings("medvidbench", as_of=day.isoformat()).status_code == 200
    bad = rankings("medvidbench", as_of="15/08/2026")
    assert bad.status_code == 400
    assert "ISO 8601" in json.dumps(bad.json())


def test_as_of_names_the_snapshot_and_takes_every_parameter(medvidbench, change):
    change(imported, medvidbench, "GPT-4o", 0.6)
    change(imported, medvidbench, "Claude", 0.7)
    change(community, medvidbench, "Community model", 0.9)
    moment = timezone.now()
    change(imported, medvidbench, "Later", 0.1)

    page = rankings(
        "medvidbench", as_of=moment.isoformat(), board="official", sort="model", page_size=1
    ).json()

    assert page["as_of"]["sha256"]
    assert page["count"] == 2
    assert [row["model"] for row in page["results"]] == ["Claude"]
    assert "as_of=" in page["next"]
    searched = rankings("medvidbench", as_of=moment.isoformat(), board="all", q="gpt").json()
    assert [row["model"] for row in searched["results"]] == ["GPT-4o"]


def differences(then, live):
    """Where the two states' Official rows differ: (row, field, as of, live)."""
    return [
        (index, key, old.get(key), new.get(key))
        for index, (old, new) in enumerate(zip(then["official"], live["official"], strict=False))
        for key in new
        if old.get(key) != new.get(key)
    ] or (len(then["official"]), len(live["official"]))


def live_state(slug):
    """What the live rankings say now: each board's rows (JSON, every row) and the CSV."""
    state = {}
    for board in BOARDS:
        body = Client().get(reverse("api:rankings-json", args=[slug]), {"board": board}).json()
        state[board] = body["results"]
        state[f"{board}.csv"] = (
            Client().get(reverse("api:rankings-csv", args=[slug]), {"board": board}).content
        )
    return state


def as_of_state(slug, moment):
    state = {}
    for board in BOARDS:
        params = {"board": board, "as_of": moment.isoformat()}
        body = Client().get(reverse("api:rankings-json", args=[slug]), params).json()
        state[board] = body["results"]
        state[f"{board}.csv"] = (
            Client().get(reverse("api:rankings-csv", args=[slug]), params).content
        )
    return state


@pytest.mark.parametrize("seed", range(4))
def test_as_of_equals_the_live_board_at_that_moment_over_random_changes(medvidbench, change, seed):
    """After each change of a random sequence (imports, verifications moved back and forth,
    corrections, Community entries), the live board is recorded; at the end, "as of" each
    of those moments gives the Official board as it was, and both boards as they were at
    every moment a snapshot was taken."""
    rng = random.Random(seed)
    maintainer = maintainer_user()
    recorded = []
    for step in range(8):
        official = list(
            Submission.objects.filter(
                benchmark=medvidbench, verification_status=VerificationStatus.VERIFIED
            )
        )
        action = rng.choice(
            ["import", "community", "withdraw", "edit"] if official else ["import", "community"]
        )
        if action == "import":
            change(imported, medvidbench, f"Imported {step}", round(rng.random(), 3))
        elif action == "community":
            change(community, medvidbench, f"Community {step}", round(rng.random(), 3))
        elif action == "withdraw":
            change(
                set_verification_status,
                rng.choice(official),
                VerificationStatus.WITHDRAWN,
                actor=maintainer,
                reason="re-checked",
            )
        else:
            change(
                update_entry_details,
                rng.choice(official),
                actor=maintainer,
                institution=f"Institute {step}",
            )
        taken = BoardSnapshot.objects.filter(sealed_at__isnull=False).count()
        recorded.append((timezone.now(), live_state("medvidbench"), taken))

    snapshots = BoardSnapshot.objects.filter(sealed_at__isnull=False).count()
    assert snapshots >= 1
    for index, (moment, live, taken) in enumerate(recorded):
        then = as_of_state("medvidbench", moment)
        assert then["official"] == live["official"], (index, differences(then, live))
        assert then["official.csv"] == live["official.csv"], index
        previous = recorded[index - 1][2] if index else 0
        if taken > previous:  # a snapshot was taken at this step: both boards are as they were
            assert then["all"] == live["all"], index
            assert then["community.csv"] == live["community.csv"], index


def test_a_hidden_benchmarks_snapshots_are_404(medvidbench, change):
    change(imported, medvidbench, "GPT-4o", 0.6)
    medvidbench.is_public = False
    medvidbench.save(update_fields=["is_public"])
    snapshot = BoardSnapshot.objects.get()

    assert Client().get(reverse("api:snapshots", args=["medvidbench"])).status_code == 404
    assert (
        Client().get(reverse("api:snapshot-csv", args=["medvidbench", snapshot.pk])).status_code
        == 404
    )
    assert rankings("medvidbench", as_of="2030-01-01").status_code == 404


def test_an_unknown_snapshot_is_404_in_json(medvidbench):
    response = Client().get(reverse("api:snapshot-csv", args=["medvidbench", 999]))

    assert response.status_code == 404
    assert response.json()["detail"] == "MedVidBench has no snapshot 999."


def test_a_date_as_of_is_the_end_of_that_day_in_utc():
    from submissions.snapshot_board import parse_as_of

    assert parse_as_of("2026-08-15") == datetime(2026, 8, 15, 23, 59, 59, 999999, tzinfo=UTC)
    assert parse_as_of("2026-08-15T12:00:00Z") == datetime(2026, 8, 15, 12, tzinfo=UTC)
    assert parse_as_of("2026-08-15T12:00:00") == datetime(2026, 8, 15, 12, tzinfo=UTC)
    with pytest.raises(ValueError, match="ISO 8601"):
        parse_as_of("yesterday")
    with pytest.raises(ValueError, match="not a date"):
        parse_as_of("2026-02-30")
