"""Benchmark: the demo's verify path at full size, as `make run` sets it up.

    .venv/bin/python bench/demo_verify.py [--database-url postgres://...] [--concurrency 16]
                                          [--judge-latency 0.05]

In a temporary folder (PODIUM_VAR_DIR, so the SQLite database `make run` uses, or the empty
PostgreSQL database named by --database-url: use a scratch one), with the development
settings: writes the demo files (6,245 questions), the frames a re-run sends (timed on their
own), runs `load_demo` with the stand-in model's URL, and starts what scripts/run.sh starts,
each in its own process: the stand-in judge (latency as in the Makefile), the stand-in model
(`manage.py standin_model`) and a worker (`manage.py qcluster`). Once the worker has judged the
demo entries, it walks the path a maintainer walks, through the same services the admin calls:
upload `predictions_new.json` under a new name (scored and judged by the worker), nominate,
record the contact and the access, register the stand-in model, start the re-run and wait for
the worker to finish it (answers, scoring, the judge of its captions, the report), verify from
the report, and read the entry's rank on the Official board.

Targets (issue 10, point 6): the re-run of the 6,245 questions in under a minute; frames small
and quick to write. Prints one line per figure, then one JSON line with all of them.
"""

from __future__ import annotations

import argparse
import io
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


def disk_bytes(root: Path) -> tuple[int, int, int]:
    """(paths, distinct files, bytes on disk counting each inode once) under `root`."""
    inodes: dict[int, int] = {}
    paths = 0
    for path in root.rglob("*.jpg"):
        stat = path.stat()
        inodes[stat.st_ino] = stat.st_blocks * 512
        paths += 1
    return paths, len(inodes), sum(inodes.values())


def wait_for(condition, *, timeout: float, what: str, poll: float = 0.25) -> float:
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)
    return time.perf_counter() - started


def start(args: list[str], env: dict[str, str], *, ready: str | None = None) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE if ready else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    if ready:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url")
    parser.add_argument("--concurrency", type=int, default=None, help="the demo endpoint's")
    parser.add_argument("--judge-latency", type=float, default=0.05)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="podium-bench-demo-") as tmp:
        folder = Path(tmp)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.dev",
            "PODIUM_VAR_DIR": str(folder),
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
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from benchmark.plugins import plugin_for
    from benchmark.services import ensure_plugin_benchmark
    from judging.models import JudgeJob
    from plugins.medvidbench.demo_testset import DEMO_FILENAMES, NEW_MODEL, write_demo_files
    from submissions.demo import load_demo
    from submissions.enums import EvaluationStatus, VerificationStatus
    from submissions.models import BoardEntry, Evaluation
    from submissions.services import SubmissionDetails, create_submission, set_verification_status
    from verifying import demo, services
    from verifying.config import media_root
    from verifying.enums import RerunStatus

    figures: dict[str, object] = {}

    def figure(name: str, value: object, text: str) -> None:
        figures[name] = round(value, 2) if isinstance(value, float) else value
        print(text)

    call_command("migrate", verbosity=0)
    call_command("setup_benchmarks", stdout=io.StringIO())  # as the Makefile's `run` does
    demo_dir = folder / "demo"
    started = time.perf_counter()
    write_demo_files(demo_dir)
    figure("demo_files_s", time.perf_counter() - started, f"demo files:   {figures_s(started)}")

    benchmark = ensure_plugin_benchmark("medvidbench")
    plugin = plugin_for(benchmark)
    root = media_root(benchmark, plugin.rerun).local_folder()  # the local store's frames/
    demo_files = plugin.write_demo(demo_dir)
    test_set = plugin.read_test_set(demo_files.test_set.read_bytes())
    started = time.perf_counter()
    # What load_demo's hook does (verifying/demo.py), timed on its own; load_demo then finds
    # the frames in place.
    plugin.rerun.write_demo_media(demo_files, test_set, root, benchmark.rerun_max_frames)
    frames_s = time.perf_counter() - started
    paths, files, size = disk_bytes(root)
    figures.update(frames_paths=paths, frames_files=files, frames_disk_mb=round(size / 1e6, 1))
    figure(
        "frames_s",
        frames_s,
        f"frames:       {frames_s:.2f} s for {paths:,} frame paths: {files:,} PNG files "
        f"(one per clip) and hard links, {size / 1e6:.1f} MB on disk",
    )

    judge_port, model_port = free_port(), free_port()
    model_url = f"http://127.0.0.1:{model_port}/v1"
    for benchmark_key in ("medvidbench", "clinicalqa"):  # as the Makefile's `run` does
        call_command(
            "configure_judge",
            benchmark=benchmark_key,
            name="Stand-in judge (bench)",
            base_url=f"http://127.0.0.1:{judge_port}/v1",
            model="standin-judge",
            api_key_env="",
            concurrency=16,
            stdout=io.StringIO(),
        )
    started = time.perf_counter()
    load_demo(demo_dir, standin_model_url=model_url)
    figure("load_demo_s", time.perf_counter() - started, f"load_demo:    {figures_s(started)}")

    processes = []
    try:
        processes.append(
            start(
                ["standin_judge", "--port", str(judge_port), "--latency", str(args.judge_latency)],
                env,
                ready="listening on",
            )
        )
        started = time.perf_counter()
        processes.append(
            start(
                ["standin_model", "--port", str(model_port), "--demo-dir", str(demo_dir)],
                env,
                ready="listening on",
            )
        )
        figure(
            "standin_model_ready_s",
            time.perf_counter() - started,
            f"stand-in model ready (answers built): {figures_s(started)}",
        )
        processes.append(start(["qcluster"], env))

        def judges_idle() -> bool:
            return not JudgeJob.objects.filter(status__in=["queued", "running"]).exists()

        waited = wait_for(judges_idle, timeout=600, what="the demo entries' judge jobs")
        figure("demo_judge_s", waited, f"worker judged the demo entries: {waited:.1f} s")

        # The path: upload, scored and judged by the worker.
        started = time.perf_counter()
        submitter = get_user_model().objects.create_user("bench-submitter")
        submission = create_submission(
            benchmark,
            owner=submitter,
            details=SubmissionDetails(model_name="Bench demo upload", institution="bench"),
            predictions=(demo_dir / DEMO_FILENAMES[NEW_MODEL]).read_bytes(),
        )
        run_ = Evaluation.objects.get(submission=submission)

        def complete() -> bool:
            run_.refresh_from_db()
            if run_.status == EvaluationStatus.FAILED:
                raise SystemExit(f"scoring failed: {run_.error_message}")
            return run_.status == EvaluationStatus.COMPLETE

        wait_for(complete, timeout=600, what="the upload's scoring and judge")
        figure(
            "upload_scored_judged_s",
            time.perf_counter() - started,
            f"upload scored and judged by the worker: {figures_s(started)}",
        )

        for status in (
            VerificationStatus.NOMINATED,
            VerificationStatus.CONTACTED,
            VerificationStatus.ACCESS_GRANTED,
        ):
            set_verification_status(submission, status, actor=None)
        endpoint = services.register_endpoint(
            submission,
            actor=None,
            base_url=model_url,
            model=demo.standin_model_name(plugin.key, demo_dir / DEMO_FILENAMES[NEW_MODEL]),
            **{
                **demo.DEMO_ENDPOINT_SETTINGS,
                **({"concurrency": args.concurrency} if args.concurrency else {}),
            },
        )
        started = time.perf_counter()
        job = services.start_rerun(submission, endpoint, actor=None)

        def finished() -> bool:
            job.refresh_from_db()
            return job.state in (RerunStatus.DONE, RerunStatus.FAILED, RerunStatus.CANCELLED)

        wait_for(finished, timeout=900, what="the re-run")
        rerun_s = time.perf_counter() - started
        if job.state != RerunStatus.DONE:
            raise SystemExit(f"the re-run ended {job.status}: {job.message}")
        figures.update(
            questions=job.items_total,
            concurrency=endpoint.concurrency,
            max_frames=job.max_frames,
            all_within=job.report["all_within"],
            worst_difference=max(
                (
                    abs(row["difference"])
                    for row in job.report["rows"]
                    if row["difference"] is not None
                ),
                default=None,
            ),
        )
        busy = (job.finished_at - job.started_at).total_seconds()
        figures["rerun_worker_s"] = round(busy, 2)
        figure(
            "rerun_s",
            rerun_s,
            f"re-run:       {rerun_s:.1f} s from start to report ({busy:.1f} s in the worker) for "
            f"{job.items_total:,} questions, up to {job.max_frames} frames each, concurrency "
            f"{endpoint.concurrency}; {job.items_failed} failed; report "
            f"{'within' if job.report['all_within'] else 'NOT within'} ±{job.report['tolerance']:g}"
            f" ({job.report['compared']} compared, {job.report['pending']} pending); "
            f"{job.report.get('judge', '')}",
        )

        started = time.perf_counter()
        services.verify_from_report(job, actor=None)
        entry = None

        def on_board() -> bool:
            nonlocal entry
            entry = BoardEntry.objects.filter(submission=submission, board="official").first()
            return entry is not None

        wait_for(on_board, timeout=120, what="the Official board")
        figure(
            "verify_s",
            time.perf_counter() - started,
            f"verify from report to the Official board: {figures_s(started)} (rank {entry.rank})",
        )
        figures["official_rank"] = entry.rank
    finally:
        for process in reversed(processes):
            stop(process)
    print(json.dumps(figures))


def figures_s(started: float) -> str:
    return f"{time.perf_counter() - started:.2f} s"


if __name__ == "__main__":
    main()
