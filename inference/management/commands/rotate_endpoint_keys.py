"""`python manage.py rotate_endpoint_keys`: re-encrypt every model endpoint's stored API key
(every keyed endpoint table: the re-runs', hosted evaluation's) under the first key of
PODIUM_FIELD_ENCRYPTION_KEYS (docs/deployment.md, "Rotating the encryption key"): put a new key
first, keep the old one after it, run this, then remove the old key. Safe to run again; it
prints how many keys it re-encrypted, never a key."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from core.encryption import DecryptionError
from inference.keys import rotate_keys


class Command(BaseCommand):
    help = "Re-encrypt the model endpoints' API keys under the newest encryption key."

    def handle(self, *args: object, **options: object) -> None:
        try:
            count = rotate_keys()
        except DecryptionError as error:
            raise CommandError(f"{error} Nothing was changed.") from None
        if options["verbosity"]:
            self.stdout.write(
                f"Re-encrypted {count} model endpoint key{'s' if count != 1 else ''}."
            )
