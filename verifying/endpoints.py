"""The model endpoint's writes: registering one and changing one. Split from
`verifying.services` (which re-exports `register_endpoint` and `active_endpoint`) because that
module is past the house's size.

An API key is entered here and nowhere else: the engine's key writer (`inference.keys`)
encrypts it at once, binds it to the origin of the base URL it was entered for, never returns
it, and says only whether it was "entered", "kept", "dropped" or "forgotten" (which the audit
row records). Who may do what is `verifying.permissions`; every function checks it for a user
`actor` (None is the system: a management command or a data script run by someone who holds
the server's secrets anyway). Re-encrypting every key under a new encryption key is
`inference.keys.rotate_keys` (`manage.py rotate_endpoint_keys`).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from core import audit
from inference import keys
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
    keys.check_fields(fields, CHANGEABLE_FIELDS, endpoint_name=ModelEndpoint.endpoint_name)


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
        endpoint = keys.new_endpoint(
            ModelEndpoint,
            api_key=api_key,
            submission=submission,
            base_url=base_url.strip(),
            model=model.strip(),
            created_by=actor if getattr(actor, "is_authenticated", False) else None,
            **fields,
        )
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
    with it: a key never follows an address it was not entered for
    (`inference.keys.change_endpoint`). Refused (`PermissionDenied`) when a user who is not the
    key's holder touches the key or moves a keyed endpoint. Writes an audit row (never the
    key)."""
    _check_fields(fields)
    api_key = api_key.strip()
    with transaction.atomic():
        locked = ModelEndpoint.objects.select_for_update().get(pk=endpoint.pk)
        changed = keys.changed_fields(locked, fields)
        if actor is not None:
            touches_key = bool(api_key) or forget_key
            if touches_key and not can_set_endpoint_key(actor, locked.submission):
                raise PermissionDenied(NOT_THE_KEY_HOLDER)
            if not can_change_endpoint(actor, locked, base_url="base_url" in changed):
                raise PermissionDenied(NOT_THE_KEY_HOLDER)
        key = keys.change_endpoint(
            locked, fields=fields, api_key=api_key, forget_key=forget_key, exclude=["submission"]
        )
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
