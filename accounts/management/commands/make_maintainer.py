"""`python manage.py make_maintainer USERNAME [--create --email ADDRESS]`: give an account the
maintainer role (staff in the Maintainers group, not a superuser), as `createsuperuser` does
for superusers. `--create` makes the account first and asks for its password (or reads
PODIUM_MAINTAINER_PASSWORD, for scripts).
"""

from __future__ import annotations

import getpass
import os

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.services import make_maintainer


class Command(BaseCommand):
    help = "Give an account the maintainer role (staff in the Maintainers group)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--create", action="store_true", help="create the account first")
        parser.add_argument("--email", default="", help="the new account's email (--create)")

    def handle(self, *args: object, **options: object) -> None:
        users = get_user_model()
        username = str(options["username"])
        user = users.objects.filter(username=username).first()
        if user is None and not options["create"]:
            raise CommandError(f"There is no account {username!r} (add --create to make one).")
        if user is not None and options["create"]:
            raise CommandError(f"The account {username!r} exists already; leave out --create.")
        if user is None:
            password = os.environ.get("PODIUM_MAINTAINER_PASSWORD") or getpass.getpass()
            candidate = users(username=username, email=str(options["email"]))
            try:
                validate_password(password, candidate)
            except ValidationError as error:
                raise CommandError(" ".join(error.messages)) from None
            user = users.objects.create_user(username, str(options["email"]), password)
        make_maintainer(user)
        self.stdout.write(
            self.style.SUCCESS(
                f"{username} is a maintainer: staff in the Maintainers group (not a superuser)."
            )
        )
