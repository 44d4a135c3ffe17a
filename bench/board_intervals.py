"""Benchmark: a board's rank intervals and tiers, end to end, as the background task computes
them after a recompute (issue 12).

    .venv/bin/python bench/board_intervals.py [--entries 1000] [--replicates 1000] [--runs 3]
                                              [--seed 0]

In a throwaway SQLite database (bench/board.py's board: `--entries` published entries, a third
verified, a fifth with their judge metrics pending), every run gets a stored `RunReplicates`
row (B x 10 replicate values around its metrics, NaN for pending judge metrics; written
directly, a bench fixture), then `recompute_board` runs once and
`submissions.intervals.compute_rank_intervals` is timed: reading every row's replicates,
ranking every replicate with the board's policy, the tiers and the bulk update. Target (issue
12, 2-core shared machine): <= 5 s for 1,000 entries. The last line is one JSON object with
the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from board import add_replicates, build_board, setup_django  # noqa: E402  (bench/ is first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="podium-bench-") as folder:
        setup_django(Path(folder))
        from submissions.boards import recompute_board
        from submissions.intervals import compute_rank_intervals
        from submissions.models import BoardEntry

        benchmark = build_board(args.entries, args.seed)
        benchmark.bootstrap_replicates = args.replicates
        benchmark.save(update_fields=["bootstrap_replicates"])
        stored = add_replicates(benchmark, args.replicates, args.seed)
        recompute_board(benchmark)
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            written = compute_rank_intervals(benchmark, force=True)
            times.append(time.perf_counter() - start)
        widths = [
            worst - best
            for best, worst in BoardEntry.objects.values_list("rank_best", "rank_worst")
        ]
        tiers = BoardEntry.objects.values_list("board", "tier").distinct().count()
    figures = {
        "entries": args.entries,
        "replicates": args.replicates,
        "runs_with_replicates": stored,
        "rows_written": written,
        "median_s": round(statistics.median(times), 3),
        "best_s": round(min(times), 3),
        "median_rank_interval_width": statistics.median(widths),
        "tiers": tiers,
        "target_s": 5.0,
    }
    print(
        f"{args.entries:,} entries x {args.replicates:,} replicates: compute_rank_intervals "
        f"median {figures['median_s']} s, best {figures['best_s']} s over {args.runs} runs "
        f"(target 5 s); {written} rows, {tiers} tiers over both boards, median rank interval "
        f"width {figures['median_rank_interval_width']} places"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
