"""The model endpoint's writes: registering one, changing one, and re-encrypting every stored
key under the newest encryption key. Split from `verifying.services` (which re-exports
`register_endpoint` and `active_endpoint`) because that module is past the house's size.

An API key is entered here and nowhere else: encrypted at once (`core.encryption`), bound to
the origin of the base URL it was entered for, never returned, audited only as "entered",
"kept", "dropped" or "forgotten". Who may do what is `verifying.permissions`; every function
checks it for a user `actor` (None is the system: a management command or a data script run
by someone who holds the server's secrets anyway).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from core import audit, encryption
from core.exceptions import DomainError
from submissions.models import Submission

from .models import ModelEndpoint
from .permissions import can_change_endpoint, can_register_endpoint, can_set_endpoint_key

CHANGEABLE_FIELDS = frozenset(
    {"base_url", "model", "concurrency", "max_attempts", "timeout_seconds"}
)
NOT_THE_KEY_HOLDER = (
    "Only the entry's owner or a superuser may enter or change the model endpoint's API key, "
    "or move an endpoint that has one to another address."
)


def active_endpoint(submission: Submission) -> ModelEndpoint | None:
    return submission.model_endpoints.filter(is_active=True).first()


def _check_fields(fields: dict[str, Any]) -> None:
    if "api_key_env" in fields:
        raise DomainError(
            "A model endpoint's API key is entered (and stored encrypted), never read from an "
            "environment variable of the server."
        )
    unknown = sorted(set(fields) - CHANGEABLE_FIELDS)
    if unknown:
        raise TypeError(f"Not a model endpoint setting: {', '.join(unknown)}")


@sensitive_variables("api_key")
def _set_key(endpoint: ModelEndpoint, api_key: str) -> None:
    endpoint.api_key_encrypted = encryption.encrypt(api_key)
    endpoint.api_key_origin = endpoint.origin
    endpoint.api_key_set_at = timezone.now()
    endpoint.api_key_needed = True


def _drop_key(endpoint: ModelEndpoint, *, needed: bool) -> None:
    endpoint.api_key_encrypted = ""
    endpoint.api_key_origin = ""
    endpoint.api_key_set_at = None
    endpoint.api_key_needed = needed


@sensitive_variables("api_key")
def register_endpoint(
    submission: Submission,
    *,
    actor: Any,
    base_url: str,
    model: str,
    api_key: str = "",
    **fields: Any,
) -> ModelEndpoint:
    """Register the model's endpoint for an entry and make it the active one (an earlier one
    stays, with its key, for the jobs that used it). `api_key` ("" for none) is encrypted and
    bound to `base_url`'s origin. `fields`: concurrency, max_attempts, timeout_seconds.
    Refused: `PermissionDenied` for a user who may not register (or may not enter a key),
    `ValidationError` for a bad row. Writes an audit row (never the key)."""
    _check_fields(fields | {"base_url": base_url, "model": model})
    api_key = api_key.strip()
    if actor is not None:
        if not can_register_endpoint(actor, submission):
            raise PermissionDenied("You may not register a model endpoint for this entry.")
        if api_key and not can_set_endpoint_key(actor, submission):
            raise PermissionDenied(NOT_THE_KEY_HOLDER)
    with transaction.atomic():
        ModelEndpoint.objects.filter(submission=submission, is_active=True).update(is_active=False)
        endpoint = ModelEndpoint(
            submission=submission,
            base_url=base_url.strip(),
            model=model.strip(),
            created_by=actor if getattr(actor, "is_authenticated", False) else None,
            **fields,
        )
        endpoint.full_clean()
        if api_key:
            _set_key(endpoint, api_key)
        endpoint.save()
        audit.record(
            "verifying.endpoint.created",
            actor=actor,
            target=endpoint,
            submission=submission.pk,
            base_url=endpoint.base_url,
            model=endpoint.model,
            api_key="entered" if api_key else "none",
        )
    return endpoint


@sensitive_variables("api_key")
def change_endpoint(
    endpoint: ModelEndpoint,
    *,
    actor: Any,
    api_key: str = "",
    forget_key: bool = False,
    **fields: Any,
) -> ModelEndpoint:
    """Correct an endpoint in place (the admin's change form). `api_key` (blank: keep the
    current one) replaces the key; `forget_key` removes it (the endpoint then wants none). A
    base URL moved to another origin (scheme, host, port) drops the key unless a new one comes
    with it: a key never follows an address it was not entered for. Refused
    (`PermissionDenied`) when a user who is not the key's holder touches the key or moves a
    keyed endpoint. Writes an audit row (never the key)."""
    _check_fields(fields)
    api_key = api_key.strip()
    with transaction.atomic():
        locked = ModelEndpoint.objects.select_for_update().get(pk=endpoint.pk)
        before = {name: getattr(locked, name) for name in fields}
        changed = {name for name, value in fields.items() if before[name] != value}
        if actor is not None:
            touches_key = bool(api_key) or forget_key
            if touches_key and not can_set_endpoint_key(actor, locked.submission):
                raise PermissionDenied(NOT_THE_KEY_HOLDER)
            if not can_change_endpoint(actor, locked, base_url="base_url" in changed):
                raise PermissionDenied(NOT_THE_KEY_HOLDER)
        old_origin = locked.api_key_origin
        for name, value in fields.items():
            setattr(locked, name, value.strip() if isinstance(value, str) else value)
        locked.full_clean(exclude=["submission"], validate_constraints=False)
        if api_key:
            _set_key(locked, api_key)
            key = "entered"
        elif forget_key:
            _drop_key(locked, needed=False)
            key = "forgotten"
        elif locked.has_api_key and locked.origin != old_origin:
            _drop_key(locked, needed=True)
            key = "dropped: the address moved to another host"
        else:
            key = "kept" if locked.has_api_key else "none"
        locked.save()
        audit.record(
            "verifying.endpoint.updated",
            actor=actor,
            target=locked,
            changed=sorted(changed),
            base_url=locked.base_url,
            model=locked.model,
            api_key=key,
        )
    endpoint.refresh_from_db()
    return locked


def rotate_endpoint_keys() -> int:
    """Re-encrypt every stored API key under the first key of PODIUM_FIELD_ENCRYPTION_KEYS
    (after a new key was put first), so the old key can then be removed. Returns how many."""
    with transaction.atomic():
        endpoints = list(
            ModelEndpoint.objects.select_for_update().exclude(api_key_encrypted="").order_by("pk")
        )
        for endpoint in endpoints:
            endpoint.api_key_encrypted = encryption.rotate(endpoint.api_key_encrypted)
        ModelEndpoint.objects.bulk_update(endpoints, ["api_key_encrypted"], batch_size=500)
        audit.record(
            "verifying.endpoint.keys_rotated", actor=None, target=None, endpoints=len(endpoints)
        )
    return len(endpoints)
