"""`python manage.py setup_benchmarks [--overwrite]`.

Creates the benchmark of every installed benchmark plugin (benchmark/plugins.py: MedVidBench,
MedSG-Bench, and any a package adds), from the definition each plugin carries, or brings existing
ones in line with their definitions. Safe to run on every deploy: a second run changes nothing.
Texts and ranking policy that maintainers edited are kept unless ``--overwrite``.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from benchmark.plugins import plugins
from benchmark.services import ensure_benchmark


class Command(BaseCommand):
    help = "Create or update the benchmarks defined in code (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--overwrite",
            action="store_true",
            help="also reset texts, ranking policy, submission rules and metric labels "
            "to the definitions, discarding maintainers' edits",
        )

    def handle(self, *args: object, **options: object) -> None:
        for _, plugin in sorted(plugins().items()):
            benchmark = ensure_benchmark(plugin.definition, overwrite=options["overwrite"])
            if options["verbosity"]:
                keys = ", ".join(metric.key for metric in benchmark.metrics.all())
                self.stdout.write(
                    self.style.SUCCESS(f"{benchmark.name} ({benchmark.slug}): {keys}")
                )
