"""Benchmark: the answer parsers on hostile answers (issue 11: scoring time must not be quadratic).

    .venv/bin/python bench/parsers.py [--sizes 100000 200000] [--official]

Times each task's parser (tal, stg, dense captions, skill, cvs) on answers that repeat one
near-miss unit ("1", " ", "1-", "1:", "aaaa ", "1-2 seconds ", ...) up to each size, and prints
the seconds and the growth from the first size to the last (2.0 per doubling is linear, 4.0
quadratic; only parses of 10 ms or more count, below that the ratio is noise). With `--official` it first times `parse_tal` and `parse_dense_captions` with the
official expressions (the copies in tests/benchmark/scoring/test_parsers_linear.py) on 20,000
and 40,000 digits, which is what Podium ran before: minutes. The last line is JSON: the slowest
parse and the largest growth.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plugins.medvidbench.scoring import parsers  # noqa: E402
from tests.benchmark.scoring.test_parsers_linear import OFFICIAL  # noqa: E402

PARSERS = {
    "tal": parsers.parse_tal,
    "stg": parsers.parse_stg,
    "dense captions": parsers.parse_dense_captions,
    "skill": parsers.parse_skill_aspects,
    "cvs": parsers.parse_cvs,
}
UNITS = [
    "1",
    " ",
    "1-",
    "1 - ",
    "1:",
    "1.",
    "1-2 seconds ",
    "1-2 seconds: x\n",
    "1 - 2 seconds - ",
    "**Start Time:** 1 - 2 seconds ",
    "[1, ",
    "[[1 ",
    "a 1/5",
    "a: 1/5 ",
    "aaaa ",
    "from 1 to ",
    "1:1:1 to ",
    "two structures: ",
    "\n1",
]


def timed(parse, text: str, repeat: int = 3) -> float:
    """The fastest of `repeat` runs (the machine is shared: the minimum is the least noisy)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        parse(text)
        best = min(best, time.perf_counter() - started)
    return best


@contextmanager
def official_expressions():
    saved = {name: getattr(parsers, name) for name in OFFICIAL}
    for name, (pattern, _) in OFFICIAL.items():
        setattr(parsers, name, pattern)
    try:
        yield
    finally:
        for name, pattern in saved.items():
            setattr(parsers, name, pattern)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 200_000])
    parser.add_argument("--official", action="store_true", help="also time the official forms")
    args = parser.parse_args()

    figures: dict[str, float] = {}
    if args.official:
        with official_expressions():
            for name in ("tal", "dense captions"):
                times = [timed(PARSERS[name], "1" * size, 1) for size in (20_000, 40_000)]
                print(
                    f"official {name:15} digits: 20,000 chars {times[0]:7.2f} s, "
                    f"40,000 chars {times[1]:7.2f} s"
                )
                figures[f"official_{name.replace(' ', '_')}_40k_s"] = round(times[1], 2)
    slowest, growth = 0.0, 0.0
    for name, parse in PARSERS.items():
        for unit in UNITS:
            times = [timed(parse, unit * (size // len(unit))) for size in args.sizes]
            ratio = times[-1] / max(times[0], 1e-6)
            slowest = max(slowest, times[-1])
            if times[-1] >= 0.01:  # below 10 ms the ratio is noise
                growth = max(growth, ratio)
            print(
                f"{name:15} {unit!r:34} "
                + " ".join(f"{t:7.4f} s" for t in times)
                + f"  x{ratio:.1f}"
            )
    print(
        f"slowest parse at {args.sizes[-1]:,} chars: {slowest:.3f} s; largest growth x{growth:.1f}"
        f" for x{args.sizes[-1] / args.sizes[0]:.0f} the size"
    )
    print(
        json.dumps(
            {
                "chars": args.sizes[-1],
                "slowest_s": round(slowest, 4),
                "largest_growth": round(growth, 2),
                **figures,
            }
        )
    )


if __name__ == "__main__":
    main()
