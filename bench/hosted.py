"""Benchmark: hosted evaluation of the 6,245 MedVidBench demo questions against the stand-in
model with 200 ms per answer (issue 15, "Numbers").

    .venv/bin/python bench/hosted.py [--latency 0.2] [--concurrency 16 32] [--questions N]
                                     [--database-url postgres://...] [--json]

In a temporary folder (PODIUM_VAR_DIR: a throwaway SQLite database, or the empty PostgreSQL
database named by --database-url: use a scratch one), with the test settings: writes the
MedVidBench demo files and the frames a question sends (8 per question), registers
MedVidBench with hosted evaluation on (its plugin, with the definition's hosted settings
changed: the rate cap out of the way, so the endpoint is the bound), starts the stand-in model
(`manage.py standin_model --latency`, in its own process as a real endpoint would be) and, per
concurrency, submits a request for `standin-noisy` and runs it in this process through the
same `hosting.runner.run_request` the worker calls, timing it. The entry it becomes is created
as an upload's (checked, stored, queued for scoring; no worker scores it here).

Prints, per concurrency: the questions, the answering time and questions/s beside the bound
concurrency / latency (the engine's efficiency), the finish (predictions file and entry) time,
and whether the predictions file is byte-identical across concurrencies (no published number
may depend on the order answers arrive in). With --json a JSON line with every figure comes
last.

Target (issue 15): bounded by the endpoint (concurrency x latency), as the judge is.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(args: list[str], env: dict[str, str], *, ready: str) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    line = process.stdout.readline()
    if ready not in line:
        raise SystemExit(f"{args[0]} did not start: {line!r}")
    return process


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class HostedMedVidBench:
    """MedVidBench's plugin with hosted evaluation on and no rate or token cap in the way."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.definition = dataclasses.replace(
            inner.definition,
            hosted_evaluation=True,
            hosted_requests_per_minute=10_000_000,
            hosted_max_tokens=10**12,
        )

    def __getattr__(self, name):
        return getattr(self._inner, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--questions", type=int, default=None, help="the first N only")
    parser.add_argument("--database-url")
    parser.add_argument("--json", action="store_true", help="a JSON line with every figure, last")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="podium-bench-hosted-") as tmp:
        folder = Path(tmp)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "PODIUM_VAR_DIR": str(folder),
            "PODIUM_PRIVATE_DIR": str(folder / "private"),
            "LOG_LEVEL": "WARNING",
        }
        if args.database_url:
            env["DATABASE_URL"] = args.database_url
        else:
            env.pop("DATABASE_URL", None)
        os.environ.clear()
        os.environ.update(env)
        import django

        django.setup()
        run(folder, env, args)


def run(folder: Path, env: dict[str, str], args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from benchmark.plugins import get_plugin, registered
    from benchmark.selectors import active_testset, load_scoring_testset
    from benchmark.services import ensure_benchmark, import_testset
    from core import private_files
    from hosting import runner, services
    from hosting.enums import RequestStatus
    from submissions.services import SubmissionDetails

    figures: dict[str, object] = {"latency_s": args.latency}

    def say(text: str) -> None:
        print(text, flush=True)

    settings.PODIUM_PRIVATE_DIR = folder / "private"
    call_command("migrate", verbosity=0)
    plugin = HostedMedVidBench(get_plugin("medvidbench"))
    demo_dir = folder / "demo"
    started = time.perf_counter()
    files = plugin.write_demo(demo_dir)
    ground_truth = files.test_set
    if args.questions:
        records = json.loads(ground_truth.read_bytes())[: args.questions]
        ground_truth = folder / "ground_truth_first.json"
        ground_truth.write_text(json.dumps(records))
    with registered(plugin):
        benchmark = ensure_benchmark(plugin.definition)
        import_testset(benchmark, ground_truth)
        test_set = load_scoring_testset(active_testset(benchmark))
        root = Path(settings.PODIUM_PRIVATE_DIR) / "frames"  # the local store's frames/
        plugin.rerun.write_demo_media(files, test_set, root, benchmark.rerun_max_frames)
        say(f"demo files and frames: {time.perf_counter() - started:.1f} s")

        port = free_port()
        started = time.perf_counter()
        standin = start(
            [
                "standin_model",
                "--port",
                str(port),
                "--demo-dir",
                str(demo_dir),
                "--latency",
                str(args.latency),
            ],
            env,
            ready="listening on",
        )
        say(f"stand-in model ready (answers built): {time.perf_counter() - started:.1f} s")
        owner = get_user_model().objects.create_user("bench-hosted")
        digests = []
        try:
            for concurrency in args.concurrency:
                request = services.submit_request(
                    benchmark,
                    owner=owner,
                    actor=None,
                    details=SubmissionDetails(
                        model_name=f"Bench hosted c{concurrency}", publish=False
                    ),
                    base_url=f"http://127.0.0.1:{port}/v1",
                    model="standin-noisy",
                    concurrency=concurrency,
                    enqueue=False,
                )
                finish_times: list[float] = []
                finish = runner.finish_request

                def timed_finish(request, finish=finish, times=finish_times):
                    started = time.perf_counter()
                    try:
                        return finish(request)
                    finally:
                        times.append(time.perf_counter() - started)

                runner.finish_request = timed_finish  # to tell answering from finishing
                try:
                    started = time.perf_counter()
                    runner.run_request(request.pk)
                    ended = time.perf_counter()
                finally:
                    runner.finish_request = finish
                request.refresh_from_db()
                if request.status != RequestStatus.DONE:
                    raise SystemExit(f"the request ended {request.status}: {request.message}")
                finishing = sum(finish_times)
                answering = ended - started - finishing
                rate = request.items_total / answering
                bound = concurrency / args.latency
                digest = hashlib.sha256(private_files.read(request.submission.predictions_file))
                digests.append(digest.hexdigest())
                figures[f"c{concurrency}"] = {
                    "questions": request.items_total,
                    "answering_s": round(answering, 2),
                    "questions_per_s": round(rate, 1),
                    "bound_per_s": round(bound, 1),
                    "efficiency": round(rate / bound, 3),
                    "finish_s": round(finishing, 2),
                    "calls": request.calls,
                    "failed": request.items_failed,
                }
                say(
                    f"concurrency {concurrency:>3}: {request.items_total:,} questions answered in "
                    f"{answering:.1f} s = {rate:.1f} questions/s; bound {concurrency} / "
                    f"{args.latency:g} s = {bound:.1f}/s ({rate / bound:.0%}); {request.calls:,} "
                    f"calls, {request.items_failed} failed; predictions file and entry "
                    f"{finishing:.1f} s"
                )
        finally:
            stop(standin)
    identical = len(set(digests)) == 1
    figures["predictions_identical"] = identical
    say(f"predictions file byte-identical across concurrencies {args.concurrency}: {identical}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
