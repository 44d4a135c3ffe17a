"""Benchmark: server time of a board page with 1,000 entries.

    .venv/bin/python bench/board.py [--entries 1000] [--requests 200] [--seed 0]

Works in a throwaway SQLite database in a temporary folder (never the configured database):
MedVidBench with `--entries` published entries (a third verified, a fifth with their judge
metrics pending), inserted with bulk_create (a bench fixture: the rows are written directly,
not through the services), each run with stored bootstrap replicates (unless
`--no-intervals`), then `recompute_board` once (timed) and the rank intervals and tiers. It then times GETs of the
Official board through django.test.Client with the test settings (DEBUG off, the local-memory
cache): the warm page as every visitor but the first after a recompute gets it, the cold page
(the cache cleared before each request: the table is rendered from the rows), and the warm
Community board sorted by a metric. Server time is the wall time of `Client.get`, which runs
the whole request (middleware, view, template) in-process.

Target (spec, 2-core shared machine): warm p50 <= 25 ms. The machine is shared, so timings
are noisy: run it a few times. A last line times plain Python as a yardstick of the load.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import report  # noqa: E402  (bench/ is the script folder, first on sys.path)


def setup_django(folder: Path) -> None:
    """Django on a fresh SQLite file under `folder`, whatever the environment says."""
    os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    os.environ["PODIUM_VAR_DIR"] = str(folder)
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()  # lets the test client's host in
    call_command("migrate", verbosity=0)


def build_board(entries: int, seed: int):
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
    submissions = Submission.objects.bulk_create(
        [
            Submission(
                benchmark=benchmark,
                source=SubmissionSource.UPLOAD,
                model_name=f"bench-model-{number:05d}",
                model_name_skeleton=confusable_key(f"bench-model-{number:05d}"),
                institution=f"Lab {number % 37}",
                model_url=f"https://example.org/models/{number}",
                publish=True,
                is_baseline=number % 11 == 0,
                verification_status=(
                    VerificationStatus.VERIFIED if number % 3 == 0 else VerificationStatus.COMMUNITY
                ),
                verified_at=now if number % 3 == 0 else None,
            )
            for number in range(entries)
        ]
    )
    runs = []
    for number, submission in enumerate(submissions):
        pending = number % 5 == 0
        metrics = dict(zip(keys, values[number], strict=True))
        if pending:
            metrics.update(dict.fromkeys(judge))
        runs.append(
            Evaluation(
                submission=submission,
                status=EvaluationStatus.SCORED if pending else EvaluationStatus.COMPLETE,
                metrics=metrics,
                scored_at=now,
            )
        )
    Evaluation.objects.bulk_create(runs)
    return benchmark


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-intervals",
        action="store_true",
        help="leave the runs without replicates (no intervals, rank intervals or tiers)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="podium-bench-") as folder:
        setup_django(Path(folder))
        from django.core.cache import cache
        from django.test import Client

        from submissions.services import recompute_board

        benchmark = build_board(args.entries, args.seed)
        if not args.no_intervals:
            add_replicates(benchmark, benchmark.bootstrap_replicates, args.seed)
        start = time.perf_counter()
        rows = recompute_board(benchmark)
        recompute_ms = (time.perf_counter() - start) * 1000
        if not args.no_intervals:
            from submissions.intervals import compute_rank_intervals

            started = time.perf_counter()
            compute_rank_intervals(benchmark)
            print(f"rank intervals and tiers: {time.perf_counter() - started:.2f} s")
        official = sum(row.board == "official" for row in rows)
        print(
            f"{len(rows)} entries ({official} official, {len(rows) - official} community); "
            f"recompute_board: {recompute_ms:.0f} ms"
        )

        client = Client()
        url = f"/b/{benchmark.slug}/"
        body = client.get(url).content  # warms the cache, the template loader, the URLconf
        print(f"Official board page: {len(body) / 1000:.0f} kB of HTML")
        report("Official board, warm (cached table)", timed_gets(client, url, args.requests))
        cold = max(10, args.requests // 10)
        report(
            "Official board, cold (table rendered)",
            timed_gets(client, url, cold, before=cache.clear),
        )
        sorted_url = f"/b/{benchmark.slug}/community/?sort=STG_mIoU&dir=desc"
        client.get(sorted_url)
        report(
            "Community board sorted by STG_mIoU, warm",
            timed_gets(client, sorted_url, args.requests),
        )

    start = time.perf_counter()
    sum(range(10**7))
    print(f"yardstick: sum(range(10**7)) took {(time.perf_counter() - start) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
