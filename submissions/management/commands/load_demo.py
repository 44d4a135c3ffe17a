"""`python manage.py load_demo [--demo-dir DIR] [--standin-model-url URL]`.

Sets up a development machine with a living board: MedVidBench, the synthetic test set, the 15
published official rows (spec 7) and a few scored community entries, plus a demo account (see
submissions/demo.py), and the demo's frames for re-running a model; with `--standin-model-url`,
the stand-in model becomes the demo entries' model endpoint (verifying/demo.py). Idempotent: a
second run changes nothing. `make run` calls it.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.exceptions import DomainError
from submissions.demo import (
    DEMO_MAINTAINER_PASSWORD,
    DEMO_MAINTAINER_USERNAME,
    DEMO_PASSWORD,
    DEMO_USERNAME,
    load_demo,
)


class Command(BaseCommand):
    help = "Load the demo benchmark, test set, published results and community entries."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--demo-dir",
            type=Path,
            default=None,
            help="where the synthetic test set and predictions are (written if missing; "
            "default: var/demo under PODIUM_VAR_DIR)",
        )
        parser.add_argument(
            "--standin-model-url",
            default="",
            help="base URL of the stand-in model (manage.py standin_model) to register as the "
            "demo entries' model endpoint, e.g. http://127.0.0.1:8766/v1 (default: none)",
        )

    def handle(self, *args: object, **options: object) -> None:
        demo_dir = options["demo_dir"] or Path(settings.VAR_DIR) / "demo"
        verbose = options["verbosity"] >= 1
        try:
            summary = load_demo(
                demo_dir,
                log=self.stdout.write if verbose else lambda _: None,
                standin_model_url=options["standin_model_url"],
            )
        except DomainError as error:
            raise CommandError(str(error)) from None
        if verbose:
            self.stdout.write(
                self.style.SUCCESS(
                    f"{summary.benchmark.name}: {summary.official} official and "
                    f"{summary.community} community entries on the board "
                    f"({summary.imported} imported and {summary.submitted} scored now). "
                    f"Sign in as {DEMO_USERNAME} / {DEMO_PASSWORD}; the admin as the "
                    f"maintainer {DEMO_MAINTAINER_USERNAME} / {DEMO_MAINTAINER_PASSWORD}."
                )
            )
