"""Benchmark: rank 10,000 random entries on 10 metrics.

    .venv/bin/python bench/rank.py [--entries 10000] [--metrics 10] [--runs 15] [--seed 0]

The values are seeded random numbers drawn on a grid of 3 decimals (so rounding changes
nothing and many values tie), with about 2% missing (None and NaN) and one metric where lower
is better. Prints, for both tie methods, the median and best wall time of `rank_entries` over
the runs, and the best CPU time of the process (less sensitive to other processes taking the
cores). Target (2-core machine): <= 50 ms for 10,000 x 10. The machine is shared, so timings
are noisy: run it a few times and read the best figures as well as the median. A last line
times plain Python (`sum(range(10**7))`) as a yardstick of how loaded the machine is.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.scoring.ranking import Entry, MetricSpec, RankingPolicy, rank_entries


def random_entries(count: int, metric_keys: list[str], seed: int) -> list[Entry]:
    """`count` entries with 3-decimal values in [0, 1], some missing, some duplicate names."""
    generator = np.random.default_rng(seed)
    values = generator.integers(0, 1001, size=(count, len(metric_keys))) / 1000
    missing = generator.random(size=values.shape) < 0.02
    entries = []
    for index in range(count):
        row = {
            key: (None if index % 2 else float("nan")) if missing[index, column] else value
            for column, (key, value) in enumerate(
                zip(metric_keys, values[index].tolist(), strict=True)
            )
        }
        # Every 50th entry shares one name: the last tiebreak then needs the key.
        name = "model-shared" if index % 50 == 0 else f"model-{index:05d}"
        entries.append(Entry(key=index, name=name, values=row))
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    metric_keys = [f"metric_{number}" for number in range(args.metrics)]
    metrics = [
        MetricSpec(key, higher_is_better=number != 0) for number, key in enumerate(metric_keys)
    ]
    entries = random_entries(args.entries, metric_keys, args.seed)

    print(f"{args.entries} entries x {args.metrics} metrics, {args.runs} runs each")
    for tie_method in ("min", "dense"):
        policy = RankingPolicy(tie_method=tie_method)
        rank_entries(entries, metrics, policy)  # warm up
        wall, cpu = [], []
        for _ in range(args.runs):
            wall_start, cpu_start = time.perf_counter(), time.process_time()
            rank_entries(entries, metrics, policy)
            wall.append(time.perf_counter() - wall_start)
            cpu.append(time.process_time() - cpu_start)
        print(
            f"rank_entries, tie_method={tie_method!r:8}"
            f" wall median {statistics.median(wall) * 1000:6.1f} ms, best {min(wall) * 1000:6.1f} ms;"
            f" CPU best {min(cpu) * 1000:6.1f} ms"
        )
    yardstick = []
    for _ in range(3):
        start = time.process_time()
        sum(range(10**7))
        yardstick.append(time.process_time() - start)
    print(f"yardstick: sum(range(10**7)) CPU best {min(yardstick) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
