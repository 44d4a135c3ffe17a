"""Benchmark: the clustered bootstrap's costs (issue 12's numbers).

    .venv/bin/python bench/rank_intervals.py [--entries 1000] [--replicates 1000] [--runs 3]

Times, best of `--runs` (the machine is shared: read the best figure):

1. `replicate_weights` for the demo test set (plugins/medvidbench/demo_testset, 6,245 samples, its
   videos as clusters), B replicates.
2. Ten weighted means over those weights ((B, n) @ (n,) each), the least any metric costs
   under a batch: a floor for "intervals for one entry", not the contributions' real cost
   (and not a safe way to compute them: the batched product does not give the bits of the
   row-by-row one, see docs/statistics.md).
3. The same ten weighted means row by row (`(weights[b] * values).sum()` per replicate),
   numpy's own pairwise sum on one row, so a replicate's bits cannot depend on its batch.
4. Ten percentile intervals and ten paired comparisons from (B,) arrays.
5. `rank_intervals` for `--entries` entries x 10 metrics x B (values on a 3-decimal grid so
   rounding and ties happen, 2% missing, one lower-is-better metric, every 20th entry
   imported). Target: <= 5 s for 1,000 x 1,000 on the 2-core machine.

The last line is one JSON object with every figure, in seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.scoring.bootstrap import (
    paired_difference,
    percentile_interval,
    rank_intervals,
    replicate_weights,
)
from benchmark.scoring.ranking import Entry, MetricSpec
from plugins.medvidbench.demo_testset import generate_testset
from plugins.medvidbench.scoring.clusters import video_clusters
from plugins.medvidbench.scoring.ground_truth import load_ground_truth

METRIC_COUNT = 10


def best_time(function, runs: int) -> tuple[float, object]:
    """The best wall time of `runs` calls, and the last call's result."""
    best = float("inf")
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def random_board(entries: int, replicates: int, seed: int):
    """Entries with replicate values around a per-entry centre, some imported, some missing."""
    rng = np.random.default_rng(seed)
    keys = [f"metric_{number}" for number in range(METRIC_COUNT)]
    metrics = [MetricSpec(key, higher_is_better=number != 0) for number, key in enumerate(keys)]
    centres = rng.integers(0, 1001, size=(entries, METRIC_COUNT)) / 1000
    rows, values = [], []
    for index in range(entries):
        rows.append(
            Entry(
                index, f"model-{index:05d}", dict(zip(keys, centres[index].tolist(), strict=True))
            )
        )
        if index % 20 == 0:
            values.append(None)  # imported: fixed in every replicate
            continue
        noise = rng.normal(0, 0.02, size=(METRIC_COUNT, replicates))
        replicate = np.clip(np.round(centres[index][:, None] + noise, 3), 0, 1)
        replicate[rng.random(replicate.shape) < 0.02] = np.nan
        values.append(replicate)
    return rows, metrics, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    test_set = load_ground_truth(generate_testset(0))
    clusters = video_clusters([sample.id for sample in test_set.samples])
    weights_seconds, weights = best_time(
        lambda: replicate_weights(clusters, replicates=args.replicates, seed=test_set.checksum),
        args.runs,
    )
    print(
        f"weights: {len(clusters)} samples, {len(set(clusters))} videos, "
        f"B={args.replicates}: {weights_seconds * 1000:.1f} ms"
    )

    per_sample = np.random.default_rng(1).random((METRIC_COUNT, len(clusters)))
    totals = weights.sum(axis=1)
    means_seconds, means = best_time(
        lambda: [(weights @ row) / totals for row in per_sample], args.runs
    )
    print(f"10 weighted means over the batch: {means_seconds * 1000:.1f} ms")

    rowwise_seconds, _ = best_time(
        lambda: [
            np.array([(weights[b] * row).sum() for b in range(len(weights))]) / totals
            for row in per_sample
        ],
        args.runs,
    )
    print(f"10 weighted means row by row: {rowwise_seconds * 1000:.1f} ms")

    summaries_seconds, _ = best_time(
        lambda: [
            (percentile_interval(row), paired_difference(row, means[0], 0.5, 0.5)) for row in means
        ],
        args.runs,
    )
    print(f"10 intervals + 10 paired comparisons: {summaries_seconds * 1000:.2f} ms")

    rows, metrics, values = random_board(args.entries, args.replicates, seed=2)
    ranks_seconds, intervals = best_time(lambda: rank_intervals(rows, metrics, values), args.runs)
    widths = [interval.worst - interval.best for interval in intervals]
    print(
        f"rank intervals: {args.entries} entries x {METRIC_COUNT} metrics x "
        f"B={args.replicates}: {ranks_seconds:.2f} s (median width {int(np.median(widths))} places)"
    )

    print(
        json.dumps(
            {
                "samples": len(clusters),
                "videos": len(set(clusters)),
                "replicates": args.replicates,
                "entries": args.entries,
                "weights_seconds": round(weights_seconds, 4),
                "ten_weighted_means_seconds": round(means_seconds, 4),
                "ten_weighted_means_row_by_row_seconds": round(rowwise_seconds, 4),
                "ten_intervals_and_comparisons_seconds": round(summaries_seconds, 5),
                "rank_intervals_seconds": round(ranks_seconds, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
