"""`python manage.py standin_model [--host H] [--port P] [--demo-dir DIR] [--latency S]`.

Runs the demo's stand-in model (verifying/demo.py) in the foreground: an OpenAI-compatible
vision chat server that plays back the demo's predictions files, NOT a real model. It serves
`standin-perfect`, `standin-noisy`, `standin-prose` and `standin-new` for MedVidBench, and
`standin-<plugin>-<file>` for each plugin demo's entries (MedSG-Bench's
`standin-medsg-bench-pixel_near_perfect`, ...); each answers a test question, known by its text
and its media (read from the private store's frames/, as a re-run sends them), with the prediction its
file has for it. Start it after `load_demo` has written the frames and copied the images. Ctrl-C or
SIGTERM stops it cleanly (exit 0).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Benchmark
from benchmark.scoring import ScoringInputError
from core.standin import serve_until_stopped
from verifying.config import frames_root
from verifying.demo import demo_answer_tables
from verifying.standin import StandinModel

DEFAULT_MAX_FRAMES = Benchmark._meta.get_field("rerun_max_frames").default


class Command(BaseCommand):
    help = "Serve the demo's stand-in model (plays back the demo predictions) until interrupted."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to bind")
        parser.add_argument("--port", type=int, default=8766, help="port to bind (0: any free)")
        parser.add_argument(
            "--demo-dir",
            type=Path,
            default=None,
            help="the demo files (default: var/demo under PODIUM_VAR_DIR)",
        )
        parser.add_argument(
            "--frames-dir",
            type=Path,
            default=None,
            help="a local folder of the frames a re-run sends (default: the private store's frames/)",
        )
        parser.add_argument(
            "--max-frames",
            type=int,
            default=None,
            help="media per question a re-run sends (default: each benchmark's rerun_max_frames, "
            f"else {DEFAULT_MAX_FRAMES})",
        )
        parser.add_argument(
            "--latency", type=float, default=0.0, help="seconds slept before every answer"
        )

    def handle(self, *args: object, **options: object) -> None:
        demo_dir = options["demo_dir"] or Path(settings.VAR_DIR) / "demo"
        root = options["frames_dir"] or frames_root()
        started = time.perf_counter()

        def max_media(plugin: Any) -> int:
            return options["max_frames"] or _benchmark_max_frames(plugin.definition.slug)

        try:
            tables = demo_answer_tables(
                demo_dir, max_media, frames_root=root, log=self.stderr.write
            )
        except (OSError, ScoringInputError) as error:
            raise CommandError(
                f"Cannot build the stand-in's answers ({error}); run `manage.py load_demo` first "
                "(it writes the demo files and frames)."
            ) from None
        model = StandinModel(
            models=tables, latency=options["latency"], host=options["host"], port=options["port"]
        )

        def announce() -> None:
            if options["verbosity"]:
                self.stdout.write(
                    f"Stand-in model (plays back the demo predictions, NOT a real model) "
                    f"listening on {model.base_url}: {', '.join(sorted(tables))} "
                    f"(answers built in {time.perf_counter() - started:.1f} s)"
                )
                self.stdout.flush()

        try:
            serve_until_stopped(model, announce=announce)
        except OSError as error:
            raise CommandError(
                f"cannot listen on {options['host']}:{options['port']}: {error}"
            ) from None


def _benchmark_max_frames(slug: str) -> int:
    value = Benchmark.objects.filter(slug=slug).values_list("rerun_max_frames", flat=True).first()
    return value or DEFAULT_MAX_FRAMES
