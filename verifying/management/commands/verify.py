"""`python manage.py verify SUBMISSION_ID [--note TEXT] [--force]`: move an entry to verified
from the shell, through the same one writer and evidence rule as the admin: an upload needs its
newest re-run done and within the tolerance (`--force` with `--note` verifies past a report
outside it), the maintainers' own result a note when it is verified again."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.exceptions import DomainError
from submissions.enums import VerificationStatus
from submissions.models import Submission
from submissions.next_step import next_step
from submissions.services import set_verification_status


class Command(BaseCommand):
    help = "Verify an entry (the re-run's report or the maintainers' note is checked)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("submission_id", type=int)
        parser.add_argument("--note", default="", help="kept in the audit trail")
        parser.add_argument(
            "--force",
            action="store_true",
            help="verify although the re-run's report is outside the tolerance (needs --note)",
        )

    def handle(self, *args: object, **options: object) -> None:
        submission = Submission.objects.filter(pk=options["submission_id"]).first()
        if submission is None:
            raise CommandError(f"There is no submission {options['submission_id']}.")
        try:
            set_verification_status(
                submission,
                VerificationStatus.VERIFIED,
                actor=None,
                note=options["note"],
                force=options["force"],
            )
        except DomainError as error:
            step = next_step(submission)
            then = f" Next step: {step.text}." if step is not None else ""
            raise CommandError(f"Not verified: {error}{then}") from None
        if options["verbosity"]:
            self.stdout.write(f"{submission.model_name!r} is verified: on the Official board.")
