"""`python manage.py judge SUBMISSION_ID [--rerun]`: run the LLM judge on a submission's latest
run in the foreground, with a progress bar.

A run waiting for the judge gets a job; a run already being judged has its job continued here
(unless a live worker holds it); `--rerun` judges a complete run again (cached verdicts cost
nothing). Uses the benchmark's active endpoint, like the background worker.
"""

from __future__ import annotations

import sys
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.exceptions import DomainError
from judging import services
from judging.enums import JobStatus
from submissions.enums import EvaluationStatus
from submissions.models import Submission
from submissions.selectors import latest_evaluation

BAR_WIDTH = 30


class Command(BaseCommand):
    help = "Run the LLM judge on a submission's latest run, in the foreground."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("submission_id", type=int)
        parser.add_argument(
            "--rerun", action="store_true", help="judge a complete run again (as a new run)"
        )

    def handle(self, *args: object, **options: object) -> None:
        submission = Submission.objects.filter(pk=options["submission_id"]).first()
        if submission is None:
            raise CommandError(f"There is no submission {options['submission_id']}.")
        evaluation = latest_evaluation(submission)
        if evaluation is None:
            raise CommandError(f"Submission {submission.pk} has no evaluation run.")
        try:
            if options["rerun"]:
                job = services.rerun_judge(evaluation, actor=None)
            elif evaluation.state == EvaluationStatus.JUDGING:
                job = services.active_job(evaluation)
                if job is None:
                    raise CommandError(f"Run {evaluation.pk} is judging but has no active job.")
            elif evaluation.state == EvaluationStatus.COMPLETE:
                raise CommandError(
                    f"Run {evaluation.pk} is complete already; use --rerun to judge it again."
                )
            else:
                job = services.start_judge(evaluation, enqueue=False)
        except DomainError as error:
            raise CommandError(str(error)) from None

        self.stdout.write(
            f"Judging run {job.evaluation_id} of {submission.model_name!r}: "
            f"{job.items_total} items, model {job.model} at {job.endpoint.base_url}"
        )
        started = time.monotonic()
        job = services.run_job(job.pk, on_progress=self.show)
        if sys.stdout.isatty():
            self.stdout.write("")
        if job is None:
            raise CommandError("Another worker is running this job now; try again later.")
        job.refresh_from_db()
        elapsed = time.monotonic() - started
        self.stdout.write(
            f"{job.get_status_display()} in {elapsed:.1f} s: {job.items_done} judged "
            f"({job.items_cached} from the cache), {job.items_failed} failed, {job.calls} calls, "
            f"{job.prompt_tokens + job.completion_tokens} tokens"
            + (f", about ${job.cost:.2f}" if job.cost is not None else "")
        )
        if job.state != JobStatus.DONE:
            raise CommandError(job.message or "The judge did not finish.")
        metrics = job.evaluation.metrics
        for name in ("DVC_llm", "VS_llm", "RC_llm"):
            value = metrics.get(name)
            self.stdout.write(f"  {name:<8} {'pending' if value is None else f'{value:.4f}'}")

    def show(self, progress: services.Progress) -> None:
        if not progress.total:
            return
        share = progress.finished / progress.total
        filled = int(share * BAR_WIDTH)
        line = (
            f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {progress.finished}/{progress.total}"
            f" judged, {progress.failed} failed, {progress.calls} calls"
        )
        if sys.stdout.isatty():
            self.stdout.write("\r" + line, ending="")
            self.stdout.flush()
        elif progress.finished == progress.total or progress.finished % 500 == 0:
            self.stdout.write(line)
