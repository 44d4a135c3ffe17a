"""`python manage.py add_official_result --model NAME --values '{"CVS_acc": 0.9, ...}'
--source TEXT [--benchmark medvidbench] [--baseline] [--verified-at 2026-05-15]`

Put a result the maintainers produced themselves (a published baseline, a model they ran) on
the Official board, with where it came from recorded in the audit trail. Uses the same service
as the demo's import of the published rows (`import_published_result`).
"""

from __future__ import annotations

import json
from datetime import datetime, time

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from benchmark.models import Benchmark
from core.exceptions import DomainError
from submissions.services import import_published_result


class Command(BaseCommand):
    help = "Add a result the maintainers produced to a benchmark's Official board."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", default="medvidbench", help="the benchmark's slug")
        parser.add_argument("--model", required=True, help="the model's name on the board")
        parser.add_argument(
            "--values", required=True, help='the metrics as JSON, e.g. {"CVS_acc": 0.9}'
        )
        parser.add_argument(
            "--source",
            required=True,
            help="where the numbers come from (a paper, the maintainers' own run); audited",
        )
        parser.add_argument("--baseline", action="store_true", help="an off-the-shelf model (*)")
        parser.add_argument("--institution", default="")
        parser.add_argument("--model-url", default="")
        parser.add_argument("--verified-at", help="YYYY-MM-DD (default: today)")

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"There is no benchmark {options['benchmark']!r}.")
        try:
            values = json.loads(options["values"])
        except json.JSONDecodeError as error:
            raise CommandError(f"--values is not JSON: {error.msg}.") from None
        if not isinstance(values, dict) or not all(
            value is None or (isinstance(value, int | float) and not isinstance(value, bool))
            for value in values.values()
        ):
            raise CommandError("--values must be a JSON object of metric: number (or null).")
        verified_at = timezone.now()
        if options["verified_at"]:
            try:
                day = datetime.strptime(options["verified_at"], "%Y-%m-%d").date()
            except ValueError:
                raise CommandError("--verified-at must be YYYY-MM-DD.") from None
            verified_at = timezone.make_aware(datetime.combine(day, time(12)))
        source = options["source"].strip()
        if not source:
            raise CommandError("--source must say where the numbers come from.")
        try:
            submission = import_published_result(
                benchmark,
                model_name=options["model"],
                values={key: (None if v is None else float(v)) for key, v in values.items()},
                verified_at=verified_at,
                is_baseline=options["baseline"],
                institution=options["institution"],
                model_url=options["model_url"],
                note=f"added by a maintainer; source: {source}",
            )
        except DomainError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"{submission.model_name!r} is on the Official board of {benchmark.name} "
            f"(entry {submission.pk})."
        )
