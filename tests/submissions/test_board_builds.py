"""Changes and builds (docs/boards.md): every change of a board's inputs is counted with its
transaction, a recompute records the changes its rows include, a refresh finds its change built
already when a later recompute did it, and the reaper rebuilds a board whose refresh was lost."""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from benchmark.services import ensure_plugin_benchmark, update_metric
from submissions import board_orders, board_refresh, boards, services, tasks
from submissions.enums import BoardKind, VerificationStatus
from submissions.models import BoardBuild, BoardChanges, BoardEntry
from tests.verifying.factories import rerun_report

from .factories import scored_entry
from .test_boards import values

pytestmark = [pytest.mark.integration]


@pytest.fixture
def medvidbench_definition(db):
    """MedVidBench with its metrics and policy, no test set."""
    return ensure_plugin_benchmark("medvidbench")


@pytest.fixture
def rebuilds(monkeypatch):
    """The benchmarks whose rows were rewritten, one item per rewrite."""
    done = []
    rewrite = boards.writer._rewrite_board

    def counted(benchmark):
        done.append(benchmark.pk)
        rewrite(benchmark)

    monkeypatch.setattr(boards.writer, "_rewrite_board", counted)
    return done


def verify(submission):
    rerun_report(submission)
    services.set_verification_status(submission, VerificationStatus.VERIFIED, actor=None)


def aged(benchmark, seconds):
    """The benchmark's last change moved `seconds` into the past."""
    BoardChanges.objects.filter(benchmark=benchmark).update(
        changed_at=timezone.now() - timedelta(seconds=seconds)
    )


def reaper_log(caplog):
    return [
        (record.levelname, record.getMessage())
        for record in caplog.records
        if record.name == board_refresh.logger.name
    ]


def official_names(benchmark):
    return list(
        BoardEntry.objects.filter(benchmark=benchmark, board=BoardKind.OFFICIAL).values_list(
            "submission__model_name", flat=True
        )
    )


@pytest.mark.django_db
def test_a_change_is_counted_with_its_transaction_and_a_rolled_back_one_is_not(
    medvidbench_definition, django_capture_on_commit_callbacks
):
    benchmark = medvidbench_definition
    entry = scored_entry(benchmark, "A", values(), verification_status=VerificationStatus.VERIFYING)
    assert (boards.board_changes(benchmark.pk), boards.board_built(benchmark.pk)) == (0, 0)

    with django_capture_on_commit_callbacks(execute=True):
        verify(entry)
    assert (boards.board_changes(benchmark.pk), boards.board_built(benchmark.pk)) == (1, 1)

    seen_inside = []

    def change_then_fail():
        with transaction.atomic():
            update_metric(benchmark.metrics.get(key="CVS_acc"), actor=None, label="CVS accuracy")
            seen_inside.append(boards.board_changes(benchmark.pk))
            raise RuntimeError("undone")

    with pytest.raises(RuntimeError, match="undone"):
        change_then_fail()
    assert seen_inside == [2]  # its own transaction saw it
    assert (boards.board_changes(benchmark.pk), boards.board_built(benchmark.pk)) == (1, 1)


@pytest.mark.django_db
def test_several_changes_in_one_transaction_rebuild_the_board_once(
    medvidbench_definition, django_capture_on_commit_callbacks, rebuilds
):
    """An import walks its run through four states, each a change: the first refresh after the
    commit builds them all, the other three find them built."""
    benchmark = medvidbench_definition
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.import_published_result(
            benchmark,
            model_name="Imported",
            values=values(),
            verified_at=timezone.now(),
        )

    refreshes = [c for c in callbacks if getattr(c, "func", None) is board_refresh.refresh_board]
    changes = boards.board_changes(benchmark.pk)
    assert len(refreshes) == changes >= 2
    assert rebuilds == [benchmark.pk]
    assert boards.board_built(benchmark.pk) == changes
    assert official_names(benchmark) == ["Imported"]


@pytest.mark.django_db
def test_a_refresh_or_task_for_a_change_already_built_does_nothing(
    medvidbench_definition, django_capture_on_commit_callbacks, rebuilds
):
    benchmark = medvidbench_definition
    entry = scored_entry(benchmark, "A", values(), verification_status=VerificationStatus.VERIFYING)
    with django_capture_on_commit_callbacks(execute=True):
        verify(entry)
    assert rebuilds == [benchmark.pk]

    board_refresh.refresh_board(benchmark.pk, 1)
    assert tasks.task_recompute_board(benchmark.pk, 1) == 1  # the rows it has
    assert boards.rebuild_board(benchmark, unless_built=1) is False
    assert rebuilds == [benchmark.pk]

    board_refresh.refresh_board(benchmark.pk, 2)  # a change this board does not include yet
    board_refresh.refresh_board(benchmark.pk)  # no change named: always rebuilt
    assert boards.rebuild_board(benchmark) is True
    assert rebuilds == [benchmark.pk] * 4
    assert boards.board_built(benchmark.pk) == 1  # what it read, not what it was asked


@pytest.mark.django_db
def test_the_reaper_rebuilds_a_board_whose_refresh_was_lost(
    medvidbench_definition, django_capture_on_commit_callbacks, rebuilds, caplog
):
    """The change commits, but its process dies before the refresh (here: the commit's
    callbacks are dropped). The reaper leaves it while it is younger than
    PODIUM_BOARD_STALE_SECONDS (a refresh may be under way), then rebuilds it, once."""
    benchmark = medvidbench_definition
    entry = scored_entry(benchmark, "A", values(), verification_status=VerificationStatus.VERIFYING)
    services.recompute_board(benchmark)
    with django_capture_on_commit_callbacks(execute=False):
        verify(entry)
    assert official_names(benchmark) == []
    assert (boards.board_changes(benchmark.pk), boards.board_built(benchmark.pk)) == (1, 0)

    assert board_refresh.reap_stale_boards() == 0  # too young
    aged(benchmark, 60)
    caplog.set_level(logging.INFO, logger=board_refresh.logger.name)
    assert board_refresh.reap_stale_boards() == 1
    assert official_names(benchmark) == ["A"]
    assert boards.board_built(benchmark.pk) == 1
    assert board_refresh.reap_stale_boards() == 0
    assert rebuilds == [benchmark.pk] * 2
    assert reaper_log(caplog) == [
        (
            "WARNING",
            f"the board of benchmark {benchmark.pk} was 1 change(s) behind; rebuilt it (a "
            "refresh was lost)",
        )
    ]


@pytest.mark.django_db
def test_the_reaper_rebuilds_a_board_whose_changes_keep_coming_but_never_get_built(
    medvidbench_definition, django_capture_on_commit_callbacks, caplog
):
    """Its last change is always young, but its last build grows old. Not a warning: the
    change's refresh may be under way (a busy first run on SQLite, where it waits for the
    database's write lock, showed one; issue 32, point 11)."""
    benchmark = medvidbench_definition
    first = scored_entry(benchmark, "A", values(), verification_status=VerificationStatus.VERIFYING)
    services.recompute_board(benchmark)
    with django_capture_on_commit_callbacks(execute=False):
        verify(first)
    BoardBuild.objects.filter(benchmark=benchmark).update(
        built_at=timezone.now() - timedelta(seconds=60)
    )
    assert boards.board_built(benchmark.pk) < boards.board_changes(benchmark.pk)
    caplog.set_level(logging.INFO, logger=board_refresh.logger.name)

    assert board_refresh.reap_stale_boards() == 1
    assert official_names(benchmark) == ["A"]
    assert reaper_log(caplog) == [
        (
            "INFO",
            f"the board of benchmark {benchmark.pk} was 1 change(s) behind; rebuilt it (its "
            "last change is recent: its refresh may have been under way)",
        )
    ]


@pytest.mark.django_db
def test_a_board_never_built_is_rebuilt_by_the_reaper(medvidbench_definition):
    benchmark = medvidbench_definition
    scored_entry(benchmark, "A", values())
    board_refresh.count_board_change(benchmark.pk)  # its refresh lost

    assert board_refresh.reap_stale_boards() == 1
    assert BoardEntry.objects.filter(benchmark=benchmark).count() == 1
    assert board_refresh.reap_stale_boards() == 0


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks (SQLite locks the whole database)"
)
@pytest.mark.django_db(transaction=True)
def test_the_reaper_leaves_a_board_another_transaction_is_recomputing(medvidbench_definition):
    """While another connection holds the benchmark's lock (a recompute under way), the reaper
    skips the board instead of waiting, and rebuilds it on a later round if it is still
    behind."""
    benchmark = medvidbench_definition
    entry = scored_entry(benchmark, "A", values())
    board_refresh.count_board_change(benchmark.pk)  # committed (autocommit), never refreshed
    aged(benchmark, 60)
    locked, release, failures = threading.Event(), threading.Event(), []

    def hold_the_lock():
        try:
            with transaction.atomic():
                type(benchmark).objects.select_for_update().get(pk=benchmark.pk)
                locked.set()
                release.wait(10)
        except Exception as error:  # reported by the main thread
            failures.append(error)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert locked.wait(10)
        assert board_refresh.reap_stale_boards() == 0
        assert not BoardEntry.objects.exists()
    finally:
        release.set()
        holder.join(10)
    assert failures == []

    assert board_refresh.reap_stale_boards() == 1
    assert list(BoardEntry.objects.values_list("submission", flat=True)) == [entry.pk]
    assert BoardBuild.objects.get(benchmark=benchmark).changes == 1


@pytest.mark.django_db(transaction=True)
def test_only_a_recompute_in_its_own_transaction_commits_without_waiting_for_the_disk(
    monkeypatch,
):
    """PostgreSQL's `synchronous_commit` is off for a recompute's own transaction (it writes
    derived rows alone) and for nothing else: not for a caller's transaction around it (the
    caller's writes decide) and not for the session after it."""
    if connection.vendor != "postgresql":
        pytest.skip("synchronous_commit is PostgreSQL's")
    benchmark = ensure_plugin_benchmark("medvidbench")
    seen = []
    rewrite = boards.writer._rewrite_board

    def noted(locked):
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            seen.append(cursor.fetchone()[0])
        rewrite(locked)

    monkeypatch.setattr(boards.writer, "_rewrite_board", noted)

    services.recompute_board(benchmark)
    with transaction.atomic():
        services.recompute_board(benchmark)
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        after = cursor.fetchone()[0]

    assert (seen, after) == (["off", "on"], "on")


def others_wait_for_a_lock(within: float = 10.0) -> bool:
    """Whether another connection to this database waits for a lock, looked at until
    `within` seconds have passed."""
    ends = time.monotonic() + within
    while time.monotonic() < ends:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks (SQLite locks the whole database)"
)
@pytest.mark.django_db(transaction=True)
def test_a_recompute_and_the_orders_writer_meeting_wait_in_turn(medvidbench_definition):
    """A recompute holds the benchmark's lock while the sorted orders' writer comes to store
    the orders of the build before: the writer waits for the benchmark's lock (the first lock
    of every board writer), the recompute records its build, and the writer then stores
    nothing (a newer build's orders are its writer's). Both took the build's row and the
    benchmark's in opposite orders before, and PostgreSQL failed one with "deadlock
    detected"."""
    benchmark = medvidbench_definition
    scored_entry(benchmark, "A", values())
    boards.recompute_board(benchmark)
    built = BoardBuild.objects.get(benchmark=benchmark).built_at
    recomputing, failures = threading.Event(), []

    def recompute_slowly():
        """`rebuild_board`'s transaction, which waits for the writer before it writes."""
        try:
            with transaction.atomic():
                locked = type(benchmark).objects.select_for_update().get(pk=benchmark.pk)
                recomputing.set()
                assert others_wait_for_a_lock(), "the orders' writer never came"
                boards.writer._rebuild(locked)
        except Exception as error:  # reported by the main thread
            failures.append(error)
        finally:
            connection.close()

    recompute = threading.Thread(target=recompute_slowly)
    recompute.start()
    try:
        assert recomputing.wait(10)
        written = board_orders.write_board_orders(benchmark)
    finally:
        recompute.join(30)
    assert failures == []
    assert written == 0
    assert BoardBuild.objects.get(benchmark=benchmark).built_at > built
    assert board_orders.write_board_orders(benchmark) > 0
