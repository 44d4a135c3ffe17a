"""`python manage.py snapshot_board --benchmark medvidbench --note "Before the MICCAI deadline"`

A maintainer's snapshot of a benchmark's boards (issue 33, docs/boards.md "Snapshots"): asked
for now, written by the board's rebuild once its rank intervals are in (a worker writes
them; without one, `--wait` computes them here).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Benchmark
from core.exceptions import DomainError
from submissions.intervals import compute_rank_intervals
from submissions.maintenance import take_snapshot
from submissions.models import BoardSnapshot


class Command(BaseCommand):
    help = "Take a snapshot of a benchmark's boards, with a note saying why."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", required=True, help="the benchmark's slug")
        parser.add_argument("--note", required=True, help="why; shown with the snapshot")
        parser.add_argument(
            "--wait",
            action="store_true",
            help="compute the rank intervals here rather than leave them to the worker",
        )

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"There is no benchmark {options['benchmark']!r}.")
        try:
            changes = take_snapshot(benchmark, actor=None, note=str(options["note"]))
        except DomainError as error:
            raise CommandError(str(error)) from None
        if options["wait"]:
            compute_rank_intervals(benchmark, force=True)
        written = BoardSnapshot.objects.filter(
            benchmark=benchmark, changes__gte=changes, sealed_at__isnull=False
        ).first()
        if written is not None:
            self.stdout.write(
                f"Snapshot {written.pk} of {benchmark.name}: {written.entries} entries, "
                f"sha256 {written.sha256}."
            )
        else:
            self.stdout.write(
                f"A snapshot of {benchmark.name} is asked for: the worker writes it once the "
                "board's rank intervals are computed."
            )
