"""`python manage.py standin_github [--host H] [--port P] [--client-id ID] [--client-secret S]`.

Runs the stand-in for GitHub's OAuth endpoints (accounts/github_standin.py) in the foreground, for
`make run` (scripts/run.sh) and manual checks: NOT GitHub, a loopback server that lets anyone
"sign in with GitHub" as a login they type. Podium reaches it when ``PODIUM_GITHUB_URL`` is its
address and ``GITHUB_CLIENT_ID`` / ``GITHUB_CLIENT_SECRET`` are the same pair (docs/accounts.md).
Ctrl-C or SIGTERM stops it cleanly (exit 0).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.github_standin import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, StandinGitHub
from core.standin import serve_until_stopped


class Command(BaseCommand):
    help = "Serve a local stand-in for GitHub's OAuth endpoints (not GitHub) until interrupted."
    # No system checks: a stand-in server touches no database, and the checks do (a generated
    # column's check asks the database what it supports), so it would not start where the
    # configured database is down or not created yet.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to bind")
        parser.add_argument("--port", type=int, default=8767, help="port to bind (0: any free)")
        parser.add_argument("--client-id", default=DEMO_CLIENT_ID, help="the OAuth app's id")
        parser.add_argument(
            "--client-secret", default=DEMO_CLIENT_SECRET, help="the OAuth app's secret"
        )

    def handle(self, *args: object, **options: object) -> None:
        try:
            server = StandinGitHub(
                client_id=options["client_id"],
                client_secret=options["client_secret"],
                host=options["host"],
                port=options["port"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None

        def announce() -> None:
            if options["verbosity"]:
                self.stdout.write(
                    "Stand-in GitHub (OAuth sign-in for the demo, NOT GitHub) listening on "
                    f"{server.url}"
                )
                self.stdout.flush()

        try:
            serve_until_stopped(server, announce=announce)
        except OSError as error:
            raise CommandError(
                f"cannot listen on {options['host']}:{options['port']}: {error}"
            ) from None
