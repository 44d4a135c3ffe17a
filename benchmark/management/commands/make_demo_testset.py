"""`python manage.py make_demo_testset [--output DIR] [--seed N] [--force]`.

Writes the synthetic MedVidBench ground truth and three submissions (perfect, noisy, prose) for
demos and local trials, so nobody needs the private test set to run the platform. Existing files
are left alone unless ``--force`` is given, so running it twice is harmless.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from benchmark.demo_testset import DEMO_FILENAMES, write_demo_files


class Command(BaseCommand):
    help = "Write a synthetic MedVidBench test set and three demo submissions as JSON files."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--output",
            type=Path,
            default=None,
            help="directory to write into (default: var/demo under PODIUM_VAR_DIR)",
        )
        parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
        parser.add_argument("--force", action="store_true", help="overwrite existing files")

    def handle(self, *args: object, **options: object) -> None:
        output_dir = options["output"] or Path(settings.VAR_DIR) / "demo"
        verbosity = options["verbosity"]
        existing = [name for name in DEMO_FILENAMES.values() if (output_dir / name).exists()]
        if existing and not options["force"]:
            if verbosity:
                self.stdout.write(
                    f"{output_dir} already has {', '.join(existing)}; nothing written "
                    "(use --force to overwrite)."
                )
            return
        paths = write_demo_files(output_dir, seed=options["seed"])
        if verbosity:
            self._report(paths, verbose=verbosity >= 2)

    def _report(self, paths: dict[str, Path], *, verbose: bool) -> None:
        """One line per written file; at verbosity 2 also the test set's qa_type counts."""
        for path in paths.values():
            rows = json.loads(path.read_text(encoding="utf-8"))
            size = path.stat().st_size / 1_000_000
            self.stdout.write(
                self.style.SUCCESS(f"Wrote {path} ({len(rows)} records, {size:.1f} MB)")
            )
        if verbose:
            records = json.loads(paths["ground_truth"].read_text(encoding="utf-8"))
            for qa_type, count in Counter(r["qa_type"] for r in records).most_common():
                self.stdout.write(f"  {qa_type:<24} {count:>5}")
