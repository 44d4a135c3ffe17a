"""Benchmark: a judge job of 2,000 items against the stand-in judge with 200 ms per call.

    .venv/bin/python bench/judge.py [--items 2000] [--latency 0.2] [--concurrency 50]
                                    [--database-url postgres://...]

Builds, in a throwaway SQLite database in a temporary folder (or the PostgreSQL database named
by --database-url, which must be empty of Podium data: use a scratch database), MedVidBench
with a test set of `--items` video-summary samples, one scored submission answering each of them
differently (so every prompt is distinct), and the stand-in judge (`manage.py standin_judge`,
in its own process as a real endpoint would be) on loopback as the active endpoint. It then runs the job in this process, through the same
`judging.services.run_job` the worker calls, and prints calls, wall time and items/s; then it
reruns the judge on the finished run, which must make 0 calls (every verdict is cached).

With --database-url it then runs two jobs over the same new captions at once, in two threads
with their own connections as two workers would (issue 10, point 4), and prints the calls made
against the distinct prompts.

Target (issue 4): 2,000 items with 200 ms latency in <= 15 s wall; a rerun makes 0 calls.
With --outage N it judges new captions with the stand-in stopped N seconds mid-job and prints
the published values beside an uninterrupted judgement's.

Target (issue 10): two concurrent jobs make at most prompts + concurrency calls; an outage
changes no published value and fails no item.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup_django(folder: Path, database_url: str | None) -> None:
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    os.environ["PODIUM_VAR_DIR"] = str(folder)
    os.environ["LOG_LEVEL"] = "WARNING"
    # The test settings give up on an unreachable judge after 5 s; --outage needs longer.
    os.environ.setdefault("PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS", "600")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.PODIUM_PRIVATE_DIR = folder / "private"
    call_command("migrate", verbosity=0)


def summary_records(count: int) -> list[dict]:
    return [
        {
            "id": "unused",
            "conversations": [
                {"from": "human", "value": "<video>\nSummarise the video."},
                {"from": "gpt", "value": f"The surgeon performs step {n} of the dissection."},
            ],
            "video": ["frame_0001.jpg"],
            "metadata": {
                "video_id": f"clip{n:05d}",
                "input_video_start_frame": "0",
                "input_video_end_frame": "300",
                "fps": "1.0",
            },
            "qa_type": "video_summary_gpt",
            "data_source": ("AVOS", "CoPESD", "NurViD")[n % 3],
            "struc_info": [],
        }
        for n in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--database-url")
    parser.add_argument(
        "--outage",
        type=float,
        default=0.0,
        help="also judge new captions with the stand-in stopped this many seconds mid-job",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="podium-bench-judge-") as tmp:
        folder = Path(tmp)
        setup_django(folder, args.database_url)
        from benchmark.services import ensure_plugin_benchmark, import_testset
        from judging import services
        from submissions.services import SubmissionDetails, create_submission, score_evaluation
        from tests.accounts.factories import UserFactory

        records = summary_records(args.items)
        ground_truth = folder / "gt.json"
        ground_truth.write_text(json.dumps(records))
        benchmark = ensure_plugin_benchmark("medvidbench")
        benchmark.judge_auto_start = False
        benchmark.daily_submission_limit = 100
        benchmark.save(update_fields=["judge_auto_start", "daily_submission_limit"])
        test_set = import_testset(benchmark, ground_truth)
        rows = [
            {
                "id": f"clip{n:05d}&&0&&300&&1.0",
                "qa_type": "video_summary_gpt",
                "prediction": f"Step {n}: the surgeon dissects tissue.",
            }
            for n in range(args.items)
        ]
        submission = create_submission(
            benchmark,
            owner=UserFactory(),
            details=SubmissionDetails(model_name="bench-judge"),
            predictions=json.dumps(rows).encode(),
        )
        evaluation = score_evaluation(submission.evaluations.get())
        assert evaluation.test_set_id == test_set.pk

        port = free_port()
        server = start_standin(port, args.latency)
        try:
            services.configure_endpoint(
                benchmark,
                name="stand-in",
                base_url=f"http://127.0.0.1:{port}/v1",
                model="standin-judge",
                api_key_env="",
                concurrency=args.concurrency,
            )
            job = services.start_judge(evaluation, enqueue=False)
            started = time.perf_counter()
            services.run_job(job.pk)
            wall = time.perf_counter() - started
            job.refresh_from_db()
            print(
                f"first run: {job.items_total} items, {job.calls} calls, status {job.status}, "
                f"wall {wall:.2f} s, {job.items_total / wall:.0f} items/s "
                f"(latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}; "
                f"floor {args.items * args.latency / args.concurrency:.1f} s)"
            )

            evaluation.refresh_from_db()
            rerun = services.rerun_judge(evaluation, actor=None)
            started = time.perf_counter()
            services.run_job(rerun.pk)
            wall = time.perf_counter() - started
            rerun.refresh_from_db()
            print(
                f"rerun:     {rerun.items_total} items, {rerun.calls} calls, status "
                f"{rerun.status}, wall {wall:.2f} s, {rerun.items_cached} from the cache"
            )

            if args.outage:
                server = outage_run(benchmark, args, port, server)
            if args.database_url:
                concurrent_jobs(benchmark, args)
            else:
                print("two jobs: skipped (two workers at once need --database-url, PostgreSQL)")
        finally:
            server.terminate()
            server.wait()


def start_standin(port: int, latency: float) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            *(sys.executable, "manage.py", "standin_judge"),
            *("--port", str(port), "--latency", str(latency)),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    server.stdout.readline()  # "... listening on ..."
    return server


def outage_run(benchmark, args, port: int, server: subprocess.Popen) -> subprocess.Popen:
    """Judge new captions while the stand-in is stopped for `--outage` seconds mid-job (issue
    10, point 2); print the published values beside an uninterrupted judgement's (the
    stand-in's verdicts aggregated without any job). Returns the restarted server."""
    import threading

    from benchmark.selectors import load_scoring_testset
    from core import private_files
    from judging import services
    from judging.standin import deterministic_verdict
    from plugins.medvidbench import scoring
    from plugins.medvidbench.scoring.judge import aggregate, build_items
    from submissions.services import SubmissionDetails, create_submission, score_evaluation
    from tests.accounts.factories import UserFactory

    rows = [
        {
            "id": f"clip{n:05d}&&0&&300&&1.0",
            "qa_type": "video_summary_gpt",
            "prediction": f"Step {n}: the judge goes down while this is judged.",
        }
        for n in range(args.items)
    ]
    submission = create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="bench-outage"),
        predictions=json.dumps(rows).encode(),
    )
    evaluation = score_evaluation(submission.evaluations.get())
    job = services.start_judge(evaluation, enqueue=False)
    worker = threading.Thread(target=services.run_job, args=(job.pk,))
    started = time.perf_counter()
    worker.start()
    time.sleep(min(2.0, args.items * args.latency / args.concurrency / 3))
    server.terminate()
    server.wait()
    time.sleep(args.outage)
    server = start_standin(port, args.latency)
    worker.join()
    wall = time.perf_counter() - started
    job.refresh_from_db()
    evaluation.refresh_from_db()
    test_set = load_scoring_testset(evaluation.test_set)
    predictions = scoring.load_predictions(
        private_files.read(submission.predictions_file), test_set
    )
    rubric = benchmark.rubric()
    items = build_items(test_set, predictions)
    expected = aggregate(
        test_set,
        items,
        {item.key: deterministic_verdict(item.prompt(rubric)) for item in items},
        rubric,
    ).metrics
    names = [name for name in ("DVC_llm", "VS_llm", "RC_llm") if expected[name] is not None]
    print(
        f"outage:    stand-in down {args.outage:g} s mid-job: status {job.status}, "
        f"{job.items_failed} failed, {job.calls} calls for {job.items_total} items, wall "
        f"{wall:.2f} s; published "
        + ", ".join(f"{name} {evaluation.metrics[name]!r}" for name in names)
        + "; uninterrupted "
        + ", ".join(f"{name} {expected[name]!r}" for name in names)
        + f"; identical: {all(evaluation.metrics[name] == expected[name] for name in names)}"
    )
    return server


def concurrent_jobs(benchmark, args) -> None:
    """Two jobs over the same (new, uncached) captions, each in its own thread and database
    connection as two workers would run them: calls made against distinct prompts."""
    import threading

    from django.db import connection

    from judging import services
    from submissions.services import SubmissionDetails, create_submission, score_evaluation
    from tests.accounts.factories import UserFactory

    rows = [
        {
            "id": f"clip{n:05d}&&0&&300&&1.0",
            "qa_type": "video_summary_gpt",
            "prediction": f"Step {n}: both workers see the surgeon clip the duct.",
        }
        for n in range(args.items)
    ]
    jobs = []
    for twin, name in enumerate(("bench-twin-a", "bench-twin-b")):
        # The same predictions, not the same bytes (a trailing newline more): a byte-identical
        # file another account published is refused as a duplicate (submissions.services).
        submission = create_submission(
            benchmark,
            owner=UserFactory(),
            details=SubmissionDetails(model_name=name),
            predictions=(json.dumps(rows) + "\n" * twin).encode(),
        )
        evaluation = score_evaluation(submission.evaluations.get())
        jobs.append(services.start_judge(evaluation, enqueue=False))

    def work(job_id: int) -> None:
        try:
            services.run_job(job_id)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(job.pk,)) for job in jobs]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    for job in jobs:
        job.refresh_from_db()
        job.evaluation.refresh_from_db()
    prompts = jobs[0].items.values("prompt_sha256").distinct().count()
    calls = sum(job.calls for job in jobs)
    same = all(
        jobs[0].evaluation.metrics[name] == jobs[1].evaluation.metrics[name]
        for name in ("DVC_llm", "VS_llm", "RC_llm")
    )
    print(
        f"two jobs:  {prompts} distinct prompts each, run at once: {calls} calls in all "
        f"({calls - prompts} duplicates, bound {args.concurrency}; "
        f"{' + '.join(str(job.calls) for job in jobs)}), statuses "
        f"{', '.join(job.status for job in jobs)}, wall {wall:.2f} s, "
        f"published values identical: {same}"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


if __name__ == "__main__":
    main()
