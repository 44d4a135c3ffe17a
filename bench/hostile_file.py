"""Benchmark: the worst whole file within the limits, scored end to end (issue 11).

    .venv/bin/python bench/hostile_file.py [--chars 8000]

The demo test set's 6,245 rows, every prediction replaced by `--chars` characters of one
near-miss pattern (8,000 makes a ~50 MB file, MedVidBench's upload limit; the per-prediction
limit is 20,000), then read and scored as an upload is (`load_predictions` with the length
limit, `evaluate`: the seven metrics and the NAP embeddings). One line per pattern, then one
JSON line with the slowest. The worker's task timeout (Q_TIMEOUT) is 600 s by default: the
slowest file must stay well below it, on a machine busier than this one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plugins.medvidbench.demo_testset import write_demo_files
from plugins.medvidbench.scoring import evaluate, load_ground_truth, load_predictions
from plugins.medvidbench.scoring.embedding import default_encoder

# What the parsers look for, without the rest: each used to cost quadratic time somewhere.
PATTERNS = ["1", " ", "1-", "1:", "1 - ", "a 1/5", "aaaa ", "0.0-{n}.0 seconds: x\n"]


def hostile(rows: list[dict], pattern: str, chars: int) -> bytes:
    for index, row in enumerate(rows):
        unit = pattern.format(n=index % 500 + 1)  # distinct events, so none is dropped as a repeat
        row["prediction"] = (unit * (chars // len(unit) + 1))[:chars]
    return json.dumps(rows).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=8_000, help="characters per prediction")
    args = parser.parse_args()

    slowest = ("", 0.0)
    with tempfile.TemporaryDirectory() as folder:
        paths = write_demo_files(Path(folder), seed=0)
        test_set = load_ground_truth(paths["ground_truth"])
        rows = json.loads(paths["noisy"].read_bytes())
        default_encoder()  # the model is loaded once per worker, outside the timing
        for pattern in PATTERNS:
            raw = hostile(rows, pattern, args.chars)
            started = time.perf_counter()
            evaluate(test_set, load_predictions(raw, test_set, max_prediction_chars=20_000))
            seconds = time.perf_counter() - started
            slowest = max(slowest, (pattern, seconds), key=lambda item: item[1])
            print(f"{pattern!r:28} {len(raw) / 1e6:5.1f} MB  {seconds:6.1f} s", flush=True)
    print(
        json.dumps(
            {
                "rows": len(rows),
                "chars_per_prediction": args.chars,
                "slowest_pattern": slowest[0],
                "slowest_s": round(slowest[1], 1),
            }
        )
    )


if __name__ == "__main__":
    main()
