"""Board snapshots (issue 33, docs/boards.md "Snapshots"): every change of the Official board
asks for one in its own transaction, whichever path made it; the build that includes it
writes it once its rank intervals are in; a written snapshot never changes (the database
refuses); the Community board is snapshotted at most daily."""

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from django.db import DatabaseError, transaction
from django.utils import timezone

from submissions.board_refresh import refresh_board, schedule_board_refresh
from submissions.board_state import board_built
from submissions.enums import SnapshotReason, VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardSnapshot
from submissions.services import import_published_result, set_verification_status
from submissions.snapshots import (
    DAILY,
    SnapshotRequest,
    request_snapshot,
    seal_snapshots,
    snapshot_csv,
    snapshot_rows,
)
from tests.accounts.factories import maintainer_user
from tests.submissions import intervals_data
from tests.submissions.factories import scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def sealed(benchmark):
    return list(
        BoardSnapshot.objects.filter(benchmark=benchmark, sealed_at__isnull=False).order_by("pk")
    )


def imported(benchmark, name, value, capture):
    with capture(execute=True):
        submission = import_published_result(
            benchmark,
            model_name=name,
            values={"CVS_acc": value},
            verified_at=datetime(2026, 5, 15, tzinfo=UTC),
        )
    compute_rank_intervals(benchmark)
    return submission


def test_an_import_takes_a_snapshot_whose_csv_its_sha256_names(
    medvidbench, django_capture_on_commit_callbacks
):
    imported(medvidbench, "GPT-4o", 0.6, django_capture_on_commit_callbacks)

    [snapshot] = sealed(medvidbench)
    assert snapshot.reason == SnapshotReason.IMPORTED
    assert snapshot.description == "'GPT-4o' verified"
    assert snapshot.entries == 1
    body = snapshot_csv(snapshot)
    assert hashlib.sha256(body).hexdigest() == snapshot.sha256
    header, row = body.decode().splitlines()
    assert header.startswith("rank,model,team,")
    assert header.endswith(",testset_version,scorer_version")
    assert row.startswith("1,GPT-4o,")
    [stored] = snapshot_rows(snapshot)
    assert (stored["model"], stored["board"], stored["metrics"]["CVS_acc"]["value"]) == (
        "GPT-4o",
        "official",
        0.6,
    )


def test_a_snapshot_is_byte_identical_after_later_changes_and_the_database_refuses_a_change(
    medvidbench, django_capture_on_commit_callbacks
):
    first = imported(medvidbench, "GPT-4o", 0.6, django_capture_on_commit_callbacks)
    [snapshot] = sealed(medvidbench)
    body = snapshot_csv(snapshot)

    imported(medvidbench, "Claude", 0.7, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        set_verification_status(
            first, VerificationStatus.WITHDRAWN, actor=maintainer_user(), reason="a test"
        )
    compute_rank_intervals(medvidbench)

    snapshots = sealed(medvidbench)
    assert [s.reason for s in snapshots] == ["imported", "imported", "withdrawn"]
    assert [s.entries for s in snapshots] == [1, 2, 2]
    snapshot.refresh_from_db()
    assert snapshot_csv(snapshot) == body
    assert snapshots[2].description == "'GPT-4o' withdrawn (was verified)"
    last = snapshot_rows(snapshots[2])
    assert [(row["model"], row["board"]) for row in last] == [
        ("Claude", "official"),
        ("GPT-4o", "community"),
    ]
    with pytest.raises(DatabaseError, match="never changes"), transaction.atomic():
        BoardSnapshot.objects.filter(pk=snapshot.pk).update(note="edited")
    snapshot.csv = b"forged"
    with pytest.raises(DatabaseError, match="never changes"), transaction.atomic():
        snapshot.save()


def test_requests_one_build_includes_become_one_snapshot(
    medvidbench, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # no refresh between the two
        import_published_result(
            medvidbench, model_name="A", values={"CVS_acc": 0.5}, verified_at=timezone.now()
        )
        import_published_result(
            medvidbench, model_name="B", values={"CVS_acc": 0.4}, verified_at=timezone.now()
        )
    refresh_board(medvidbench.pk)
    compute_rank_intervals(medvidbench)

    [snapshot] = sealed(medvidbench)
    assert snapshot.description == "'A' verified; 'B' verified"
    assert snapshot.entries == 2
    assert not BoardSnapshot.objects.filter(sealed_at__isnull=True).exists()


@pytest.fixture
def community_entry(medvidbench, django_capture_on_commit_callbacks):
    """A function: a new published Community entry, its board rebuilt with its intervals."""

    def add(name):
        scored_entry(medvidbench, name, {"CVS_acc": 0.5})
        with django_capture_on_commit_callbacks(execute=True):
            schedule_board_refresh(medvidbench.pk)  # what scoring it does
        compute_rank_intervals(medvidbench)

    return add


def test_the_community_board_is_snapshotted_at_most_daily(medvidbench, community_entry):
    community_entry("First")
    assert [s.reason for s in sealed(medvidbench)] == ["daily"]

    community_entry("Second")
    assert len(sealed(medvidbench)) == 1  # the same day: none

    later = timezone.now() + DAILY + timedelta(minutes=1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(timezone, "now", lambda: later)
        community_entry("Third")
    snapshots = sealed(medvidbench)
    assert [s.reason for s in snapshots] == ["daily", "daily"]
    assert [s.entries for s in snapshots] == [1, 3]


def test_a_request_waits_for_the_build_that_includes_it(medvidbench):
    request = request_snapshot(medvidbench.pk, 5, SnapshotRequest(SnapshotReason.MAINTAINER))

    assert seal_snapshots(medvidbench, 4) is None or request.pk not in [
        s.pk for s in sealed(medvidbench)
    ]
    request.refresh_from_db()
    assert request.sealed_at is None
    assert seal_snapshots(medvidbench, 5).pk == request.pk
    assert board_built(medvidbench.pk) == 0


@pytest.mark.django_db(transaction=True)
def test_a_maintainer_takes_a_snapshot_with_a_note_from_the_command(medvidbench):
    """Run as a maintainer runs it: outside any transaction, so the board's rebuild follows
    the request's commit at once, and `--wait` writes the rank intervals and the snapshot."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="Say why"):
        call_command("snapshot_board", "--benchmark", "medvidbench", "--note", "  ")
    assert not BoardSnapshot.objects.exists()

    scored_entry(medvidbench, "A", {"CVS_acc": 0.5})
    out = StringIO()
    call_command(
        "snapshot_board", "--benchmark", "medvidbench", "--note", "Before the deadline",
        "--wait", stdout=out,
    )  # fmt: skip

    [snapshot] = sealed(medvidbench)
    assert (snapshot.reason, snapshot.note) == ("maintainer", "Before the deadline")
    assert f"Snapshot {snapshot.pk} of MedVidBench" in out.getvalue()
    from core.models import AuditEvent

    assert AuditEvent.objects.filter(action="submissions.snapshot.requested").count() == 1


def test_the_console_takes_a_snapshot_for_a_maintainer_only(
    medvidbench, django_capture_on_commit_callbacks
):
    from django.test import Client
    from django.urls import reverse

    from tests.accounts.factories import UserFactory

    url = reverse("admin:submissions_boardsnapshot_take")
    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    assert staff.post(url, {"benchmark": medvidbench.pk, "note": "x"}).status_code == 403

    client = Client()
    client.force_login(maintainer_user())
    refused = client.post(url, {"benchmark": medvidbench.pk, "note": ""})
    assert refused.status_code == 200
    assert "This field is required." in refused.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"benchmark": medvidbench.pk, "note": "For the paper"})
    assert response.status_code == 302
    [snapshot] = sealed(medvidbench)  # an empty board: no rank intervals to wait for
    assert snapshot.note == "For the paper"
    listing = client.get(reverse("admin:submissions_boardsnapshot_changelist"))
    assert "Take a snapshot" in listing.content.decode()
    assert snapshot.sha256[:16] in listing.content.decode()


def test_the_reaper_queues_the_intervals_again_for_a_snapshot_never_written(
    medvidbench, django_capture_on_commit_callbacks, monkeypatch
):
    from submissions import board_refresh

    queued = []
    monkeypatch.setattr(
        board_refresh, "enqueue_rank_intervals", lambda pk, force: queued.append((pk, force))
    )
    scored_entry(medvidbench, "A", {"CVS_acc": 0.5})
    with django_capture_on_commit_callbacks(execute=True):
        request = take_snapshot_request(medvidbench)
    assert BoardSnapshot.objects.get(pk=request).sealed_at is None  # its intervals were lost

    assert board_refresh.reap_stale_boards() == 0
    assert queued == []  # too young
    later = timezone.now() + timedelta(minutes=10)
    monkeypatch.setattr(timezone, "now", lambda: later)
    board_refresh.reap_stale_boards()
    assert queued == [(medvidbench.pk, True)]
    compute_rank_intervals(medvidbench, force=True)  # what the queued task does
    assert BoardSnapshot.objects.get(pk=request).sealed_at is not None


def take_snapshot_request(benchmark):
    from submissions.maintenance import take_snapshot

    take_snapshot(benchmark, actor=None, note="a test")
    return BoardSnapshot.objects.get(sealed_at__isnull=True).pk


interval_benchmark = intervals_data.interval_benchmark
interval_entry = intervals_data.scored_entry


def test_the_snapshot_built_before_the_lock_is_the_board_its_intervals_made(
    interval_benchmark, interval_entry, monkeypatch
):
    """The content is read and encoded before the lock, with the rank intervals and tiers
    about to be written laid over the rows (`prepare_snapshot`); under the lock it is only
    stored. It is byte for byte what the board holds once they are written."""
    from submissions import snapshots

    interval_entry("Noisy Model", kind="noisy", seed=2)
    interval_entry("Perfect Model", kind="perfect", seed=1)
    built_in_lock = []
    real = snapshots.snapshot_content
    monkeypatch.setattr(
        snapshots,
        "snapshot_content",
        lambda benchmark, overlay=None: (
            built_in_lock.append(overlay is None) or real(benchmark, overlay)
        ),
    )

    compute_rank_intervals(interval_benchmark)

    [snapshot] = sealed(interval_benchmark)
    assert built_in_lock == [False]  # once, before the lock, with the overlay
    rows = snapshot_rows(snapshot)
    assert all(row["rank_interval"] for row in rows)
    assert snapshot_csv(snapshot) == real(interval_benchmark).csv  # the board as written
