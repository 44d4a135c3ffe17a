"""Benchmark: files scored per second with one and with two qcluster workers (issue 16, point 4).

    .venv/bin/python bench/scaleout.py [--files 200] [--users 20] [--workers 1 2]
                                       [--rounds 1] [--replicates 1000] [--storage s3|local]
                                       [--database-url postgres://postgres@127.0.0.1:5432/podium_bench_scaleout]

The scale-out test's set-up (tests/scaleout/harness.py), measured instead of asserted: one web
process (gunicorn, two workers), qcluster workers on the Redis broker, each `manage.py qcluster`
(one worker process) in a process group of its own and with local folders of its own, as if on
a machine of its own, PostgreSQL, and the private files in a bucket of an S3 server (moto's
`moto_server`; `PODIUM_TEST_S3_ENDPOINT_URL` names another) or, with `--storage local`, in one
shared folder. Redis is `PODIUM_TEST_REDIS_URL`, else a redis-server started here. The database
named by --database-url is created if missing (it must hold no Podium data of value: it is
migrated, filled and, when this script created it, dropped at the end).

MedVidBench with the five-record test set of the tests and `--replicates` bootstrap replicates
(its own: 1,000). For each worker count in turn (`--rounds` times over, interleaved: 1, 2, 1,
2, ...; the medians are reported), on an empty board: `--users` users upload
`--files` distinct files at once through the API (a thread each, no worker running: the upload
figures), then that many clusters start and score the backlog. Scoring throughput is files per
second from the first claim to the last run scored: each file's claim, scoring, replicates and
board recompute, and the rank-interval tasks every recompute queues, which the same workers
run in between (docs/statistics.md). Settings: config.settings.test (heartbeat 1 s; the API's
throttles out of the way); the machine is shared, so run it more than once.

Prints the figures, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pg_databases import create_database, drop_database  # noqa: E402  (bench/ is first on sys.path)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/podium_bench_scaleout"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--storage", choices=("s3", "local"), default="s3")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--keep", action="store_true", help="do not drop a database created here")
    args = parser.parse_args()
    if args.files % args.users:
        parser.error("--files must be a multiple of --users")

    created = create_database(args.database_url, if_missing=True)
    try:
        with tempfile.TemporaryDirectory(prefix="podium-bench-scaleout-") as folder:
            run(args, Path(folder))
    finally:
        if created and not args.keep:
            from django.db import connections

            connections.close_all()
            drop_database(args.database_url)


def run(args: argparse.Namespace, folder: Path) -> None:
    from tests import redis_server, s3_server

    with ExitStack() as stack:
        redis_url = stack.enter_context(redis_server.redis_url())
        storage_env: dict[str, str] = {}
        if args.storage == "s3":
            endpoint = stack.enter_context(s3_server.s3_endpoint())
            storage_env = s3_server.new_bucket(endpoint).env()
        else:
            storage_env = {"PODIUM_PRIVATE_DIR": str(folder / "shared-private")}
        shared = {
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": args.database_url,
            **storage_env,
            "Q_REDIS_URL": redis_url,
            "Q_NAME": f"podium-bench-scaleout-{uuid.uuid4().hex[:8]}",
            "Q_WORKERS": "1",
            "LOG_LEVEL": "WARNING",
        }
        os.environ.update(shared)
        os.environ.update(host_folders(folder / "bench", args.storage))
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        measure(args, folder, shared, redis_url)


def host_folders(folder: Path, storage: str) -> dict[str, str]:
    """A process's own local folders (with S3; with `local` the private folder is shared)."""
    folders = {
        "PODIUM_PRIVATE_CACHE_DIR": str(folder / "cache"),
        "PODIUM_VAR_DIR": str(folder / "var"),
    }
    if storage == "s3":
        folders["PODIUM_PRIVATE_DIR"] = str(folder / "private")
    return folders


def measure(args: argparse.Namespace, folder: Path, shared: dict[str, str], redis_url: str) -> None:
    from accounts.services import create_api_token
    from benchmark.models import Benchmark
    from benchmark.selectors import active_testset, load_scoring_testset
    from benchmark.services import ensure_plugin_benchmark, import_testset
    from submissions.boards import recompute_board
    from submissions.enums import EvaluationStatus
    from submissions.models import Evaluation, Submission
    from tests.accounts.factories import UserFactory
    from tests.benchmark.factories import small_ground_truth, write_ground_truth
    from tests.live_gunicorn import gunicorn_server
    from tests.scaleout.harness import (
        Upload,
        cpu_seconds,
        delete_redis_queue,
        predictions_file,
        start_cluster,
        upload_all,
        wait_for,
    )

    benchmark = ensure_plugin_benchmark("medvidbench")
    Benchmark.objects.filter(pk=benchmark.pk).update(
        daily_submission_limit=args.files * len(args.workers) * args.rounds,
        bootstrap_replicates=args.replicates,
    )
    benchmark.refresh_from_db()
    if active_testset(benchmark) is None:
        import_testset(benchmark, write_ground_truth(folder / "gt.json", small_ground_truth()))
    samples = load_scoring_testset(active_testset(benchmark)).samples
    tokens = [
        create_api_token(UserFactory(username=f"scale{n}-{uuid.uuid4().hex[:6]}"), name="bench")[1]
        for n in range(args.users)
    ]
    per_user = args.files // args.users
    runs = Evaluation.objects.filter(submission__benchmark=benchmark)

    results = []
    web_env = {**shared, **host_folders(folder / "web", args.storage)}
    with gunicorn_server(workers=2, env=web_env) as web:
        schedule = [clusters for _ in range(args.rounds) for clusters in args.workers]
        for round_number, clusters in enumerate(schedule):
            Submission.objects.filter(benchmark=benchmark).delete()
            recompute_board(benchmark)
            delete_redis_queue(redis_url, shared["Q_NAME"])
            uploads = [
                [
                    Upload(
                        token,
                        f"Bench {round_number}-{user:02d}-{n}",
                        predictions_file(samples, round_number * 100_000 + user * 100 + n),
                    )
                    for n in range(per_user)
                ]
                for user, token in enumerate(tokens)
            ]
            started = time.monotonic()
            answers = upload_all(web.url, benchmark.slug, uploads)
            upload_seconds = time.monotonic() - started
            refused = [answer for answer in answers if answer.status != 201]
            if refused:
                raise SystemExit(f"{len(refused)} uploads refused, e.g. {refused[0]}")
            latencies = sorted(answer.seconds * 1000 for answer in answers)

            workers = [
                start_cluster(
                    f"w{n}",
                    {**os.environ, **shared, **host_folders(folder / f"w{n}", args.storage)},
                )
                for n in range(clusters)
            ]
            clusters_started = time.monotonic()
            try:
                wait_for(
                    lambda: runs.filter(status=EvaluationStatus.SCORED).count() == args.files,
                    args.files * 5 + 60,
                    "not every file was scored",
                )
                wall = time.monotonic() - clusters_started
                cpu = sum(cpu_seconds(worker.look()) for worker in workers)
            finally:
                for worker in workers:
                    worker.stop()
            first = min(runs.values_list("scoring_started_at", flat=True))
            last = max(runs.values_list("scored_at", flat=True))
            scoring = (last - first).total_seconds()
            results.append(
                {
                    "workers": clusters,
                    "upload_s": round(upload_seconds, 2),
                    "upload_files_per_s": round(args.files / upload_seconds, 1),
                    "upload_p50_ms": round(statistics.median(latencies)),
                    "upload_p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))]),
                    "scoring_s": round(scoring, 2),
                    "scored_per_s": round(args.files / scoring, 2),
                    "wall_from_start_s": round(wall, 2),
                    # Every process of the clusters, from their start (Django's set-up
                    # included) until the last file was scored.
                    "worker_cpu_s": round(cpu, 1),
                    "worker_cpu_ms_per_file": round(cpu * 1000 / args.files),
                }
            )
            row = results[-1]
            print(
                f"{clusters} worker(s): uploads {row['upload_files_per_s']} files/s "
                f"(p50 {row['upload_p50_ms']} ms, p95 {row['upload_p95_ms']} ms); scored "
                f"{args.files} in {row['scoring_s']} s from the first claim: "
                f"{row['scored_per_s']} files/s ({row['wall_from_start_s']} s from start; "
                f"workers' CPU {row['worker_cpu_ms_per_file']} ms per file)",
                flush=True,
            )
    delete_redis_queue(redis_url, shared["Q_NAME"])

    medians = {
        clusters: round(
            statistics.median(row["scored_per_s"] for row in results if row["workers"] == clusters),
            2,
        )
        for clusters in args.workers
    }
    summary = {
        "bench": "scaleout",
        "files": args.files,
        "users": args.users,
        "replicates": args.replicates,
        "storage": args.storage,
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "rounds": results,
        "upload_files_per_s": statistics.median(row["upload_files_per_s"] for row in results),
        **{f"scored_per_s_{clusters}_workers": value for clusters, value in medians.items()},
    }
    if 1 in medians and 2 in medians:
        summary["speedup_2_over_1"] = round(medians[2] / medians[1], 2)
        print(
            f"median files scored per second: 1 worker {medians[1]}, 2 workers {medians[2]} "
            f"({summary['speedup_2_over_1']}x)"
        )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
