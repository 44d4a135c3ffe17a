"""Benchmark: DVC_F1 on one answer of many nested, overlapping events (issue 11, point 4).

    .venv/bin/python bench/dvc_overlaps.py [--events 20000] [--definition]

Builds one dense-captioning sample whose answer lists `--events` nested events
("i-(2n-i) seconds: step i", about 0.5 MB for 20,000) against a three-segment reference, and
times the whole scoring of that sample (`score_dense_captioning`: parse, flatten, frames, F1)
with the sweep Podium uses. With `--definition` it also times the flattening as the official
scorer defines it (every event scanned for every piece, O(n^2); the copy the tests compare
against), which is what Podium ran before: ~30 s at 20,000 events. It checks both give the
same pieces and prints the figures, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plugins.medvidbench.scoring.metrics.dense_captioning import (  # noqa: E402
    flatten_overlaps,
    score_dense_captioning,
)
from plugins.medvidbench.scoring.parsers import parse_dense_captions  # noqa: E402
from plugins.medvidbench.scoring.tasks import DVC_F1  # noqa: E402
from tests.benchmark.scoring.factories import gt_record, make_test_set  # noqa: E402
from tests.benchmark.scoring.test_dense_captioning import flatten_by_definition  # noqa: E402


def answer(events: int) -> str:
    return "\n".join(f"{i}.0-{2 * events - i}.0 seconds: step {i}" for i in range(events))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--definition", action="store_true", help="also time the O(n^2) form")
    args = parser.parse_args()

    text = answer(args.events)
    reference = [
        {"start": 0, "end": args.events // 2, "caption": "a"},
        {"start": args.events // 2, "end": args.events, "caption": "b"},
        {"start": args.events, "end": 2 * args.events, "caption": "c"},
    ]
    test_set = make_test_set(gt_record("dense_captioning_gpt", "ref", [reference]))
    items = list(zip(test_set.samples, [text], strict=True))

    started = time.perf_counter()
    outcome = score_dense_captioning(items)
    scoring_s = time.perf_counter() - started
    events = parse_dense_captions(text)
    started = time.perf_counter()
    pieces = flatten_overlaps(events)
    sweep_s = time.perf_counter() - started
    print(f"answer: {args.events:,} nested events, {len(text.encode()) / 1e6:.2f} MB")
    print(
        f"score_dense_captioning (sweep): {scoring_s:.3f} s, DVC_F1 {outcome.metrics[DVC_F1].value}"
    )
    print(f"flatten_overlaps (sweep): {sweep_s:.3f} s, {len(pieces):,} pieces")
    figures = {
        "events": args.events,
        "bytes": len(text.encode()),
        "scoring_s": round(scoring_s, 3),
        "flatten_sweep_s": round(sweep_s, 3),
    }
    if args.definition:
        started = time.perf_counter()
        defined = flatten_by_definition(events)
        definition_s = time.perf_counter() - started
        print(
            f"flatten by definition (O(n^2)): {definition_s:.3f} s, same pieces: {defined == pieces}"
        )
        figures |= {"flatten_definition_s": round(definition_s, 3), "same": defined == pieces}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
