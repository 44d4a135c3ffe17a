"""`python manage.py make_demo_testset [--output DIR] [--seed N] [--force] [--frames]`.

Writes the synthetic MedVidBench ground truth and three submissions (perfect, noisy, prose) for
demos and local trials, so nobody needs the private test set to run the platform. Existing files
are left alone unless ``--force`` is given, so running it twice is harmless. ``--frames`` also
writes ``DIR/frames/``: every frame a re-run of a model would send, one tiny PNG per clip
hard-linked at its other frames (the frames root of docs/verification.md, for
PODIUM_FRAMES_DIR; `load_demo` writes the same under PODIUM_FRAMES_DIR itself).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from plugins.medvidbench.demo_testset import DEMO_FILENAMES, write_demo_files
from plugins.medvidbench.demo_testset.frames import DEFAULT_MAX_FRAMES, write_frames


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
        parser.add_argument(
            "--frames",
            action="store_true",
            help="also write a synthetic frames folder (DIR/frames) for re-running a model",
        )
        parser.add_argument(
            "--max-frames",
            type=int,
            default=DEFAULT_MAX_FRAMES,
            help=f"frames per question a re-run sends (default: {DEFAULT_MAX_FRAMES})",
        )

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
        else:
            paths = write_demo_files(output_dir, seed=options["seed"])
            if verbosity:
                self._report(paths, verbose=verbosity >= 2)
        if options["frames"]:
            self._write_frames(output_dir, options["max_frames"], verbose=bool(verbosity))

    def _write_frames(self, output_dir: Path, max_frames: int, *, verbose: bool) -> None:
        records = json.loads((output_dir / DEMO_FILENAMES["ground_truth"]).read_text("utf-8"))
        count = write_frames(output_dir / "frames", records, max_frames=max_frames)
        if verbose:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Wrote {count} frames (up to {max_frames} per question) "
                    f"under {output_dir / 'frames'}"
                )
            )

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
