"""Benchmark: the ten metrics recomputed under 1,000 bootstrap-like replicates (issue 12).

    .venv/bin/python bench/contributions.py [--replicates 1000] [--runs 5] [--seed 0]
                                             [--kind perfect]

Scores the demo test set (6,245 samples, `plugins.medvidbench.demo_testset`) once with the `--kind`
predictions (the perfect ones have the most judge items: every event pair at every threshold),
a stand-in for the MiniLM encoder and seeded fake verdicts for every judge item, then times
`metric_values` on a (B, 6,245) batch of Poisson(1) weights, all ten metrics: the median and
best wall time over the runs, per metric at the best run, and the best CPU time. It also
checks that the all-ones row reproduces the published values bit for bit. Target (2-core
shared machine): <= 1 s for 10 metrics x B=1,000. The machine is shared, so timings are
noisy. The last line is one JSON object with the figures.
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

from plugins.medvidbench.definition import SCORING_DATA_DIR
from plugins.medvidbench.demo_testset import generate_testset, make_predictions
from plugins.medvidbench.scoring import METRIC_NAMES, load_ground_truth, load_predictions
from plugins.medvidbench.scoring.contributions import metric_values
from plugins.medvidbench.scoring.evaluate import evaluate_with_contributions
from plugins.medvidbench.scoring.judge import (
    aggregate,
    build_items,
    judge_contributions,
    load_rubric,
    with_judge,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kind", default="perfect", choices=("perfect", "noisy", "prose"))
    args = parser.parse_args()

    records = generate_testset(args.seed)
    test_set = load_ground_truth(records)
    predictions = load_predictions(make_predictions(records, args.kind, args.seed), test_set)
    rubric = load_rubric(SCORING_DATA_DIR / "medvidbench_judge_prompt.txt")
    started = time.perf_counter()
    result, contributions = evaluate_with_contributions(
        test_set, predictions, nearest_class=lambda pairs: [len(q) % len(c) for q, c in pairs]
    )
    items = build_items(test_set, predictions)
    rng = random.Random(args.seed)
    verdicts = {
        item.key: None
        if rng.random() < 0.05
        else {aspect: rng.randint(1, 5) for aspect in rubric.aspects}
        for item in items
    }
    result = with_judge(result, aggregate(test_set, items, verdicts, rubric))
    contributions = contributions.with_metrics(
        judge_contributions(test_set, items, verdicts, rubric)
    )
    scoring_seconds = time.perf_counter() - started

    weights = np.random.default_rng(args.seed).poisson(1.0, size=(args.replicates, len(test_set)))
    weights[0] = 1
    walls, cpus, per_metric = [], [], {}
    for _ in range(args.runs):
        wall, cpu = time.perf_counter(), time.process_time()
        values = metric_values(contributions, weights)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    for name, recorded in contributions.metrics.items():
        started = time.perf_counter()
        recorded.compute(np.ascontiguousarray(weights, dtype=np.int64))
        per_metric[name] = time.perf_counter() - started
    identical = all(values[name][0] == result.metrics[name] for name in METRIC_NAMES)

    print(f"test set: {len(test_set)} samples, {len(items)} judge items ({args.kind})")
    print(f"scoring once with contributions: {scoring_seconds:.2f} s")
    print(
        f"10 metrics x B={args.replicates}: median {statistics.median(walls):.3f} s, "
        f"best {min(walls):.3f} s, best CPU {min(cpus):.3f} s over {args.runs} runs"
    )
    for name, seconds in per_metric.items():
        print(f"  {name:14s} {seconds * 1000:7.1f} ms")
    print(f"identity row == published values, all ten: {identical}")
    yardstick = time.perf_counter()
    sum(range(10**7))
    yardstick = time.perf_counter() - yardstick
    print(f"yardstick sum(range(10**7)): {yardstick:.3f} s")
    print(
        json.dumps(
            {
                "samples": len(test_set),
                "judge_items": len(items),
                "replicates": args.replicates,
                "median_s": round(statistics.median(walls), 4),
                "best_s": round(min(walls), 4),
                "best_cpu_s": round(min(cpus), 4),
                "per_metric_ms": {name: round(s * 1000, 1) for name, s in per_metric.items()},
                "identity_bit_for_bit": identical,
                "yardstick_s": round(yardstick, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
