"""Benchmark: board snapshots (issue 33, "Numbers"): writing one at 100,000 entries, what one
adds to the build that seals it at 1,000, and an "as of" page against the live one.

    .venv/bin/python bench/snapshots.py [--entries 100000] [--seal-entries 1000]
        [--requests 9] [--seed 0] [--database-url postgres://user@host:port/name]

Works in throwaway databases as bench/board.py does (its fixture, `build_board`: MedVidBench
with `--entries` published entries, a third verified, written directly), each part in a process
and database of its own.

1. The seal at `--seal-entries` (default 1,000), in a child process: the board built with its
   rank intervals computed from stored replicates (bench/board.py's `computed`). Then, several
   times, an Official change as its writers make one (`schedule_board_refresh` with a
   `SnapshotRequest`, in a transaction; the board recomputed when it commits) and the build
   that seals it (`compute_rank_intervals`, whose last transaction writes the snapshot,
   docs/boards.md). Timed: the request in the change's transaction (`request_snapshot`, one
   INSERT), `prepare_snapshot` before the sealing transaction takes the benchmark's lock (the
   Official digest, the rows read, the CSV and JSON built), `seal_snapshots` inside it (the
   digest and due-ness checked again, the content compressed and the row written),
   and for scale the whole `compute_rank_intervals`. Also `seal_snapshots` when no snapshot is
   due (the digest every build pays). Target: the snapshot adds <= 20 ms.
2. At `--entries` (default 100,000): the board as bench/board.py's `stored` leaves it, plus
   rank intervals and tiers written directly (a bench fixture: computing them from replicates
   would take gigabytes) and the rows' API JSON (`write_board_json`, as a live board has it).
   Then a snapshot written several times (`request_snapshot` + `seal_snapshots` in a
   transaction; median), its stored size (the `csv` and `rows` columns). Targets: <= 2 s,
   <= 5 MB.
3. The pages, in that process (warm: every URL fetched once first, so the snapshot's decoded
   rows are in the process), `--requests` times each, median, through django.test.Client: the
   Official and Community board pages live and as the snapshot holds them (its permanent page,
   where `?as_of=` redirects), each with its cached table (warm) and with the cache cleared
   before each request (cold); the `?as_of=` redirect followed; and the rankings API's first
   1,000 rows of both boards live and `?as_of=`. Target: an "as of" page within 2x of the live
   one (the ratios printed).

Prints the figures, then one JSON line last.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from board import (  # bench/ is the script folder, first on sys.path
    add_replicates,
    add_stored_intervals,
    analyse,
    build_board,
    setup_django,
    throwaway_database,
    timed_gets,
)
from timing import report


def median_ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 1)


@contextmanager
def timing(module, name: str) -> Iterator[list[float]]:
    """The seconds each call of `module.name` takes while inside (wrapped where it is called)."""
    original = getattr(module, name)
    calls: list[float] = []

    def call(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            calls.append(time.perf_counter() - started)

    setattr(module, name, call)
    try:
        yield calls
    finally:
        setattr(module, name, original)


def measure_seal(args: argparse.Namespace, database_url: str | None, folder: Path) -> dict:
    """Part 1: what a snapshot adds to the build that seals it at `--seal-entries`."""
    setup_django(folder, database_url)
    from django.db import transaction

    from submissions import board_refresh
    from submissions import intervals as intervals_module
    from submissions.board_refresh import schedule_board_refresh
    from submissions.boards import board_built
    from submissions.enums import SnapshotReason
    from submissions.intervals import compute_rank_intervals
    from submissions.models import BoardSnapshot
    from submissions.services import recompute_board
    from submissions.snapshots import SnapshotRequest, seal_snapshots

    entries = args.seal_entries
    benchmark = build_board(entries, args.seed)
    add_replicates(benchmark, benchmark.bootstrap_replicates, args.seed)
    analyse()
    recompute_board(benchmark)
    compute_rank_intervals(benchmark)  # the boards' first snapshot (none before)
    requests, seals, prepares, builds, idle = [], [], [], [], []
    for number in range(args.repeats + 1):
        with timing(board_refresh, "request_snapshot") as requested, transaction.atomic():
            schedule_board_refresh(
                benchmark.pk,
                SnapshotRequest(SnapshotReason.MAINTAINER, note=f"bench {number}"),
            )
            # committed: the board recomputed (its rank intervals queued, run here)
        with (
            timing(intervals_module, "seal_snapshots") as sealed,
            timing(intervals_module, "prepare_snapshot") as prepared,
        ):
            started = time.perf_counter()
            compute_rank_intervals(benchmark)
            build = time.perf_counter() - started
        assert len(sealed) == 1
        assert not BoardSnapshot.objects.filter(sealed_at=None).exists()
        # The same build's seal once more: nothing due, the digest compared only.
        with transaction.atomic():
            started = time.perf_counter()
            assert seal_snapshots(benchmark, board_built(benchmark.pk)) is None
            nothing = time.perf_counter() - started
        if number:  # the first warms the code paths
            requests += requested
            seals += sealed
            prepares += prepared
            builds.append(build)
            idle.append(nothing)
    snapshot = BoardSnapshot.objects.filter(sealed_at__isnull=False).order_by("-pk").first()
    figures = {
        "entries": entries,
        "request_ms": median_ms(requests),
        "seal_ms": median_ms(seals),
        "prepare_ms": median_ms(prepares),
        "seal_nothing_due_ms": median_ms(idle),
        "rank_intervals_ms": median_ms(builds),
        "stored_kb": round((len(snapshot.csv) + len(snapshot.rows)) / 1000, 1),
    }
    print(
        f"{entries:,} entries, {args.repeats} Official changes (median): the request in the "
        f"change's transaction {figures['request_ms']} ms; prepare_snapshot before the lock "
        f"{figures['prepare_ms']} ms; seal_snapshots under it, in the sealing "
        f"transaction {figures['seal_ms']} ms (the build that seals it, compute_rank_intervals, "
        f"{figures['rank_intervals_ms']} ms in all); seal_snapshots with nothing due "
        f"{figures['seal_nothing_due_ms']} ms; stored {figures['stored_kb']} kB"
    )
    return figures


def fake_rank_intervals(benchmark) -> None:
    """Every row a rank interval (its rank +- 3) and a tier (50 ranks each), written directly,
    and the boards' totals saying so: the board as `compute_rank_intervals` leaves it, without
    the replicates a 100,000-entry board cannot hold here."""
    from django.db import connection
    from django.utils import timezone

    from submissions.models import BoardPlacement, BoardTotals

    table = connection.ops.quote_name(BoardPlacement._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET rank_best = GREATEST(1, rank - 3), rank_worst = rank + 3, "
            "tier = (rank - 1) / 50 + 1 WHERE benchmark_id = %s",
            [benchmark.pk],
        )
    for totals in BoardTotals.objects.filter(benchmark=benchmark):
        totals.with_rank_intervals = totals.with_tiers = totals.entries
        totals.computed_at = timezone.now()
        totals.save(update_fields=["with_rank_intervals", "with_tiers", "computed_at"])


def measure_large(args: argparse.Namespace, database_url: str | None, folder: Path) -> dict:
    """Parts 2 and 3: a snapshot of `--entries` written, stored, and its pages."""
    setup_django(folder, database_url)
    from django.core.cache import cache
    from django.db import transaction
    from django.test import Client

    from submissions import snapshots as snapshots_module
    from submissions.board_json import write_board_json
    from submissions.boards import board_built
    from submissions.enums import SnapshotReason
    from submissions.models import BoardSnapshot
    from submissions.services import recompute_board
    from submissions.snapshots import SnapshotRequest, request_snapshot, seal_snapshots

    benchmark = build_board(args.entries, args.seed)
    add_stored_intervals(benchmark)
    analyse()
    recompute_board(benchmark)
    fake_rank_intervals(benchmark)
    started = time.perf_counter()
    write_board_json(benchmark)
    print(f"rows' API JSON (write_board_json, fixture): {time.perf_counter() - started:.1f} s")
    analyse()

    writes, contents = [], []
    for number in range(args.repeats):
        with timing(snapshots_module, "snapshot_content") as content, transaction.atomic():
            started = time.perf_counter()
            request_snapshot(
                benchmark.pk,
                board_built(benchmark.pk),
                SnapshotRequest(SnapshotReason.MAINTAINER, note=f"bench {number}"),
            )
            snapshot = seal_snapshots(benchmark, board_built(benchmark.pk))
            writes.append(time.perf_counter() - started)
        contents += content
    snapshot = BoardSnapshot.objects.get(pk=snapshot.pk)
    stored = len(snapshot.csv) + len(snapshot.rows)
    raw_csv = len(snapshots_module.snapshot_csv(snapshot))
    figures: dict = {
        "entries": snapshot.entries,
        "write_s": round(statistics.median(writes), 3),
        "write_all_s": [round(seconds, 3) for seconds in writes],
        "content_s": round(statistics.median(contents), 3),
        "stored_mb": round(stored / 1e6, 2),
        "csv_mb": round(len(snapshot.csv) / 1e6, 2),
        "rows_mb": round(len(snapshot.rows) / 1e6, 2),
        "csv_raw_mb": round(raw_csv / 1e6, 2),
    }
    print(
        f"snapshot of {snapshot.entries:,} entries written in {figures['write_s']:.2f} s "
        f"(median of {args.repeats}: {figures['write_all_s']}; snapshot_content "
        f"{figures['content_s']:.2f} s), stored {figures['stored_mb']} MB (csv "
        f"{figures['csv_mb']} MB of {figures['csv_raw_mb']} MB, rows {figures['rows_mb']} MB)"
    )

    client = Client()
    slug, pk = benchmark.slug, snapshot.pk
    day = snapshot.taken_at.date().isoformat()
    pages = {
        "official": (f"/b/{slug}/", f"/b/{slug}/history/{pk}/"),
        "community": (f"/b/{slug}/community/", f"/b/{slug}/history/{pk}/community/"),
        "community_sorted": (
            f"/b/{slug}/community/?sort=STG_mIoU&dir=desc",
            f"/b/{slug}/history/{pk}/community/?sort=STG_mIoU&dir=desc",
        ),
    }
    for live, past in pages.values():
        client.get(live)
        client.get(past)
    requests = args.requests
    for name, (live, past) in pages.items():
        for state, before in (("warm", None), ("cold", cache.clear)):
            live_ms = statistics.median(timed_gets(client, live, requests, before=before))
            past_ms = statistics.median(timed_gets(client, past, requests, before=before))
            figures[f"{name}_{state}_live_ms"] = round(live_ms, 1)
            figures[f"{name}_{state}_as_of_ms"] = round(past_ms, 1)
            figures[f"{name}_{state}_ratio"] = round(past_ms / live_ms, 2)
            print(
                f"{name + ' board, ' + state:<30} live {live_ms:7.1f} ms   as of "
                f"{past_ms:7.1f} ms   ratio {past_ms / live_ms:.2f}x"
            )
    redirect = f"/b/{slug}/?as_of={day}"
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(redirect, follow=True)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.status_code
        assert response.redirect_chain, "the as_of URL redirects"
    report(f"/b/{slug}/?as_of={day} followed, warm", times)
    figures["as_of_redirect_followed_ms"] = round(statistics.median(times), 1)
    api = f"/api/v1/benchmarks/{slug}/rankings/?board=all&page_size=1000"
    api_sorted = f"/api/v1/benchmarks/{slug}/rankings/?board=community&sort=STG_mIoU&dir=desc"
    for name, url in (("api", api), ("api_sorted", api_sorted)):
        client.get(url)
        client.get(f"{url}&as_of={day}")
        live_ms = statistics.median(timed_gets(client, url, requests))
        past_ms = statistics.median(timed_gets(client, f"{url}&as_of={day}", requests))
        figures[f"{name}_live_ms"] = round(live_ms, 1)
        figures[f"{name}_as_of_ms"] = round(past_ms, 1)
        figures[f"{name}_ratio"] = round(past_ms / live_ms, 2)
        print(
            f"{name + ' (rankings JSON)':<30} live {live_ms:7.1f} ms   as of "
            f"{past_ms:7.1f} ms   ratio {past_ms / live_ms:.2f}x"
        )
    return figures


def seal_in_child(args: argparse.Namespace) -> dict:
    command = [
        sys.executable,
        __file__,
        "--part=seal",
        f"--seal-entries={args.seal_entries}",
        f"--repeats={args.repeats}",
        f"--seed={args.seed}",
    ]
    if args.database_url:
        command.append(f"--database-url={args.database_url}")
    print(f"--- the seal at {args.seal_entries:,} entries (a child process) ---")
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    print("\n".join(f"  {line}" for line in output.splitlines()[:-1]))
    return json.loads(output.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--seal-entries", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=5, help="snapshots written per part")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part", choices=["all", "seal", "large"], default="all")
    parser.add_argument(
        "--database-url",
        help="a PostgreSQL server to measure on (a throwaway database is created there)",
    )
    args = parser.parse_args()

    figures: dict = {}
    if args.part == "all":
        figures["seal"] = seal_in_child(args)
    parts = {"seal": measure_seal, "large": measure_large}
    chosen = {"all": ["large"], "seal": ["seal"], "large": ["large"]}[args.part]
    for part in chosen:
        if args.part == "all":
            print(f"--- {args.entries:,} entries ---")
        with (
            tempfile.TemporaryDirectory(prefix="podium-bench-") as folder,
            throwaway_database(args.database_url) as database_url,
        ):
            result = parts[part](args, database_url, Path(folder))
        if args.part == "seal":
            figures = result
        else:
            figures["large"] = result
    if args.part != "seal":
        large, seal = figures.get("large", {}), figures.get("seal", {})
        figures["targets"] = {
            "write_le_2s": large.get("write_s", 0) <= 2,
            "stored_le_5mb": large.get("stored_mb", 0) <= 5,
            "seal_le_20ms": seal.get("seal_ms", 0) <= 20 if seal else None,
            "as_of_pages_le_2x": all(
                value <= 2 for key, value in large.items() if key.endswith("_ratio")
            ),
        }
        print(f"targets: {figures['targets']}")
    start = time.perf_counter()
    sum(range(10**7))
    figures["yardstick_ms"] = round((time.perf_counter() - start) * 1000)
    print(f"yardstick: sum(range(10**7)) took {figures['yardstick_ms']} ms")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
