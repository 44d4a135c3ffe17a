"""`python manage.py rerun SUBMISSION_ID`: re-run an entry's model through its registered
endpoint in the foreground, with a progress line, and print the discrepancy report.

An entry whose authors granted access gets a new re-run; an entry being verified has its active
re-run continued here (unless a live worker holds it). Verifying stays a maintainer's click on
the report (the admin), or `verify_from_report`.
"""

from __future__ import annotations

import sys
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.exceptions import DomainError
from submissions.enums import VerificationStatus
from submissions.models import Submission
from verifying import services
from verifying.enums import RerunStatus

BAR_WIDTH = 30


class Command(BaseCommand):
    help = "Re-run an entry's model through its endpoint, in the foreground, and report."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("submission_id", type=int)

    def handle(self, *args: object, **options: object) -> None:
        submission = Submission.objects.filter(pk=options["submission_id"]).first()
        if submission is None:
            raise CommandError(f"There is no submission {options['submission_id']}.")
        self.verbosity = options["verbosity"]
        job = services.active_job(submission)
        try:
            if job is None:
                if submission.verification_status == VerificationStatus.VERIFYING:
                    raise CommandError(
                        f"{submission} is being verified and has no active re-run; move it back "
                        "to access granted to re-run it."
                    )
                job = services.start_rerun(submission, actor=None, enqueue=False)
        except DomainError as error:
            raise CommandError(str(error)) from None
        if self.verbosity:
            self.stdout.write(
                f"Re-running {submission.model_name!r}: {job.items_total} questions to "
                f"{job.endpoint.model} at {job.endpoint.base_url}, up to {job.max_frames} frames each"
            )
        started = time.monotonic()
        result = services.run_job(job.pk, on_progress=self.show)
        if sys.stdout.isatty() and self.verbosity:
            self.stdout.write("")
        if result is None:
            raise CommandError("Another worker is running this re-run now; try again later.")
        job.refresh_from_db()
        if self.verbosity:
            self.stdout.write(
                f"{job.get_status_display()} in {time.monotonic() - started:.1f} s: "
                f"{job.items_done} answered, {job.items_failed} failed, {job.calls} calls, "
                f"{job.prompt_tokens + job.completion_tokens} tokens"
            )
        if job.state != RerunStatus.DONE:
            raise CommandError(job.message or "The re-run did not finish.")
        self.report(job.report)

    def report(self, report: dict) -> None:
        self.stdout.write(f"{'metric':<14} {'self':>8} {'re-run':>8} {'diff':>8}  within")

        def shown(value: float | None) -> str:
            return "pending" if value is None else f"{value:.4f}"

        for row in report["rows"]:
            self.stdout.write(
                f"{row['metric']:<14} {shown(row['self_reported']):>8} {shown(row['rerun']):>8} "
                f"{shown(row['difference']):>8}  {row['status']}"
            )
        verdict = "all within" if report["all_within"] else "NOT all within"
        self.stdout.write(f"{verdict} ±{report['tolerance']:g}; {report['judge']}")

    def show(self, progress: services.Progress) -> None:
        if not progress.total or not self.verbosity:
            return
        filled = int(progress.finished / progress.total * BAR_WIDTH)
        line = (
            f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {progress.finished}/{progress.total}"
            f" answered, {progress.failed} failed, {progress.calls} calls"
        )
        if sys.stdout.isatty():
            self.stdout.write("\r" + line, ending="")
            self.stdout.flush()
        elif progress.finished == progress.total or progress.finished % 500 == 0:
            self.stdout.write(line)
