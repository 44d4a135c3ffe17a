from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A person on Podium: a submitter, a maintainer, or both.

    Nothing beyond Django's user yet. It exists from the first migration so fields (and GitHub
    sign-in) can be added later without swapping ``AUTH_USER_MODEL``, which Django cannot migrate.
    """


class ApiToken(models.Model):
    """A personal API token for scripts (`Authorization: Bearer pod_...`).

    The token is shown once, when it is created; only its sha256 is stored (a token is 256 random
    bits, so a fast hash is enough: nothing can be guessed from it). `prefix` is the token's
    first characters, shown so a person can tell their tokens apart. A revoked token stays, for
    the record, and no longer authenticates. Written by `accounts.services` only.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
