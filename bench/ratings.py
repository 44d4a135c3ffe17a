"""Benchmark: Bradley-Terry ratings with bootstrap intervals (issue 15's number: <= 5 s).

    .venv/bin/python bench/ratings.py [--models 50] [--battles 50000] [--rounds 1000]
        [--runs 3] [--seed 0] [--json]

Draws `--models` true ratings (normal, sd 200 Elo) and `--battles` battles between uniformly
chosen pairs, seeded. A battle whose Bradley-Terry probability for the first model is P is a
tie with probability 2 x TIE_SHARE x min(P, 1 - P) (so about one in ten battles, most of
them between close models) and otherwise won by the first model with the probability that
keeps its expected score, a tie counting half, at exactly P: the model the ratings fit, so
their intervals should cover the truth about 95% of the time.
Times `rate_battles` (the whole call: tallying, the full fit, B bootstrap rounds, the
intervals) over `--runs` runs, and reading the same battles from JSON Lines bytes
(`read_battles`, what `manage.py rate_battles` adds). Reports how close the fitted ratings
come to the truth and how many true ratings fall inside their 95% interval (about 95% of
them should). The machine is shared: read the best figure. With --json the last line is one
JSON object: models, battles, rounds, seconds (the median), best_seconds, read_seconds,
degenerate_rounds, coverage.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.scoring.battles_file import read_battles
from benchmark.scoring.ratings import Battle, rate_battles

TIE_SHARE = 0.2


def make_battles(models: int, battles: int, seed: int) -> tuple[list[Battle], dict[str, float]]:
    """Seeded battles and the true ratings (mean 1000) they were drawn from."""
    rng = np.random.default_rng(seed)
    names = [f"model-{number:03d}" for number in range(models)]
    truth = rng.normal(0.0, 200.0, models)
    truth = truth - truth.mean() + 1000.0
    first = rng.integers(0, models, battles)
    second = rng.integers(0, models - 1, battles)
    second = second + (second >= first)
    p_first = 1.0 / (1.0 + 10.0 ** ((truth[second] - truth[first]) / 400.0))
    p_tie = 2 * TIE_SHARE * np.minimum(p_first, 1 - p_first)
    tie = rng.random(battles) < p_tie
    first_won = rng.random(battles) < (p_first - p_tie / 2) / (1 - p_tie)
    winners = np.where(tie, "tie", np.where(first_won, "model_a", "model_b"))
    rows = [
        Battle(names[a], names[b], winner)
        for a, b, winner in zip(first.tolist(), second.tolist(), winners.tolist(), strict=True)
    ]
    return rows, dict(zip(names, truth.tolist(), strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--battles", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    battles, truth = make_battles(args.models, args.battles, args.seed)
    ties = sum(row.winner == "tie" for row in battles)
    print(f"{args.models} models, {len(battles):,} battles ({ties:,} ties), B={args.rounds}")

    times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        result = rate_battles(battles, rounds=args.rounds, seed=args.seed)
        times.append(time.perf_counter() - started)
    print(
        f"rate_battles: median {statistics.median(times):.3f} s, best {min(times):.3f} s "
        f"over {args.runs} runs"
    )

    data = "".join(json.dumps(row._asdict()) + "\n" for row in battles).encode()
    started = time.perf_counter()
    assert read_battles(data) == battles
    read_seconds = time.perf_counter() - started
    print(f"read_battles of the {len(data) / 1e6:.1f} MB JSON Lines file: {read_seconds:.3f} s")

    errors = [abs(row.rating - truth[row.model]) for row in result.models]
    inside = sum(
        row.ci_low is not None
        and row.ci_high is not None
        and row.ci_low <= truth[row.model] <= row.ci_high
        for row in result.models
    )
    widths = [
        row.ci_high - row.ci_low for row in result.models if None not in (row.ci_low, row.ci_high)
    ]
    print(
        f"|rating - truth|: median {statistics.median(errors):.1f}, max {max(errors):.1f} Elo; "
        f"95% interval width: median {statistics.median(widths):.1f} Elo; truth inside "
        f"{inside}/{len(result.models)}; degenerate rounds {result.degenerate_rounds}"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "models": args.models,
                    "battles": len(battles),
                    "rounds": args.rounds,
                    "seconds": round(statistics.median(times), 4),
                    "best_seconds": round(min(times), 4),
                    "read_seconds": round(read_seconds, 4),
                    "degenerate_rounds": result.degenerate_rounds,
                    "coverage": round(inside / len(result.models), 4),
                }
            )
        )


if __name__ == "__main__":
    main()
