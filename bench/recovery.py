"""Benchmark: how long a scoring run whose worker is killed (kill -9) mid-scoring takes to be scored.

    .venv/bin/python bench/recovery.py [--rounds 3] [--answers 100] [--mode all]
                                       [--database-url postgres://postgres@127.0.0.1:5432/podium_bench_recovery]

Creates the PostgreSQL database named by --database-url if it does not exist (it must hold no
Podium data of value: it is migrated, filled and, when this script created it, dropped at the
end), and starts `manage.py qcluster` (one worker, the production timings of
config/settings/base.py: heartbeat 2 s, stale after 10 s, reapers every 5 s) on it. It first
scores one run undisturbed (the scoring time), then per round uploads a file of `--answers`
distinct 255-token next-action answers (about 7 s of scoring on a 2-core machine), waits until
a worker is scoring it, waits 1 s, and kills:

- mode `worker`: the worker process alone; the cluster's guard respawns one;
- mode `cluster`: the whole cluster (guard, pusher, monitor, worker); a second cluster starts;
- mode `remote`: as `cluster`, but the run's worker is then rewritten to a host name that is not
  this one, as if the dead worker had run on another machine: only its stale heartbeat can tell
  (the slowest path: stale after 10 s, reaped within 5 s more).

It prints, per round, the time from the kill until the run is `scored` and whether it was
scored exactly once (one `scored` audit row, two attempts), then the medians, and last one JSON
line. Target (issue 10, point 5): <= 30 s with a worker available.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pg_databases import create_database, drop_database  # noqa: E402  (bench/ is first on sys.path)

from tests.processes import stop_process_group  # noqa: E402

SETTINGS = "config.settings.dev"  # base.py's timings; no test overrides
MODES = ("worker", "cluster", "remote")
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/podium_bench_recovery"


def environment(folder: Path, database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": SETTINGS,
        "DATABASE_URL": database_url,
        "PODIUM_VAR_DIR": str(folder),
        "PODIUM_PRIVATE_DIR": str(folder / "private"),
        "Q_WORKERS": "1",
        "LOG_LEVEL": "WARNING",
    }


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def start_cluster(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def answers(count: int, salt: int) -> list[str]:
    """Distinct 255-token answers; `salt` keeps rounds apart (nothing is shared between runs)."""
    return [
        f"Answer {salt}-{n}: "
        + " ".join(
            f"the surgeon then moves instrument {n} towards tissue layer {k}" for k in range(25)
        )
        for n in range(count)
    ]


def wait_for(condition, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise SystemExit(message)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--answers", type=int, default=100)
    parser.add_argument("--mode", choices=(*MODES, "all"), default="all")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--keep", action="store_true", help="do not drop a database created here")
    args = parser.parse_args()

    created = create_database(args.database_url, if_missing=True)
    try:
        with tempfile.TemporaryDirectory(prefix="podium-bench-recovery-") as tmp:
            run(args, environment(Path(tmp), args.database_url), Path(tmp))
    finally:
        if created and not args.keep:
            from django.db import connections

            connections.close_all()
            drop_database(args.database_url)


def run(args: argparse.Namespace, env: dict[str, str], folder: Path) -> None:
    setup_django(env)
    from benchmark.selectors import active_testset, load_scoring_testset
    from benchmark.services import ensure_plugin_benchmark, import_testset
    from core.models import AuditEvent
    from submissions.enums import EvaluationStatus
    from submissions.models import Evaluation
    from submissions.services import SubmissionDetails, create_submission
    from tests.accounts.factories import UserFactory
    from tests.benchmark.scoring.factories import gt_record

    benchmark = ensure_plugin_benchmark("medvidbench")
    benchmark.daily_submission_limit = 1000
    benchmark.save(update_fields=["daily_submission_limit"])
    records = [gt_record("next_action", "tying", dataset="AVOS") for _ in range(args.answers)]
    ground_truth = folder / "gt.json"
    ground_truth.write_text(json.dumps(records))
    import_testset(benchmark, ground_truth)
    samples = load_scoring_testset(active_testset(benchmark)).samples
    owner = UserFactory()

    def upload(salt: int) -> Evaluation:
        rows = [
            {"id": sample.id, "qa_type": sample.qa_type, "prediction": text}
            for sample, text in zip(samples, answers(args.answers, salt), strict=True)
        ]
        submission = create_submission(
            benchmark,
            owner=owner,
            details=SubmissionDetails(model_name=f"bench-recovery-{salt}", publish=False),
            predictions=json.dumps(rows).encode(),
        )
        return submission.evaluations.get()

    def status(evaluation: Evaluation) -> tuple[str, str, int]:
        return Evaluation.objects.values_list("status", "worker", "attempts").get(pk=evaluation.pk)

    def scored_once(evaluation: Evaluation) -> bool:
        scored = AuditEvent.objects.filter(
            object_id=str(evaluation.pk), action="submissions.evaluation.scored"
        ).count()
        return scored == 1 and status(evaluation)[2] == 2

    cluster = start_cluster(env)
    results: dict[str, list[float]] = {mode: [] for mode in MODES}
    once: list[bool] = []
    try:
        baseline = upload(0)
        wait_for(lambda: status(baseline)[0] == EvaluationStatus.SCORED, 300, "no first score")
        baseline.refresh_from_db()
        scoring = (baseline.scored_at - baseline.scoring_started_at).total_seconds()
        print(f"undisturbed scoring of {args.answers} answers: {scoring:.1f} s")

        modes = MODES if args.mode == "all" else (args.mode,)
        salt = 0
        for mode in modes:
            for _ in range(args.rounds):
                salt += 1
                evaluation = upload(salt)
                wait_for(
                    lambda evaluation=evaluation: status(evaluation)[0] == EvaluationStatus.SCORING,
                    120,
                    "scoring never started",
                )
                time.sleep(1.0)
                current, worker, _ = status(evaluation)
                if current != EvaluationStatus.SCORING:
                    raise SystemExit("scored before the kill: raise --answers")
                if mode == "worker":
                    os.kill(int(worker.rpartition(":")[2]), signal.SIGKILL)
                    killed = time.monotonic()
                else:
                    os.killpg(cluster.pid, signal.SIGKILL)
                    cluster.wait()
                    killed = time.monotonic()
                    if mode == "remote":
                        elsewhere = f"another-host:{worker.rpartition(':')[2]}"
                        Evaluation.objects.filter(pk=evaluation.pk).update(worker=elsewhere)
                    cluster = start_cluster(env)
                wait_for(
                    lambda evaluation=evaluation: status(evaluation)[0] == EvaluationStatus.SCORED,
                    300,
                    "the run was never scored again",
                )
                recovery = time.monotonic() - killed
                results[mode].append(recovery)
                once.append(scored_once(evaluation))
                print(
                    f"{mode:7} killed -> scored in {recovery:5.1f} s "
                    f"(exactly once: {'yes' if once[-1] else 'NO'})"
                )
    finally:
        stop_process_group(cluster)

    summary = {
        "bench": "recovery",
        "answers": args.answers,
        "undisturbed_scoring_s": round(scoring, 2),
        **{f"{mode}_killed_s": [round(value, 2) for value in results[mode]] for mode in MODES},
        **{
            f"median_{mode}_killed_s": round(statistics.median(results[mode]), 2)
            for mode in MODES
            if results[mode]
        },
        "max_s": round(max(value for values in results.values() for value in values), 2),
        "scored_exactly_once": all(once),
        "target_s": 30,
    }
    for mode in MODES:
        if results[mode]:
            print(f"median, {mode} killed: {statistics.median(results[mode]):.1f} s")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
