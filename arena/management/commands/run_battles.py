"""`python manage.py run_battles --benchmark SLUG [--category KEY] [--sync] [--dry-run]`: start
the battles of every entry on the boards that has none yet in a rating category (an entry
scored before the judge was configured, say), then, with `--sync`, run every queued or
interrupted battle job of the benchmark here in the foreground and rate the categories (the
demo and a machine without a worker). Without `--sync` the jobs go to the worker cluster.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.enums import ACTIVE_JOB_STATES
from arena.models import BattleJob
from arena.selectors import can_battle, on_the_boards, rating_categories
from arena.services import judge_unavailable_reason, rate_category, run_job, start_battles
from benchmark.models import Benchmark
from core.exceptions import DomainError


class Command(BaseCommand):
    help = "Start the missing battles of a benchmark's rating categories (and run them: --sync)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", required=True, help="the benchmark's slug")
        parser.add_argument("--category", help="one rating category's key (default: all)")
        parser.add_argument(
            "--sync", action="store_true", help="run the jobs here, then rate the categories"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="say which entries would battle; start none"
        )

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"There is no benchmark {options['benchmark']!r}.")
        categories = [category.key for category in rating_categories(benchmark)]
        if options["category"]:
            if options["category"] not in categories:
                raise CommandError(
                    f"{benchmark.name} has no rating category {options['category']!r} (its "
                    f"rating categories: {', '.join(categories) or 'none'})."
                )
            categories = [str(options["category"])]
        if not categories:
            raise CommandError(f"{benchmark.name} has no rating category.")
        reason = judge_unavailable_reason(benchmark)
        if reason:
            raise CommandError(reason)
        verbosity = int(options["verbosity"])
        boards = on_the_boards(benchmark)
        for category in categories:
            battled = set(
                BattleJob.objects.filter(benchmark=benchmark, category=category).values_list(
                    "submission_id", flat=True
                )
            )
            waiting = [
                run.submission
                for submission_id, run in sorted(boards.items())
                if submission_id not in battled and can_battle(run.submission)
            ]
            for submission in sorted(waiting, key=lambda entry: (entry.created_at, entry.pk)):
                if options["dry_run"]:
                    self.stdout.write(f"{category}: would start {submission.model_name}")
                    continue
                try:
                    job = start_battles(submission, category, enqueue=not options["sync"])
                except DomainError as error:
                    self.stderr.write(f"{category}: {submission.model_name}: {error}")
                    continue
                if verbosity:
                    self.stdout.write(
                        f"{category}: {submission.model_name} meets "
                        f"{len(job.opponents)} opponent(s) in {job.battles_total} battle(s)"
                    )
        if not options["sync"] or options["dry_run"]:
            return
        for job_id in BattleJob.objects.filter(
            benchmark=benchmark, category__in=categories, status__in=sorted(ACTIVE_JOB_STATES)
        ).values_list("pk", flat=True):
            job = run_job(job_id)
            if job is not None and verbosity:
                self.stdout.write(f"battle job {job.pk}: {job.status}. {job.message}")
        for category in categories:
            fit = rate_category(benchmark, category)
            if verbosity:
                self.stdout.write(
                    f"{category}: {fit.get_status_display()}, {fit.rated} rated over "
                    f"{fit.battles} battles{f'; pending: {fit.reason}' if fit.reason else ''}"
                )
