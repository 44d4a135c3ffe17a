"""`python manage.py standin_judge [--host H] [--port P] [--latency S] [--rate-429 R] ...`.

Runs the stand-in judge (judging/standin.py) in the foreground for the demo and for manual
checks: an OpenAI-compatible server whose verdicts are a hash of the prompt, NOT a real LLM.
Ctrl-C or SIGTERM stops it cleanly (exit 0).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.standin import serve_until_stopped
from judging.standin import Faults, StandinJudge


class Command(BaseCommand):
    help = "Serve the deterministic stand-in LLM judge (OpenAI-compatible) until interrupted."
    # No system checks: a stand-in server touches no database, and the checks do (a generated
    # column's check asks the database what it supports), so it would not start where the
    # configured database is down or not created yet.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to bind")
        parser.add_argument("--port", type=int, default=8765, help="port to bind (0: any free)")
        parser.add_argument(
            "--latency", type=float, default=0.0, help="seconds slept before every answer"
        )
        for kind in ("429", "500", "malformed", "drop"):
            parser.add_argument(
                f"--rate-{kind}",
                type=float,
                default=0.0,
                help=f"probability of a {kind} answer per request (deterministic from --seed)",
            )
        parser.add_argument("--seed", type=int, default=0, help="seed of the fault draws")

    def handle(self, *args: object, **options: object) -> None:
        faults = Faults(
            latency=options["latency"],
            rate_429=options["rate_429"],
            rate_500=options["rate_500"],
            rate_malformed=options["rate_malformed"],
            rate_drop=options["rate_drop"],
            seed=options["seed"],
        )
        judge = StandinJudge(host=options["host"], port=options["port"], faults=faults)

        def announce() -> None:
            if options["verbosity"]:
                self.stdout.write(
                    "Stand-in judge (deterministic verdicts, NOT a real LLM) listening on "
                    f"{judge.base_url}"
                )
                self.stdout.flush()

        try:
            serve_until_stopped(judge, announce=announce)
        except OSError as error:
            raise CommandError(
                f"cannot listen on {options['host']}:{options['port']}: {error}"
            ) from None
