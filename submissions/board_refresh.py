"""How a change that moves a board gets it rebuilt (docs/boards.md, "Changes and builds"):
`schedule_board_refresh` counts the change in its transaction and recomputes the board once it
commits, a refresh whose change a later recompute built does nothing, and `reap_stale_boards`
rebuilds a board whose refresh was lost."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from benchmark.models import Benchmark

from .board_state import board_changes, board_is_behind
from .boards import (
    board_built,
    database_datetime,
    rebuild_board,
    recompute_board,
)
from .intervals import enqueue_rank_intervals
from .models import BoardChanges, BoardSnapshot
from .snapshots import SnapshotRequest, pending_snapshot_benchmarks, request_snapshot

logger = logging.getLogger(__name__)


def schedule_board_refresh(benchmark_id: int, snapshot: SnapshotRequest | None = None) -> None:
    """Count a change of the benchmark's board inputs in the current transaction and
    recompute the board when it commits (at once outside a transaction). A change of the
    Official board passes its `snapshot` (issue 33): the request commits with the change, and
    the build that includes it writes the snapshot (`snapshots.seal_snapshots`).

    Synchronous, in the committing process (the web server for a verification, the worker
    after scoring): the board is right as soon as the change is visible, and tests and the
    demo need no worker for it. The count (`BoardChanges`) commits with the change, so a
    refresh lost with its process is found by the board reaper (`reap_stale_boards`); and a
    refresh finds its change built already when a recompute that committed after it ran
    meanwhile (several changes in one transaction, a burst of scorings), and does nothing
    (docs/boards.md, "Changes and builds").
    """
    changes = count_board_change(benchmark_id)
    if snapshot is not None:
        request_snapshot(benchmark_id, changes, snapshot)
    transaction.on_commit(partial(refresh_board, benchmark_id, changes))


def count_board_change(benchmark_id: int) -> int:
    """Add one to the benchmark's `BoardChanges` (created at the first change) and return the
    new count: the one writer of `BoardChanges`, one statement (an upsert, on PostgreSQL and
    SQLite alike), whose row lock is held until the change commits."""
    table = connection.ops.quote_name(BoardChanges._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (benchmark_id, total, changed_at) VALUES (%s, 1, %s) "
            f"ON CONFLICT (benchmark_id) DO UPDATE SET total = {table}.total + 1, "
            "changed_at = excluded.changed_at RETURNING total",
            [benchmark_id, database_datetime(timezone.now())],
        )
        return cursor.fetchone()[0]


def refresh_board(benchmark_id: int, changes: int | None = None) -> None:
    """Recompute a board now, unless it already includes `changes` changes (None: whatever it
    includes); if that fails, log it and queue `task_recompute_board` so the worker retries.
    The change that asked for it has committed already and must not fail because derived
    data could not be rebuilt."""
    if changes is not None and board_built(benchmark_id) >= changes:
        return  # built meanwhile: no lock taken, nothing read
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return
    try:
        recompute_board(benchmark, unless_built=changes)
    except Exception:
        logger.exception(
            "recomputing the board of benchmark %s failed; queued a retry", benchmark_id
        )
        enqueue_board_recompute(benchmark_id, changes)


def bring_board_up_to_date(benchmark_id: int) -> None:
    """Recompute the board now if a committed change is not in it yet: for whoever is about to
    tell someone a rank (the "Results complete" notice), so it is the rank the board shows
    after the change that completed the run, whichever of the commit's callbacks runs first.
    The refresh that follows the change then finds it built and does nothing."""
    if board_is_behind(benchmark_id):
        refresh_board(benchmark_id, board_changes(benchmark_id))


def enqueue_board_recompute(benchmark_id: int, changes: int | None = None) -> None:
    # Imported here for the same reason as in enqueue_scoring.
    from django_q.tasks import async_task

    async_task(
        "submissions.tasks.task_recompute_board",
        benchmark_id,
        changes,
        q_options={"group": "boards"},
    )


def board_stale_after() -> timedelta:
    return timedelta(seconds=settings.PODIUM_BOARD_STALE_SECONDS)


def reap_stale_boards() -> int:
    """Rebuild the boards that do not include every change of their inputs although their
    last change, or their last build, is older than PODIUM_BOARD_STALE_SECONDS: the refresh
    that was to follow a change died with its process (between the change's commit and the
    recompute) or failed and its retry was lost. The build's age covers a board whose
    changes keep coming (its last change always young) while their refreshes are lost. Every
    worker process runs this every PODIUM_WORKER_REAP_SECONDS (`core.workers`): one query
    over a row per benchmark when nothing is stale. A board another process is recomputing
    is left to it (its lock is skipped), and looked at again next round; the recompute does
    nothing if a refresh built the board meanwhile. Returns how many boards it rebuilt."""
    cutoff = timezone.now() - board_stale_after()
    stale = (
        BoardChanges.objects.annotate(
            built=Coalesce("benchmark__board_build__changes", Value(0)),
            built_at=F("benchmark__board_build__built_at"),
        )
        .filter(total__gt=F("built"))
        .filter(Q(changed_at__lt=cutoff) | Q(built_at__isnull=True) | Q(built_at__lt=cutoff))
        .select_related("benchmark")
    )
    _reap_unwritten_snapshots(cutoff)
    rebuilt = 0
    for found in stale:
        if rebuild_board(found.benchmark, unless_built=found.total, wait=False):
            rebuilt += 1
            # A warning only when the refresh was surely lost: its change is older than the
            # cutoff. A young change on a board not built lately (or never) may have had its
            # refresh under way, waiting for the lock (on SQLite, for the database's one write
            # lock, behind the worker's writes: a busy first run showed that warning).
            lost = found.changed_at < cutoff
            logger.log(
                logging.WARNING if lost else logging.INFO,
                "the board of benchmark %s was %s change(s) behind; rebuilt it (%s)",
                found.benchmark_id,
                found.total - found.built,
                "a refresh was lost"
                if lost
                else "its last change is recent: its refresh may have been under way",
            )
    return rebuilt


def _reap_unwritten_snapshots(cutoff: datetime) -> None:
    """Queue the rank intervals again, forced, for each benchmark with a snapshot asked for
    before `cutoff`, included in its board's build, and still not written (issue 33): the
    intervals task that was to write it was lost. A snapshot whose build is behind waits for
    the rebuild the loop above makes."""
    for benchmark_id in pending_snapshot_benchmarks(cutoff):
        if BoardSnapshot.objects.filter(
            benchmark_id=benchmark_id,
            sealed_at__isnull=True,
            taken_at__lt=cutoff,
            changes__lte=board_built(benchmark_id),
        ).exists():
            logger.warning(
                "a snapshot of benchmark %s was never written; queued its rank intervals again",
                benchmark_id,
            )
            enqueue_rank_intervals(benchmark_id, force=True)
