"""Benchmark: the intervals of one newly scored entry, as the worker computes them (issue 12).

    .venv/bin/python bench/intervals.py [--replicates 1000] [--runs 5] [--kind noisy] [--json]

Scores the demo test set (6,245 samples) once with the `--kind` predictions and seeded fake
verdicts for every judge item (all ten metrics have contributions), then times what the worker
adds to scoring a run: the clustered replicate weights of the test-set version (built once per
process and version: "cold"; cached afterwards), all ten metrics on the B replicates, the
intervals, and the stored form (the compressed contributions and the replicate matrix). It
also checks that the all-ones weights reproduce the published metrics bit for bit. Target
(2-core shared machine): <= 1 s per entry at B = 1,000, 6,245 samples, 10 metrics. The last
line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.pop("DATABASE_URL", None)

import django

django.setup()

from plugins.medvidbench.definition import SCORING_DATA_DIR  # noqa: E402
from plugins.medvidbench.demo_testset import generate_testset, make_predictions  # noqa: E402
from plugins.medvidbench.plugin import Contributions as MedVidBenchContributions  # noqa: E402
from plugins.medvidbench.plugin import plugin as medvidbench  # noqa: E402
from plugins.medvidbench.scoring import METRIC_NAMES, load_ground_truth, load_predictions  # noqa: E402
from plugins.medvidbench.scoring.contributions import (  # noqa: E402
    identity_weights,
    metric_values,
)
from plugins.medvidbench.scoring.evaluate import evaluate_with_contributions  # noqa: E402
from plugins.medvidbench.scoring.judge import (  # noqa: E402
    aggregate,
    build_items,
    judge_contributions,
    load_rubric,
    with_judge,
)
from submissions import intervals  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kind", default="noisy", choices=("perfect", "noisy", "prose"))
    parser.add_argument("--json", action="store_true", help="(the JSON line is always printed)")
    args = parser.parse_args()

    records = generate_testset(0)
    test_set = load_ground_truth(records)
    predictions = load_predictions(make_predictions(records, args.kind, 0), test_set)
    rubric = load_rubric(SCORING_DATA_DIR / "medvidbench_judge_prompt.txt")
    result, contributions = evaluate_with_contributions(
        test_set, predictions, nearest_class=lambda pairs: [len(q) % len(c) for q, c in pairs]
    )
    items = build_items(test_set, predictions)
    rng = random.Random(0)
    verdicts = {item.key: {a: rng.randint(1, 5) for a in rubric.aspects} for item in items}
    result = with_judge(result, aggregate(test_set, items, verdicts, rubric))
    contributions = contributions.with_metrics(
        judge_contributions(test_set, items, verdicts, rubric)
    )
    identity = metric_values(contributions, identity_weights(len(test_set)))
    exact = all(float(identity[name][0]) == result.metrics[name] for name in METRIC_NAMES)
    checksum = "0" * 64

    started = time.perf_counter()
    intervals.replicate_weights_for(checksum, test_set, args.replicates, medvidbench)
    cold_weights = time.perf_counter() - started

    walls, cpus, stored = [], [], 0
    for _ in range(args.runs):
        wall, cpu = time.perf_counter(), time.process_time()
        computed = intervals.compute_replicates(
            checksum,
            args.replicates,
            test_set,
            MedVidBenchContributions(contributions),
            plugin=medvidbench,
        )
        found = {key: intervals._interval(values) for key, values in computed.values.items()}
        keys, matrix = intervals._encode(computed.values)
        archive = computed.contributions.to_bytes()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        stored = len(archive) + len(matrix)
    with_interval = sum(1 for value in found.values() if value is not None)
    figures = {
        "samples": len(test_set),
        "replicates": args.replicates,
        "metrics": len(keys),
        "metrics_with_interval": with_interval,
        "identity_bit_for_bit": exact,
        "cold_weights_s": round(cold_weights, 3),
        "entry_median_s": round(statistics.median(walls), 3),
        "entry_best_s": round(min(walls), 3),
        "entry_best_cpu_s": round(min(cpus), 3),
        "first_entry_of_a_process_s": round(cold_weights + statistics.median(walls), 3),
        "stored_bytes": stored,
        "target_s": 1.0,
    }
    print(f"{figures['samples']:,} samples, B = {args.replicates:,}, {len(keys)} metrics")
    print(f"identity reproduces every published metric bit for bit: {exact}")
    print(f"weights of a test-set version (once per process): {cold_weights:.3f} s")
    print(
        f"one entry (replicates, intervals, stored form): median {figures['entry_median_s']} s, "
        f"best {figures['entry_best_s']} s ({figures['entry_best_cpu_s']} s CPU) over {args.runs}"
    )
    print(f"first entry of a worker process: {figures['first_entry_of_a_process_s']} s")
    print(f"stored per run: {stored / 1024:.0f} KiB; metrics with an interval: {with_interval}")
    for key in ("TAG_mIoU@0.3", "NAP_acc", "DVC_llm"):
        print(f"  {key}: {result.metrics[key]:.4f} in {found[key]}")
    print(json.dumps(figures))
    if not exact:
        sys.exit(1)


if __name__ == "__main__":
    np.seterr(all="raise")
    main()
