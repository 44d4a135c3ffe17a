"""Writes for accounts: personal API tokens (created and revoked by their owner, audited)."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone

from core import audit
from core.exceptions import DomainError

from .models import ApiToken

TOKEN_PREFIX = "pod_"
SHOWN_PREFIX_LENGTH = len(TOKEN_PREFIX) + 6
MAX_ACTIVE_TOKENS = 20


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def create_api_token(user: Any, *, name: str) -> tuple[ApiToken, str]:
    """A new token for `user`; returns it and the raw token, which is never stored or shown
    again. `DomainError` for a blank name or too many active tokens."""
    name = name.strip()
    if not name:
        raise DomainError("Give the token a name, e.g. the machine or script that uses it.")
    with transaction.atomic():
        active = ApiToken.objects.select_for_update().filter(user=user, revoked_at__isnull=True)
        if active.count() >= MAX_ACTIVE_TOKENS:
            raise DomainError(
                f"You have {MAX_ACTIVE_TOKENS} active tokens; revoke one you no longer use."
            )
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = ApiToken.objects.create(
            user=user, name=name[:100], prefix=raw[:SHOWN_PREFIX_LENGTH], key_hash=hash_token(raw)
        )
        audit.record("accounts.api_token.created", actor=user, target=token, name=token.name)
    return token, raw


def revoke_api_token(token: ApiToken, *, actor: Any) -> ApiToken:
    """Revoke a token (idempotent); it stops authenticating at once."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().get(pk=token.pk)
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            audit.record("accounts.api_token.revoked", actor=actor, target=token, name=token.name)
    return token


def make_maintainer(user: Any, *, actor: Any = None) -> Any:
    """Give `user` the maintainer role (docs/maintainers.md, "Roles"): staff, in the
    Maintainers group with exactly its permissions (repaired if missing). Not a superuser.
    Audited as `accounts.user.made_maintainer`; a user who has the role already is unchanged.
    """
    from .roles import MAINTAINERS_GROUP, ensure_maintainers_group

    with transaction.atomic():
        group = ensure_maintainers_group()
        already = user.is_staff and user.groups.filter(name=MAINTAINERS_GROUP).exists()
        if already:
            return user
        if not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        user.groups.add(group)
        audit.record("accounts.user.made_maintainer", actor=actor, target=user)
    return user
