"""`python manage.py make_demo_testset [--benchmark KEY] [--output DIR] [--force] [--frames]`.

Writes a benchmark plugin's demo files (its `write_demo`: a synthetic test set and example
predictions; MedVidBench's by default: the ground truth and four submissions) for demos and
local trials, so nobody needs a private test set to run the platform. Existing files are left
alone unless ``--force`` is given, so running it twice is harmless; the same plugin writes the
same bytes every time. ``--frames`` also puts under ``DIR/frames/`` every medium a re-run of a
model sends (the plugin's `rerun.write_demo_media`: MedVidBench's one tiny PNG per clip hard-linked
at its other frames; the frames root of docs/verification.md, for the private store's frames/; `load_demo`
does the same under frames/ itself).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Benchmark
from benchmark.plugins import DEFAULT_PLUGIN, UnknownPlugin, get_plugin

DEFAULT_MAX_FRAMES = Benchmark._meta.get_field("rerun_max_frames").default


class Command(BaseCommand):
    help = "Write a benchmark plugin's synthetic test set and demo submissions as files."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--benchmark",
            default=DEFAULT_PLUGIN,
            help=f"the plugin whose demo to write (default: {DEFAULT_PLUGIN})",
        )
        parser.add_argument(
            "--output",
            type=Path,
            default=None,
            help="directory to write into (default: var/demo under PODIUM_VAR_DIR, and "
            "var/demo/<plugin> for a plugin other than the default)",
        )
        parser.add_argument("--force", action="store_true", help="overwrite existing files")
        parser.add_argument(
            "--frames",
            action="store_true",
            help="also write the media a re-run sends (DIR/frames) for re-running a model",
        )
        parser.add_argument(
            "--max-frames",
            type=int,
            default=DEFAULT_MAX_FRAMES,
            help=f"media per question a re-run sends (default: {DEFAULT_MAX_FRAMES})",
        )

    def handle(self, *args: object, **options: object) -> None:
        try:
            plugin = get_plugin(options["benchmark"])
        except UnknownPlugin as error:
            raise CommandError(str(error)) from None
        output_dir = options["output"] or Path(settings.VAR_DIR) / "demo"
        if options["output"] is None and plugin.key != DEFAULT_PLUGIN:
            output_dir = output_dir / plugin.key
        verbosity = options["verbosity"]
        existed = output_dir.is_dir() and any(output_dir.iterdir())
        files = plugin.write_demo(output_dir, force=options["force"])
        if files is None:
            raise CommandError(f"{plugin.definition.name} has no demo.")
        if verbosity:
            if existed and not options["force"]:
                self.stdout.write(
                    f"{output_dir} has {plugin.definition.name}'s demo files; nothing written "
                    "(use --force to overwrite)."
                )
            else:
                paths = [files.test_set, *(entry.predictions for entry in files.entries)]
                for path in dict.fromkeys([*paths, *files.playback]):
                    rows = json.loads(path.read_text(encoding="utf-8"))
                    size = path.stat().st_size / 1_000_000
                    self.stdout.write(
                        self.style.SUCCESS(f"Wrote {path} ({len(rows)} records, {size:.1f} MB)")
                    )
        if options["frames"]:
            if plugin.rerun is None:
                raise CommandError(f"{plugin.definition.name}'s models cannot be re-run.")
            test_set = plugin.read_test_set(files.test_set.read_bytes())
            _, line = plugin.rerun.write_demo_media(
                files, test_set, output_dir / "frames", options["max_frames"]
            )
            if verbosity:
                self.stdout.write(self.style.SUCCESS(line))
