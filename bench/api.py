"""Benchmark: the rankings API (JSON and CSV) with 1,000 entries, in process and under gunicorn.

    .venv/bin/python bench/api.py [--entries 1000] [--requests 200] [--seed 0]
                                  [--duration 10] [--connections 16] [--anon-rate 1000000/min]
                                  [--database-url postgres://user@host:port/name] [--json]

Builds the same throwaway board as bench/board.py (a fresh SQLite file in a temporary folder,
or with `--database-url` a fresh PostgreSQL database on that server, dropped at the end: never
the configured database; MedVidBench with `--entries` published entries, a third verified, a
fifth with their judge metrics pending, each run with its metric intervals stored;
`recompute_board` once), then:

1. In process (django.test.Client, test settings: DEBUG off, the local-memory cache): GETs of
   the whole board as JSON (`?board=all&page_size=1000`) and as CSV (`rankings.csv?board=all`):
   warm (the body cached until the next recompute, what every request but the first after a
   recompute gets), cold (the cache cleared before each request: the page's rows read and
   rendered; first, the JSON with its rows built, before the rows' API JSON the recompute
   queues is stored, then `write_board_json`, timed), and a revalidation with If-None-Match
   (304). Server time is the wall time of
   `Client.get`, the whole request including the throttles' shared-cache reads and writes.
2. If `.venv/bin/gunicorn` and `wrk` exist: `gunicorn config.wsgi -w 2` on 127.0.0.1 against
   the same SQLite file with the production settings (DEBUG off; the variables prod requires
   set to bench values), and `wrk -t2 -c<connections> -d<duration>s` on each URL. Every wrk
   request comes from 127.0.0.1, so the API's throttles (120/min anonymous by default, and
   the user throttle) would refuse almost all of them: the server runs with
   PODIUM_API_ANON_RATE and PODIUM_API_USER_RATE set to `--anon-rate`. The throttles still
   count every request: an upsert and an update of the api_throttlehistory table each (docs/api.md,
   "Throttling"). bench/throttle.py measures the throttle itself under concurrency.

Targets (spec, 2-core shared machine): JSON and CSV p50 <= 25 ms in process; >= 300 requests/s
with no errors under gunicorn. wrk and the two workers share the same two cores. The machine is
shared, so timings are noisy: run it a few times. A last line times plain Python as a yardstick.
Issue 16's figure is the cold JSON page at 10,000 entries (`--entries 10000`; target 30 ms).
`--json` prints one JSON object last: `entries`, `database`, and per URL (`json`, `csv`) the
warm, cold and 304 medians in ms.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# bench/ is the script folder, first on sys.path: the board bench's fixture and the timing.
from board import (  # noqa: E402
    add_stored_intervals,
    build_board,
    setup_django,
    throwaway_database,
    timed_gets,
)
from timing import report  # noqa: E402

from tests.live_gunicorn import GUNICORN, gunicorn_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=int, default=10, help="seconds of wrk per URL")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--anon-rate", default="1000000/min", help="the throttle rate for wrk")
    parser.add_argument(
        "--database-url",
        help="a PostgreSQL server to measure on (a throwaway database is created there)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args()

    with (
        tempfile.TemporaryDirectory(prefix="podium-bench-") as folder,
        throwaway_database(args.database_url) as database_url,
    ):
        setup_django(Path(folder), database_url)
        from django.core.management import call_command

        call_command("createcachetable", verbosity=0)  # the throttles' shared cache table
        urls, figures = in_process(args)
        over_http(Path(folder), urls, args, database_url)

    start = time.perf_counter()
    sum(range(10**7))
    figures["yardstick_ms"] = round((time.perf_counter() - start) * 1000)
    print(f"yardstick: sum(range(10**7)) took {figures['yardstick_ms']} ms")
    if args.json:
        print(json.dumps(figures))


def in_process(args: argparse.Namespace) -> tuple[dict[str, str], dict]:
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client

    from submissions.models import BoardTotals
    from submissions.services import recompute_board

    benchmark = build_board(args.entries, args.seed)
    add_stored_intervals(benchmark)
    recompute_board(benchmark)
    counts = dict(BoardTotals.objects.filter(benchmark=benchmark).values_list("board", "entries"))
    official, community = counts.get("official", 0), counts.get("community", 0)
    print(
        f"{official + community} entries ({official} official, {community} community) on {connection.vendor}"
    )
    figures: dict = {"entries": args.entries, "database": connection.vendor}

    client = Client()
    urls = {
        "JSON": f"/api/v1/benchmarks/{benchmark.slug}/rankings/?board=all&page_size=1000",
        "CSV": f"/api/v1/benchmarks/{benchmark.slug}/rankings.csv?board=all",
    }
    cold = max(10, args.requests // 10)
    # Issue 16: the JSON page cold before the rows' API JSON is stored (the rows built, as in
    # the moment after a recompute before its queued `write_board_json` ran), then the writer.
    from submissions.board_json import write_board_json

    client.get(urls["JSON"])
    built = timed_gets(client, urls["JSON"], cold, before=cache.clear)
    report("Rankings JSON, cold, rows built (before write_board_json)", built)
    figures["json_built_cold_p50_ms"] = round(statistics.median(built), 1)
    started = time.perf_counter()
    write_board_json(benchmark)
    figures["board_json_s"] = round(time.perf_counter() - started, 3)
    print(f"write_board_json (in the background after a recompute): {figures['board_json_s']} s")
    for label, url in urls.items():
        response = client.get(url)  # warms the cache, the URLconf, the imports
        assert response.status_code == 200, response.status_code
        print(f"Rankings {label}: {len(response.content) / 1000:.0f} kB, ETag {response['ETag']}")
        warm = timed_gets(client, url, args.requests)
        report(f"Rankings {label}, warm (body cached)", warm)
        cold_times = timed_gets(client, url, cold, before=cache.clear)
        report(f"Rankings {label}, cold (the page's rows read and rendered)", cold_times)
        revalidations = []
        for _ in range(args.requests):
            start = time.perf_counter()
            again = client.get(url, HTTP_IF_NONE_MATCH=response["ETag"])
            revalidations.append((time.perf_counter() - start) * 1000)
            assert again.status_code == 304, again.status_code
        report(f"Rankings {label}, If-None-Match (304)", revalidations)
        figures[label.lower()] = {
            "warm_p50_ms": round(statistics.median(warm), 1),
            "cold_p50_ms": round(statistics.median(cold_times), 1),
            "not_modified_p50_ms": round(statistics.median(revalidations), 1),
        }
    return urls, figures


def over_http(
    folder: Path, urls: dict[str, str], args: argparse.Namespace, database_url: str | None
) -> None:
    wrk = shutil.which("wrk")
    if not GUNICORN.exists() or wrk is None:
        missing = " and ".join(
            name for name, there in (("gunicorn", GUNICORN.exists()), ("wrk", wrk)) if not there
        )
        print(f"Skipping the HTTP load test: {missing} not installed (apt-get install wrk).")
        return
    from django.conf import settings

    database = Path(settings.DATABASES["default"]["NAME"])
    env = {
        "SECRET_KEY": "bench-only-not-a-secret",
        "PODIUM_FIELD_ENCRYPTION_KEYS": "YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMzItYnl0ZXM=",
        # The file is already in WAL mode (the test settings set it; it persists in the file).
        "DATABASE_URL": database_url or f"sqlite:///{database}",
        "PODIUM_VAR_DIR": str(folder),
        "SECURE_SSL_REDIRECT": "0",
        "PODIUM_LOCAL_ACCOUNTS": "1",
        "PODIUM_API_ANON_RATE": args.anon_rate,
        "PODIUM_API_USER_RATE": args.anon_rate,
    }
    print(
        f"gunicorn -w 2 on 127.0.0.1, production settings, throttles at {args.anon_rate} "
        f"(the defaults would refuse wrk); wrk -t2 -c{args.connections} -d{args.duration}s"
    )
    errors_file = folder / "gunicorn.stderr"
    # tests/live_gunicorn.py: the same start, readiness wait and stop as the tests use.
    with gunicorn_server(
        workers=2, env=env, settings_module="config.settings.prod", stderr=errors_file
    ) as server:
        for label, url in urls.items():
            for _ in range(8):  # both workers build and cache the body before the clock starts
                urllib.request.urlopen(server.url + url).read()
            output = subprocess.run(
                [
                    wrk,
                    "-t2",
                    f"-c{args.connections}",
                    f"-d{args.duration}s",
                    "--latency",
                    server.url + url,
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            print_wrk(f"Rankings {label} over HTTP", output)
    errors = errors_file.read_text() if errors_file.exists() else ""
    problems = [line for line in errors.splitlines() if "ERROR" in line or "Traceback" in line]
    if problems:
        print("gunicorn reported:\n  " + "\n  ".join(problems[:10]))


def print_wrk(label: str, output: str) -> None:
    """requests/s, latency percentiles and every kind of error wrk counts, on two lines."""
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in ([\d.]+\w+)", output)
    percentiles = dict(re.findall(r"^\s+(50|90|99)%\s+(\S+)", output, flags=re.MULTILINE))
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = sum(map(int, socket_errors.groups())) if socket_errors else 0
    refused = int(non_2xx.group(1)) if non_2xx else 0
    print(
        f"{label:<50} {float(rate.group(1)) if rate else 0:7.0f} requests/s   "
        f"({total.group(1) if total else '?'} in {total.group(2) if total else '?'}), "
        f"errors: {errors} socket, {refused} non-2xx/3xx"
    )
    print(
        f"{'':<50} latency p50 {percentiles.get('50', '?')}   p90 {percentiles.get('90', '?')}"
        f"   p99 {percentiles.get('99', '?')}"
    )


if __name__ == "__main__":
    main()
