"""Benchmark: a board's recompute and the server time of its pages, at any size (issue 16).

    .venv/bin/python bench/board.py [--entries 1000] [--requests 200] [--seed 0]
        [--intervals computed|stored|none] [--database-url postgres://user@host:port/name]
        [--compare 1000] [--json]

Works in a throwaway database, never the configured one: a fresh SQLite file in a temporary
folder, or with `--database-url` a fresh PostgreSQL database created on that server (named
after the URL's database, `_bench_<pid>` appended) and dropped at the end. MedVidBench with
`--entries` published entries (a third verified, a fifth with their judge metrics pending),
inserted with bulk_create (a bench fixture: the rows are written directly, not through the
services), each run with a stored result about the size of the demo's (~4 kB). `--intervals`: `computed` gives every run stored bootstrap replicates and computes
the rank intervals and tiers after the recompute (the default up to 10,000 entries; above, the
replicates alone would take gigabytes); `stored` gives every run its metric intervals only, so
the board is as every recompute leaves it until the rank intervals follow in the background
("computing…"; the default above 10,000); `none` gives no run per-sample data (imported-like
rows). Then `recompute_board` once (timed), and GETs through django.test.Client with the test
settings (DEBUG off, the local-memory cache): the Official board warm (the cached table, as every
visitor but the first after a recompute gets it) and cold (the cache cleared before each
request: the table rendered from the rows), the Community board sorted by a metric (cold
before the stored orders the recompute queues, `write_board_orders`, timed too, then warm and
cold with them), and the rankings API's first page of 1,000 rows of both boards, cold (after the rows'
API JSON that the recompute queues, `write_board_json`, timed too). Server time is the
wall time of `Client.get`, the whole request (middleware, view, template) in-process.

`--compare N` (default 1000 when `--entries` is larger) first measures a board of N entries the
same way in a child process (its own database) and prints how each figure at `--entries`
compares with it. `--json` prints one JSON object last: `entries`, `recompute_s`,
`warm_p50_ms`, `cold_p50_ms` and the others measured (and `compare` with the same for N, and
the ratios). The recompute's parts are printed and in `recompute_parts_s`: the read, the
values laid out, the ranking, the rows built, the write (COPY, the server's time included).

Targets (issue 16, 2-core shared machine): at 100,000 entries recompute <= 3 s, warm p50 <=
15 ms, cold <= 60 ms, and the warm and cold page within 2x of the same at 1,000. The machine is
shared, so timings are noisy: run it a few times. A last line times plain Python as a yardstick
of the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pg_databases import create_database, drop_database  # noqa: E402
from timing import report  # noqa: E402  (bench/ is the script folder, first on sys.path)

# Above this many entries `--intervals` defaults to `stored` (see the docstring).
COMPUTED_INTERVALS_UP_TO = 10_000


def setup_django(folder: Path, database_url: str | None = None) -> None:
    """Django on a fresh SQLite file under `folder`, or on `database_url` (a database this
    script created), whatever the environment says."""
    os.environ.pop("DATABASE_URL", None)
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    os.environ["PODIUM_VAR_DIR"] = str(folder)
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()  # lets the test client's host in
    call_command("migrate", verbosity=0)


@contextmanager
def throwaway_database(server_url: str | None) -> Iterator[str | None]:
    """A new, empty PostgreSQL database on the server of `server_url`, dropped afterwards
    (None: SQLite, nothing to create). Its name is the URL's database's with `_bench_<pid>`
    appended, so it never is a database someone uses."""
    if not server_url:
        yield None
        return
    parts = urlsplit(server_url)
    name = f"{parts.path.lstrip('/') or 'podium'}_bench_{os.getpid()}"
    url = urlunsplit(parts._replace(path=f"/{name}"))
    create_database(url)
    try:
        yield url
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(url)


def build_board(entries: int, seed: int):
    """MedVidBench with `entries` published entries and a scored run each, written as plain
    tuples (`core.bulk.insert_rows`: COPY on PostgreSQL), not through the services: a bench
    fixture. Model instances and `bulk_create` took a minute at 100,000 entries. Call
    `analyse` once the fixture is complete."""
    import numpy as np
    from django.utils import timezone

    from benchmark.services import ensure_plugin_benchmark
    from core.text import confusable_key
    from submissions.enums import EvaluationStatus, SubmissionSource, VerificationStatus
    from submissions.models import Evaluation, Submission

    benchmark = ensure_plugin_benchmark("medvidbench")
    keys = list(benchmark.metrics.values_list("key", flat=True))
    judge = set(benchmark.metrics.filter(is_judge_metric=True).values_list("key", flat=True))
    generator = np.random.default_rng(seed)
    values = (generator.integers(0, 1001, size=(entries, len(keys))) / 1000).tolist()
    now = timezone.now()
    names = [f"bench-model-{number:05d}" for number in range(entries)]
    insert_fixture(
        Submission,
        (
            {
                "benchmark": benchmark.pk,
                "source": SubmissionSource.UPLOAD.value,
                "model_name": name,
                "model_name_skeleton": confusable_key(name),
                "institution": f"Lab {number % 37}",
                "model_url": f"https://example.org/models/{number}",
                "publish": True,
                "is_baseline": number % 11 == 0,
                "verification_status": (
                    VerificationStatus.VERIFIED.value
                    if number % 3 == 0
                    else VerificationStatus.COMMUNITY.value
                ),
                "verified_at": now if number % 3 == 0 else None,
                "created_at": now,
            }
            for number, name in enumerate(names)
        ),
    )
    ids = dict(Submission.objects.filter(benchmark=benchmark).values_list("model_name", "pk"))
    runs = []
    for number, name in enumerate(names):
        pending = number % 5 == 0
        metrics = dict(zip(keys, values[number], strict=True))
        if pending:
            metrics.update(dict.fromkeys(judge))
        runs.append(
            {
                "submission": ids[name],
                "status": (EvaluationStatus.SCORED if pending else EvaluationStatus.COMPLETE).value,
                "metrics": metrics,
                "result": run_result(metrics, sorted(judge), judged=not pending),
                "scored_at": now,
                "created_at": now,
            }
        )
    insert_fixture(Evaluation, runs)
    return benchmark


def run_result(metrics: dict, judge: list[str], *, judged: bool) -> dict:
    """A run's stored result about the size of the demo's scored runs (~4 kB of JSON, so stored
    compressed, as scoring stores it): the metrics again per dataset, the judge's item counts
    (every item judged, none pending) and a few unparsed answers quoted."""
    datasets = [f"dataset-{number}" for number in range(8)]
    return {
        "scorer_version": "bench",
        "records": 6245,
        "metrics": metrics,
        "per_dataset": {dataset: dict(metrics) for dataset in datasets},
        "counts": {key: {"scored": 772, "total": 772} for key in judge} if judged else {},
        "parsed": 6200,
        "unparsed_examples": [
            f"Answer {number}: the model described the instrument and the phase at length "
            "instead of giving the requested label, so nothing could be parsed from it. " * 3
            for number in range(4)
        ],
    }


def analyse() -> None:
    """On PostgreSQL, the tables as autovacuum leaves them in a live database: their
    statistics (with those of freshly filled tables, none, the planner plans for an empty
    database: nested loops over 100,000 rows) and vacuumed (`VACUUM ANALYZE`), then a
    checkpoint. The fixture writes its 100,000 submissions, runs and replicates in seconds;
    left as they are, the measured recompute's read set every row's hint bits (writing the
    pages it reads), and autovacuum's pass over the new tables (PostgreSQL vacuums after
    inserts too) and the checkpoint of the fixture's pages ran beside it on the machine's two
    cores: the fixture's cost, not the board's, which a live database spreads over its life."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
            cursor.execute("CHECKPOINT")


def insert_fixture(model, rows) -> None:
    """`rows` (dicts of field name -> value, a foreign key's value its id) inserted in one
    `insert_rows`, every other column its field's default."""
    from core.bulk import insert_rows

    fields = [
        field
        for field in model._meta.concrete_fields
        if not field.primary_key and not field.generated
    ]
    defaults = {field.name: field.get_default() for field in fields}
    names = list(defaults)
    insert_rows(
        model, names, (tuple(row.get(name, defaults[name]) for name in names) for row in rows)
    )


def add_replicates(benchmark, replicates: int, seed: int) -> int:
    """Every run gets stored replicates (B x 10 values around its metrics, NaN for pending
    judge metrics; a bench fixture written directly), as scoring stores them (issue 12)."""
    import numpy as np
    from django.utils import timezone

    from plugins.medvidbench.scoring.tasks import METRIC_NAMES
    from submissions.intervals import VALUES_DTYPE
    from submissions.models import Evaluation, RunReplicates

    generator = np.random.default_rng(seed)
    rows = []
    for run in Evaluation.objects.filter(submission__benchmark=benchmark).only("pk", "metrics"):
        matrix = np.full((len(METRIC_NAMES), replicates), np.nan)
        for index, key in enumerate(METRIC_NAMES):
            value = run.metrics.get(key)
            if value is not None:
                matrix[index] = value + generator.normal(0.0, 0.01, replicates)
        rows.append(
            RunReplicates(
                evaluation=run,
                test_set_checksum="0" * 64,
                replicates=replicates,
                contributions=b"",
                values=np.ascontiguousarray(matrix, dtype=VALUES_DTYPE).tobytes(),
                metric_keys=list(METRIC_NAMES),
                intervals={},
                computed_at=timezone.now(),
            )
        )
    RunReplicates.objects.bulk_create(rows, batch_size=200)
    return len(rows)


def add_stored_intervals(benchmark) -> int:
    """Every run gets its metrics' 95% intervals (value +- 0.01; none for a pending judge
    metric) and no replicate values: what `recompute_board` copies onto the board, without
    the gigabytes a large board's replicates would take. The rank intervals, which need the
    replicates, are never computed (the board stays as a recompute leaves it)."""
    from django.utils import timezone

    from core.bulk import insert_rows
    from submissions.models import Evaluation, RunReplicates

    now = timezone.now()
    runs = Evaluation.objects.filter(submission__benchmark=benchmark).values_list("pk", "metrics")
    rows = [
        (
            pk,
            "0" * 64,
            benchmark.bootstrap_replicates,
            b"",
            b"",
            list(metrics),
            {
                key: None if value is None else [round(value - 0.01, 6), round(value + 0.01, 6)]
                for key, value in metrics.items()
            },
            now,
        )
        for pk, metrics in runs
    ]
    fields = (
        "evaluation", "test_set_checksum", "replicates", "contributions", "values",
        "metric_keys", "intervals", "computed_at",
    )  # fmt: skip
    insert_rows(RunReplicates, fields, rows)
    return len(rows)


# `recompute_board`'s steps, timed by `recompute_parts`: the read, the values laid out, the
# ranking, the rows built and the write (COPY on PostgreSQL, the server's time included).
RECOMPUTE_PARTS = {
    "read": "board_candidate_rows",
    "values": "shown_values",
    "rank": "placed",
    "rows": "board_rows",
    "write": "insert_rows",
}


@contextmanager
def recompute_parts() -> Iterator[dict[str, float]]:
    """The seconds each of `RECOMPUTE_PARTS` takes in the recompute run inside (wrapped in
    `submissions.boards.writer`'s namespace, where they are called, for the duration; the
    rest, the JSON decoding, the delete and the commit, is what the total has more)."""
    from submissions.boards import writer as boards

    parts: dict[str, float] = dict.fromkeys(RECOMPUTE_PARTS, 0.0)
    originals = {name: getattr(boards, name) for name in RECOMPUTE_PARTS.values()}

    def timed_part(label, function):
        def call(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                parts[label] += time.perf_counter() - started

        return call

    for label, name in RECOMPUTE_PARTS.items():
        setattr(boards, name, timed_part(label, originals[name]))
    try:
        yield parts
    finally:
        for name, function in originals.items():
            setattr(boards, name, function)


def timed_gets(client, url: str, count: int, *, before=None) -> list[float]:
    times = []
    for _ in range(count):
        if before is not None:
            before()
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.status_code
    return times


def timed(label: str, times: list[float]) -> float:
    """Print the distribution of `times` and return its median."""
    report(label, times)
    return round(statistics.median(times), 1)


def measure(args: argparse.Namespace, database_url: str | None, folder: Path) -> dict:
    """Build the board, recompute it and time its pages; the figures."""
    setup_django(folder, database_url)
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client

    from submissions.models import BoardTotals
    from submissions.services import recompute_board

    benchmark = build_board(args.entries, args.seed)
    if args.intervals == "computed":
        add_replicates(benchmark, benchmark.bootstrap_replicates, args.seed)
    elif args.intervals == "stored":
        add_stored_intervals(benchmark)
    analyse()
    with recompute_parts() as parts:
        start = time.perf_counter()
        recompute_board(benchmark)
        recompute_s = time.perf_counter() - start
    shown = ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in parts.items())
    print(f"recompute_board's parts: {shown}")
    if args.intervals == "computed":
        from submissions.intervals import compute_rank_intervals

        started = time.perf_counter()
        compute_rank_intervals(benchmark)
        print(f"rank intervals and tiers: {time.perf_counter() - started:.2f} s")
    # What the recompute queues on commit (its own task on a worker): the rows' API JSON.
    from submissions.board_json import write_board_json

    started = time.perf_counter()
    write_board_json(benchmark)
    board_json_s = time.perf_counter() - started
    print(f"rows' API JSON (write_board_json, in the background): {board_json_s:.2f} s")
    counts = dict(BoardTotals.objects.filter(benchmark=benchmark).values_list("board", "entries"))
    official, community = counts.get("official", 0), counts.get("community", 0)
    print(
        f"{official + community} entries ({official} official, {community} community) on "
        f"{connection.vendor}, intervals {args.intervals}; recompute_board: "
        f"{recompute_s * 1000:.0f} ms"
    )

    client = Client()
    cold_count = max(10, args.requests // 10)
    url = f"/b/{benchmark.slug}/"
    body = client.get(url).content  # warms the cache, the template loader, the URLconf
    print(f"Official board page: {len(body) / 1000:.0f} kB of HTML")
    figures = {
        "entries": args.entries,
        "database": connection.vendor,
        "intervals": args.intervals,
        "recompute_s": round(recompute_s, 3),
        "recompute_parts_s": {name: round(seconds, 3) for name, seconds in parts.items()},
        "board_json_s": round(board_json_s, 3),
        "page_kb": round(len(body) / 1000, 1),
        "warm_p50_ms": timed(
            "Official board, warm (cached table)", timed_gets(client, url, args.requests)
        ),
        "cold_p50_ms": timed(
            "Official board, cold (table rendered)",
            timed_gets(client, url, cold_count, before=cache.clear),
        ),
    }
    sorted_url = f"/b/{benchmark.slug}/community/?sort=STG_mIoU&dir=desc"
    figures["sorted_cold_in_database_p50_ms"] = timed(
        "Community board sorted by STG_mIoU, cold, before its stored orders",
        timed_gets(client, sorted_url, cold_count, before=cache.clear),
    )
    # What the recompute queues on commit too: each sortable column's order.
    from submissions.board_orders import write_board_orders

    started = time.perf_counter()
    write_board_orders(benchmark)
    figures["board_orders_s"] = round(time.perf_counter() - started, 3)
    print(
        f"sorted orders (write_board_orders, in the background): {figures['board_orders_s']:.2f} s"
    )
    client.get(sorted_url)
    figures["sorted_warm_p50_ms"] = timed(
        "Community board sorted by STG_mIoU, warm", timed_gets(client, sorted_url, args.requests)
    )
    figures["sorted_cold_p50_ms"] = timed(
        "Community board sorted by STG_mIoU, cold",
        timed_gets(client, sorted_url, cold_count, before=cache.clear),
    )
    api_url = f"/api/v1/benchmarks/{benchmark.slug}/rankings/?board=all&page_size=1000"
    client.get(api_url)
    figures["api_cold_p50_ms"] = timed(
        "Rankings API, 1,000 rows of both boards, cold",
        timed_gets(client, api_url, cold_count, before=cache.clear),
    )
    return figures


def compared(args: argparse.Namespace) -> dict:
    """The figures of a board of `args.compare` entries, measured by a child process (its own
    database), the other options the same."""
    command = [
        sys.executable,
        __file__,
        f"--entries={args.compare}",
        f"--requests={args.requests}",
        f"--seed={args.seed}",
        f"--intervals={args.intervals}",
        "--compare=0",
        "--json",
    ]
    if args.database_url:
        command.append(f"--database-url={args.database_url}")
    print(f"--- first, {args.compare:,} entries (the comparison, in a child process) ---")
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    print("\n".join(f"  {line}" for line in output.splitlines()[:-1]))
    print(f"--- then {args.entries:,} entries ---")
    return json.loads(output.splitlines()[-1])


RATIOS = ("warm_p50_ms", "cold_p50_ms", "sorted_warm_p50_ms", "sorted_cold_p50_ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--intervals", choices=["computed", "stored", "none"])
    parser.add_argument("--no-intervals", action="store_true", help="the same as --intervals none")
    parser.add_argument(
        "--database-url",
        help="a PostgreSQL server to measure on (a throwaway database is created there)",
    )
    parser.add_argument(
        "--compare",
        type=int,
        help="also measure a board of this many entries and print the ratios "
        "(default 1000 when --entries is larger, 0: none)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args()
    if args.intervals is None:
        args.intervals = (
            "none"
            if args.no_intervals
            else "computed"
            if args.entries <= COMPUTED_INTERVALS_UP_TO
            else "stored"
        )
    if args.compare is None:
        args.compare = 1000 if args.entries > 1000 else 0

    baseline = compared(args) if args.compare and args.compare != args.entries else None
    with (
        tempfile.TemporaryDirectory(prefix="podium-bench-") as folder,
        throwaway_database(args.database_url) as database_url,
    ):
        figures = measure(args, database_url, Path(folder))

    if baseline is not None:
        figures["compare"] = {key: baseline[key] for key in ("entries", "recompute_s", *RATIOS)}
        for key in RATIOS:
            ratio = figures[key] / baseline[key]
            figures[f"{key.removesuffix('_ms')}_ratio"] = round(ratio, 2)
            print(
                f"{key}: {figures[key]:.1f} ms at {args.entries:,} entries, "
                f"{baseline[key]:.1f} ms at {args.compare:,}: {ratio:.2f}x"
            )
    start = time.perf_counter()
    sum(range(10**7))
    figures["yardstick_ms"] = round((time.perf_counter() - start) * 1000)
    print(f"yardstick: sum(range(10**7)) took {figures['yardstick_ms']} ms")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
