"""Benchmark: MedSG-Bench scoring of a 9,630-item file, and its bootstrap aggregation (issue 14).

    .venv/bin/python bench/medsg.py [--runs 5] [--replicates 1000] [--seed 0] [--json]

Builds a synthetic test set of the real size (9,630 items; referring 1,482 and patch 1,000 as
the spec gives, the rest split evenly over the other six tasks) and a predictions file of
pixel texts "(x1,y1),(x2,y2)" with noise and one answer in ten without a box, both as JSON bytes
in memory. Times load + check + score (`load_testset`, `load_predictions`, `score`) from the
bytes, median of `--runs`, then `MedSGContributions.compute` on a (B, 9,630) batch of
Poisson(1) weights (median of `--runs`), and checks the identity row against the published
values. The machine is shared, so timings are noisy. With --json the last line is one JSON
object: score_s, bootstrap_s, items.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plugins.medsg.scoring import (
    FLAT_METRIC_KEYS,
    TASKS,
    load_predictions,
    load_testset,
    score_with_contributions,
)

ITEMS = 9_630
KNOWN_COUNTS = {"referring": 1_482, "patch": 1_000}


def task_counts() -> dict[str, int]:
    others = [task for task in TASKS if task not in KNOWN_COUNTS]
    left = ITEMS - sum(KNOWN_COUNTS.values())
    counts = {task: left // len(others) for task in others}
    for task in others[: left % len(others)]:
        counts[task] += 1
    return {task: KNOWN_COUNTS.get(task, counts.get(task, 0)) for task in TASKS}


def build_files(seed: int) -> tuple[bytes, bytes]:
    rng = random.Random(f"bench-medsg:{seed}")
    records, rows = [], []
    for task, count in task_counts().items():
        for _ in range(count):
            width, height = (
                (rng.choice((224, 256)), rng.choice((160, 192)))
                if task == "multi_view"
                else (336, 336)
            )
            x1, y1 = rng.randint(0, width // 2), rng.randint(0, height // 2)
            x2, y2 = x1 + rng.randint(10, width // 2), y1 + rng.randint(10, height // 2)
            record = {
                "task": task,
                "question": "Image-1: <image>\nImage-2: <image>\nLocate the lesion.",
                "images": [f"{task}/{len(records)}_1.png", f"{task}/{len(records)}_2.png"],
                "answer": [x1, y1, x2, y2],
            }
            if task == "multi_view":
                record["size"] = [width, height]
            if rng.random() < 0.1:
                prediction = "I cannot find the lesion."
            else:
                moved = [round(value + rng.gauss(0, 8)) for value in (x1, y1, x2, y2)]
                prediction = f"({moved[0]},{moved[1]}),({moved[2]},{moved[3]})"
            rows.append({"index": len(records), "task": task, "prediction": prediction})
            records.append(record)
    return json.dumps(records).encode(), json.dumps(rows).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    testset_bytes, predictions_bytes = build_files(args.seed)
    print(
        f"test set {len(testset_bytes) / 1e6:.1f} MB, predictions {len(predictions_bytes) / 1e6:.1f} MB"
    )
    score_times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        test_set = load_testset(testset_bytes)
        predictions = load_predictions(predictions_bytes, test_set)
        result, contributions = score_with_contributions(test_set, predictions, "pixel")
        score_times.append(time.perf_counter() - started)
    print(
        f"load + check + score, {len(test_set):,} items: median {statistics.median(score_times):.3f} s, best {min(score_times):.3f} s"
    )
    print(
        f"IoU {result.metrics['IoU']:.4f}, ACC@0.5 {result.metrics['ACC@0.5']:.4f}, unparsed {result.format_report.unparsed}"
    )

    weights = (
        np.random.default_rng(args.seed)
        .poisson(1.0, size=(args.replicates, len(test_set)))
        .astype(np.int64)
    )
    bootstrap_times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        values = contributions.compute(weights)
        bootstrap_times.append(time.perf_counter() - started)
    identity = contributions.compute(np.ones((1, len(test_set)), dtype=np.int64))[0]
    published = result.flat_metrics()
    same = all(identity[FLAT_METRIC_KEYS.index(key)] == value for key, value in published.items())
    print(
        f"bootstrap, {len(FLAT_METRIC_KEYS)} metrics x B={args.replicates}: median "
        f"{statistics.median(bootstrap_times):.3f} s, best {min(bootstrap_times):.3f} s "
        f"({values.shape}); identity row == published: {same}"
    )
    if not same:
        raise SystemExit("the identity replicate differs from the published values")
    if args.json:
        print(
            json.dumps(
                {
                    "score_s": round(statistics.median(score_times), 4),
                    "bootstrap_s": round(statistics.median(bootstrap_times), 4),
                    "items": len(test_set),
                }
            )
        )


if __name__ == "__main__":
    main()
