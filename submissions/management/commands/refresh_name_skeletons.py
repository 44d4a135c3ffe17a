"""`python manage.py refresh_name_skeletons [--dry-run]`

Recompute every entry's look-alike key (`model_name_skeleton`, docs/names.md) after the
confusables data changed, i.e. after upgrading pyicu-wheels: lists the entries whose key changes
and refuses to write while published entries of one benchmark would then look the same.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from submissions.names import refresh_name_skeletons


class Command(BaseCommand):
    help = "Recompute the look-alike keys of model names (after a confusables data upgrade)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report, write nothing")

    def handle(self, *args: object, **options: object) -> None:
        found = refresh_name_skeletons(dry_run=bool(options["dry_run"]))
        if options["verbosity"] > 1:  # type: ignore[operator]
            for pk, name, stored, key in found.changed:
                self.stdout.write(f"entry {pk} {name!r}: {stored!r} -> {key!r}")
        if found.clashes:
            groups = "; ".join(
                ", ".join(f"{pk} {name!r}" for pk, name in group) for group in found.clashes
            )
            raise CommandError(
                "Published entries whose model names would look the same on one benchmark "
                f"(id, name): {groups}. Rename or unpublish all but one of each group; "
                "nothing was written."
            )
        verb = "would change" if options["dry_run"] else "changed"
        self.stdout.write(f"{len(found.changed)} look-alike keys {verb}.")
