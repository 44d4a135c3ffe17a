"""`python manage.py import_testset --benchmark SLUG GT.json [--no-activate] [--notes TEXT]`.

Validates a ground-truth file in the official format and stores it as the benchmark's next
test set version (see docs/benchmarks.md). A malformed file exits non-zero with the loader's
message, never a traceback; importing the same file again changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Benchmark
from benchmark.selectors import benchmark_by_slug
from benchmark.services import import_testset
from core.exceptions import DomainError


class Command(BaseCommand):
    help = "Import a private ground-truth file as a benchmark's next test set version."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the ground-truth JSON file")
        parser.add_argument("--benchmark", required=True, help="the benchmark's slug")
        parser.add_argument(
            "--no-activate",
            dest="activate",
            action="store_false",
            help="store the version without making it the one submissions are scored against",
        )
        parser.add_argument("--notes", default="", help="what this version is (kept with it)")

    def handle(self, *args: object, **options: object) -> None:
        slug = options["benchmark"]
        try:
            benchmark = benchmark_by_slug(slug, viewer=None)
        except Benchmark.DoesNotExist:
            raise CommandError(
                f"No benchmark with slug {slug!r}. Run `manage.py setup_benchmarks` first."
            ) from None
        versions_before = benchmark.test_sets.count()
        try:
            test_set = import_testset(
                benchmark, options["file"], activate=options["activate"], notes=options["notes"]
            )
        except DomainError as error:
            raise CommandError(str(error)) from None
        if not options["verbosity"]:
            return
        state = "active" if test_set.is_active else "not active"
        if benchmark.test_sets.count() == versions_before:
            self.stdout.write(
                f"{benchmark.name} already has this file as test set v{test_set.version} "
                f"({state}); nothing imported."
            )
        else:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Imported {benchmark.name} test set v{test_set.version} "
                    f"({test_set.record_count} records, sha256 {test_set.checksum[:12]}, {state}) "
                    f"as {test_set.file_name}"
                )
            )
        if options["verbosity"] >= 2:
            for task, count in test_set.task_counts.items():
                self.stdout.write(f"  {task:<20} {count:>6}")
