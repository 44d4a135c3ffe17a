"""The one lock order of a benchmark's board tables (docs/boards.md, "Locks").

Every transaction that writes a benchmark's board tables (its placements, totals, build,
orders, ratings, rows' JSON) takes the benchmark's row lock first, and only then touches them.
A recompute holds it FOR UPDATE from its start; a writer of what a recompute derives holds it
FOR NO KEY UPDATE, which waits for a recompute under way and for no one else's insert.

Without it two orders met: the board orders' writer locked the build, then inserted orders,
whose foreign key waits for the benchmark's row (FOR KEY SHARE, which a recompute's FOR UPDATE
holds off), while the recompute, holding the benchmark, waited for the build to record its
own: PostgreSQL's "deadlock detected", one of them failed (seen in CI)."""

from __future__ import annotations

from benchmark.models import Benchmark


def hold_board(benchmark_id: int) -> bool:
    """The benchmark's row locked until the transaction ends (FOR NO KEY UPDATE): the first
    statement of a transaction that writes what a recompute derives. False if the benchmark
    is gone."""
    return Benchmark.objects.select_for_update(no_key=True).filter(pk=benchmark_id).exists()
