"""Benchmark: `manage.py score` on a demo predictions file as a whole process (issue 16).

    .venv/bin/python bench/score_cli.py [--runs 7] [--kind noisy] [--json]

Writes the MedVidBench demo files (`write_demo_files`, seed 0) to a temporary folder and times:

- the whole process, `python manage.py score --ground-truth GT PREDICTIONS --format json`,
  median wall and CPU (user + sys, from the child's rusage) of `--runs`, and its peak RSS.
  As a deployment runs it: Python's bytecode cached (a throwaway PYTHONPYCACHEPREFIX, filled
  by an untimed run without a label store; this machine's environment sets
  PYTHONDONTWRITEBYTECODE, which would make every run compile the project again) and the NAP
  label store filled (plugins/medvidbench/scoring/label_store.py; a throwaway
  PODIUM_NAP_LABEL_STORE). The first run with the store still empty, which fills it, is
  reported on its own line;
- the start-up alone: `manage.py score --help` (Django set up, the plugins loaded, nothing read);
- warm in-process scoring: in this process, with the ground truth loaded and the encoder and
  its label lists warm, `check_predictions` on the file's bytes plus `score` (the seven metrics
  and the NAP embeddings of the file's answers, computed afresh each time), median of `--runs`.

Every process run must print the same bytes. The machine is shared: CPU time shows the cost
when the cores are busy, and the load average is printed. With --json the last line is one
JSON object: process_s, process_cpu_s, warm_ms, warm_cpu_ms, peak_rss_mb, first_run_s,
startup_s, startup_cpu_s, load_average, runs, kind.

Targets (issue 16, 2-core machine): process <= 1.2 s, warm <= 250 ms, peak RSS <= 250 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plugins.medvidbench.demo_testset import write_demo_files  # noqa: E402


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, float, bytes]:
    """(wall s, CPU s, peak RSS MB, stdout) of one child process; a failure stops the bench.
    CPU and RSS come from RUSAGE_CHILDREN, so children run one at a time: CPU is the increase,
    and ru_maxrss is the largest child so far (KB on Linux)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr.decode(errors='replace')[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024, done.stdout


def warm_scoring(ground_truth: Path, predictions: Path, runs: int) -> dict[str, float]:
    """Median wall and CPU milliseconds of check + score in this process, everything warm:
    with the file's answers new to the encoder (its answer memo emptied and the label store's
    answers out of reach before each run, so they are embedded afresh) and with them seen
    before (the memo keeps them from the previous run)."""
    from plugins.medvidbench.plugin import plugin
    from plugins.medvidbench.scoring.embedding import default_encoder
    from plugins.medvidbench.scoring.label_store import AnswerMemo

    test_set = plugin.read_test_set(ground_truth.read_bytes())
    data = predictions.read_bytes()
    encoder = default_encoder()

    def score():
        checked = plugin.check_predictions(data, test_set, options={}, max_prediction_chars=None)
        return plugin.score(test_set, checked, options={})

    def timed(before_each) -> tuple[float, float]:
        wall, cpu = [], []
        for _ in range(runs):
            before_each()
            start, start_cpu = time.perf_counter(), time.process_time()
            score()
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        return statistics.median(wall) * 1000, statistics.median(cpu) * 1000

    def report() -> str:
        return json.dumps(score()[0].to_dict(), sort_keys=True)

    expected = report()  # the class lists' embeddings into the encoder's memory
    store = encoder._label_store
    encoder._label_store = None  # lists come from memory; answers are computed

    def forget_answers():
        encoder._answers = AnswerMemo(encoder._answers.capacity)

    new_wall, new_cpu = timed(forget_answers)
    if report() != expected:
        sys.exit("scoring with the answers computed afresh gave another result")
    encoder._label_store = store
    seen_wall, seen_cpu = timed(lambda: None)
    return {
        "warm_ms": new_wall,
        "warm_cpu_ms": new_cpu,
        "warm_seen_ms": seen_wall,
        "warm_seen_cpu_ms": seen_cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--kind", choices=("perfect", "noisy", "prose"), default="noisy")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    with tempfile.TemporaryDirectory(prefix="podium-score-cli-") as folder:
        folder = Path(folder)
        paths = write_demo_files(folder / "demo", seed=0)
        ground_truth, predictions = paths["ground_truth"], paths[args.kind]
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            PYTHONPYCACHEPREFIX=str(folder / "pycache"),
            PODIUM_NAP_LABEL_STORE=str(folder / "nap-labels"),
            DJANGO_SETTINGS_MODULE="config.settings.dev",
        )
        os.environ["PODIUM_NAP_LABEL_STORE"] = env["PODIUM_NAP_LABEL_STORE"]
        score = [sys.executable, "manage.py", "score", "--ground-truth", str(ground_truth)]
        score += [str(predictions), "--format", "json"]

        measure(score, {**env, "PODIUM_NAP_LABEL_STORE": "off"})  # compiles the bytecode
        first_wall, first_cpu, _, expected = measure(score, env)

        def forget_answers():  # the label store's answers: as for a file never scored here
            for folder_of_answers in (folder / "nap-labels").glob("*/sequences"):
                shutil.rmtree(folder_of_answers)

        def processes(before_each) -> tuple[list[float], list[float], list[float]]:
            walls, cpus, peaks = [], [], []
            for _ in range(args.runs):
                before_each()
                wall, cpu, peak, output = measure(score, env)
                if output != expected:
                    sys.exit("manage.py score printed other bytes on a later run")
                walls.append(wall)
                cpus.append(cpu)
                peaks.append(peak)
            return walls, cpus, peaks

        walls, cpus, peaks = processes(forget_answers)
        seen_walls, seen_cpus, seen_peaks = processes(lambda: None)
        help_command = [sys.executable, "manage.py", "score", "--help"]
        startup = [measure(help_command, env)[:2] for _ in range(args.runs)]
        warm = warm_scoring(ground_truth, predictions, args.runs)

    figures = {
        "process_s": round(statistics.median(walls), 3),
        "process_cpu_s": round(statistics.median(cpus), 3),
        "process_seen_s": round(statistics.median(seen_walls), 3),
        "process_seen_cpu_s": round(statistics.median(seen_cpus), 3),
        **{key: round(value, 1) for key, value in warm.items()},
        "peak_rss_mb": round(max(peaks + seen_peaks), 1),
        "first_run_s": round(first_wall, 3),
        "first_run_cpu_s": round(first_cpu, 3),
        "startup_s": round(statistics.median(wall for wall, _ in startup), 3),
        "startup_cpu_s": round(statistics.median(cpu for _, cpu in startup), 3),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "runs": args.runs,
        "kind": args.kind,
    }
    print(f"manage.py score on the {args.kind} demo file (6,245 rows), medians of {args.runs}")
    print(f"load average at start / end: {load_before:.1f} / {os.getloadavg()[0]:.1f} (2 cores)")
    print(f"{'':46} {'wall':>9} {'cpu':>9}")
    rows = [
        ("whole process, answers new", figures["process_s"], figures["process_cpu_s"]),
        (
            "whole process, answers seen before",
            figures["process_seen_s"],
            figures["process_seen_cpu_s"],
        ),
        ("first run (label store empty)", figures["first_run_s"], figures["first_run_cpu_s"]),
        ("start-up alone (manage.py score --help)", figures["startup_s"], figures["startup_cpu_s"]),
        ("warm in-process, answers new", warm["warm_ms"] / 1000, warm["warm_cpu_ms"] / 1000),
        (
            "warm in-process, answers seen before",
            warm["warm_seen_ms"] / 1000,
            warm["warm_seen_cpu_ms"] / 1000,
        ),
    ]
    for label, wall, cpu in rows:
        print(f"{label:46} {wall * 1000:7.0f} ms {cpu * 1000:6.0f} ms")
    print(f"peak RSS of manage.py score: {figures['peak_rss_mb']:.0f} MB")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
