"""`python manage.py compute_intervals [--benchmark SLUG] [--missing]`: recompute the bootstrap
replicates (issue 12) of every run a board shows, from the stored predictions, test set and judge
verdicts, then the boards' intervals and rank intervals. For runs scored before intervals
existed and after a benchmark's `bootstrap_replicates` changed; `--missing` skips runs that
already have replicates of the benchmark's B.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Benchmark
from judging.services.replicates import recompute_run_replicates
from submissions.boards import recompute_board
from submissions.intervals import compute_rank_intervals
from submissions.models import RunReplicates
from submissions.selectors import board_candidates


class Command(BaseCommand):
    help = "Recompute the bootstrap intervals of every run on the boards."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", help="a benchmark's slug (default: all)")
        parser.add_argument(
            "--missing",
            action="store_true",
            help="only runs without replicates of the benchmark's number of replicates",
        )

    def handle(self, *args: object, **options: object) -> None:
        benchmarks = Benchmark.objects.order_by("slug")
        if options["benchmark"]:
            benchmarks = benchmarks.filter(slug=options["benchmark"])
            if not benchmarks.exists():
                raise CommandError(f"There is no benchmark {options['benchmark']!r}.")
        for benchmark in benchmarks:
            runs = board_candidates(benchmark)
            if options["missing"]:
                done = set(
                    RunReplicates.objects.filter(
                        evaluation__in=runs, replicates=benchmark.bootstrap_replicates
                    ).values_list("evaluation_id", flat=True)
                )
                runs = [run for run in runs if run.pk not in done]
            computed = skipped = 0
            for run in runs:
                try:
                    if recompute_run_replicates(run):
                        computed += 1
                    else:
                        skipped += 1
                except (ValueError, OSError) as error:
                    self.stderr.write(f"{benchmark.slug}: {error}")
                    skipped += 1
            recompute_board(benchmark)
            ranked = compute_rank_intervals(benchmark, force=True)
            self.stdout.write(
                f"{benchmark.slug}: replicates for {computed} runs ({skipped} without "
                f"per-sample data or refused), rank intervals for {ranked} rows "
                f"(B = {benchmark.bootstrap_replicates:,})"
            )
