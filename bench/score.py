"""Benchmark: score the 6,245-row demo predictions file end to end.

    .venv/bin/python bench/score.py [--runs 7] [--kind noisy]

Prints the median wall time of load + validate + seven metrics + NAP embeddings (the
MiniLM model loaded once, before timing), the same with the ground-truth file loaded
each time too, a bare `json.load` of the predictions file, the ratio of the two, and
the process's peak RSS. Targets (2-core machine): <= 1.0 s and <= 400 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plugins.medvidbench.demo_testset import write_demo_files
from plugins.medvidbench.scoring import evaluate, load_ground_truth, load_predictions
from plugins.medvidbench.scoring.embedding import default_encoder


def median_seconds(action, runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `action` (CPU time shows the cost on a busy machine)."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--kind", choices=("perfect", "noisy", "prose"), default="noisy")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        paths = write_demo_files(Path(folder), seed=0)
        ground_truth_path, predictions_path = paths["ground_truth"], paths[args.kind]
        predictions_bytes = predictions_path.read_bytes()
        test_set = load_ground_truth(ground_truth_path)
        default_encoder()  # load the model once, outside the timings

        def score_submission():
            return evaluate(test_set, load_predictions(predictions_bytes, test_set))

        def score_with_ground_truth():
            ground_truth = load_ground_truth(ground_truth_path)
            return evaluate(ground_truth, load_predictions(predictions_bytes, ground_truth))

        result = score_submission()
        scoring = median_seconds(score_submission, args.runs)
        with_ground_truth = median_seconds(score_with_ground_truth, args.runs)
        bare = median_seconds(lambda: json.loads(predictions_bytes), args.runs)

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mb = len(predictions_bytes) / 1e6
    print(f"predictions file: {args.kind}, {len(test_set)} rows, {mb:.2f} MB")
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores; > 1 means contention)")
    print(f"{'':52} {'wall ms':>9} {'cpu ms':>9}  (medians of {args.runs})")
    rows = [
        ("score (load + validate + 7 metrics + embeddings)", scoring),
        ("... also loading the ground-truth file each time", with_ground_truth),
        ("bare json.load of the predictions file", bare),
    ]
    for label, (wall, cpu) in rows:
        print(f"{label:52} {wall * 1000:9.1f} {cpu * 1000:9.1f}")
    print(f"ratio score / json.load (wall):  {scoring[0] / bare[0]:.1f} x")
    print(f"peak RSS: {peak_mb:.1f} MB")
    print(f"metrics: {json.dumps(result.metrics)}")


if __name__ == "__main__":
    main()
