"""Benchmark: synchronous validation of a 6,245-row predictions file, as an upload gets it.

    .venv/bin/python bench/upload.py [--runs 20] [--demo-dir var/demo]

Uses the synthetic MedVidBench files (written to a temporary folder if `--demo-dir` has none)
and times, with the parsed test set already cached (as in a running server, where the first
upload of a process pays ~0.3 s to parse it once):

1. `benchmark.scoring.load_predictions`, the scorer's loader: JSON and every row against the
   test set (pure Python, no Django);
2. `submissions.services.validate_predictions`, what the form runs: the size cap, the active
   test set's lookup and the loader;
3. a whole upload through the web form (django.test.Client POST): the form's checks, then
   `create_submission` (which checks again under its lock, writes the file and the rows and
   queues the run), up to the redirect to the status page.

2 and 3 run in a throwaway SQLite database under a temporary folder, never the configured one.
Target: validation (2) <= 300 ms on the 2-core shared machine. Timings are noisy there; run it
a few times.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import report  # noqa: E402  (bench/ is the script folder, first on sys.path)


def timed(function, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--demo-dir", type=Path, default=ROOT / "var" / "demo")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="podium-bench-") as folder:
        from plugins.medvidbench import scoring
        from plugins.medvidbench.demo_testset import DEMO_FILENAMES, write_demo_files

        demo_dir = args.demo_dir
        if not (demo_dir / DEMO_FILENAMES["noisy"]).exists():
            demo_dir = Path(folder) / "demo"
            print(f"Writing the demo files to {demo_dir} ...")
            write_demo_files(demo_dir)
        ground_truth = demo_dir / DEMO_FILENAMES["ground_truth"]
        raw = (demo_dir / DEMO_FILENAMES["noisy"]).read_bytes()

        start = time.perf_counter()
        test_set = scoring.load_ground_truth(ground_truth.read_bytes())
        print(
            f"{len(test_set)} test samples; parsing the ground truth once: "
            f"{(time.perf_counter() - start) * 1000:.0f} ms; predictions file {len(raw) / 1e6:.1f} MB"
        )
        report(
            "scoring.load_predictions",
            timed(lambda: scoring.load_predictions(raw, test_set), args.runs),
        )

        os.environ.pop("DATABASE_URL", None)
        os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
        os.environ["PODIUM_VAR_DIR"] = folder
        os.environ["LOG_LEVEL"] = "WARNING"
        import django

        django.setup()
        from django.core.files.uploadedfile import SimpleUploadedFile
        from django.core.management import call_command
        from django.test import Client
        from django.test.utils import setup_test_environment

        from accounts.models import User
        from benchmark.services import ensure_plugin_benchmark, import_testset, update_benchmark
        from submissions.services import validate_predictions

        setup_test_environment()
        call_command("migrate", verbosity=0)
        benchmark = ensure_plugin_benchmark("medvidbench")
        import_testset(benchmark, ground_truth)
        update_benchmark(benchmark, actor=None, daily_submission_limit=1000)
        validate_predictions(
            benchmark, raw
        )  # parses and caches the test set, as a first upload does
        report(
            "services.validate_predictions (the form's check)",
            timed(lambda: validate_predictions(benchmark, raw), args.runs),
        )

        client = Client()
        client.force_login(User.objects.create_user(username="bench"))
        url = f"/b/{benchmark.slug}/submit/"

        def post() -> None:
            response = client.post(
                url,
                {
                    "model_name": "bench",
                    "institution": "Bench",
                    "contact_email": "bench@example.org",
                    "model_url": "https://example.org/bench",
                    "evaluate_only": "on",
                    "predictions": SimpleUploadedFile("predictions.json", raw),
                },
            )
            assert response.status_code == 302, response.content[:2000]

        report(
            "whole upload through the form (POST to redirect)", timed(post, max(5, args.runs // 2))
        )

    start = time.perf_counter()
    sum(range(10**7))
    print(f"yardstick: sum(range(10**7)) took {(time.perf_counter() - start) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
