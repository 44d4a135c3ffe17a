"""The one writer of a keyed endpoint's API key fields (`inference.models.KeyedEndpoint`):
entering a key, dropping it, building or changing an endpoint with its key, and re-encrypting
every stored key under the newest encryption key.

A key is encrypted at once (`core.encryption`), bound to the origin of the base URL it was
entered for, never returned, and described only as "entered", "kept", "dropped" or
"forgotten" (the word the caller's audit row records). Who may enter or change a key is the
caller's (`verifying.endpoints` checks its permissions, then calls these), and so is the
transaction and the audit row, except for `rotate_keys`, which is whole in itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.apps import apps
from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from core import audit, encryption
from core.exceptions import DomainError

from .models import KeyedEndpoint

KEY_MOVED = "dropped: the address moved to another host"


def check_fields(
    fields: Mapping[str, Any], changeable: Iterable[str], *, endpoint_name: str
) -> None:
    """Refuse a key read from the server's environment (`DomainError`: a keyed endpoint's key
    is entered, never named) and any field the caller does not let change (`TypeError`: a
    programming error, not an input one)."""
    if "api_key_env" in fields:
        raise DomainError(
            f"A {endpoint_name}'s API key is entered (and stored encrypted), never read from an "
            "environment variable of the server."
        )
    unknown = sorted(set(fields) - set(changeable))
    if unknown:
        raise TypeError(f"Not a {endpoint_name} setting: {', '.join(unknown)}")


@sensitive_variables("api_key")
def set_key(endpoint: KeyedEndpoint, api_key: str) -> None:
    """Encrypt `api_key` into the endpoint, bound to its base URL's origin (not saved)."""
    endpoint.api_key_encrypted = encryption.encrypt(api_key)
    endpoint.api_key_origin = endpoint.origin
    endpoint.api_key_set_at = timezone.now()
    endpoint.api_key_needed = True


def drop_key(endpoint: KeyedEndpoint, *, needed: bool) -> None:
    """Remove the key (not saved); `needed`: the endpoint still wants one before it is used."""
    endpoint.api_key_encrypted = ""
    endpoint.api_key_origin = ""
    endpoint.api_key_set_at = None
    endpoint.api_key_needed = needed


@sensitive_variables("api_key")
def new_endpoint[E: KeyedEndpoint](table: type[E], /, *, api_key: str = "", **fields: Any) -> E:
    """An unsaved endpoint of the model class `table` with `fields` (`model` among them: the
    name the endpoint serves), checked (`full_clean`: `ValidationError` for a bad row), its key
    ("" for none) encrypted and bound to the base URL's origin."""
    endpoint = table(**fields)
    endpoint.full_clean()
    if api_key:
        set_key(endpoint, api_key)
    return endpoint


def changed_fields(endpoint: KeyedEndpoint, fields: Mapping[str, Any]) -> set[str]:
    """The names among `fields` whose value differs from the endpoint's."""
    return {name for name, value in fields.items() if getattr(endpoint, name) != value}


@sensitive_variables("api_key")
def change_endpoint(
    endpoint: KeyedEndpoint,
    *,
    fields: Mapping[str, Any],
    api_key: str = "",
    forget_key: bool = False,
    exclude: Iterable[str] = (),
) -> str:
    """Apply `fields` (strings stripped) to an endpoint the caller has locked, check it
    (`full_clean` without `exclude` and the constraints), and settle its key: `api_key` replaces
    it, `forget_key` removes it (the endpoint then wants none), and a base URL moved to another
    origin (scheme, host, port) drops it unless a new one comes with it: a key never follows an
    address it was not entered for. Not saved. Returns what became of the key, for the audit
    row: "entered", "forgotten", `KEY_MOVED`, "kept" or "none"."""
    old_origin = endpoint.api_key_origin
    for name, value in fields.items():
        setattr(endpoint, name, value.strip() if isinstance(value, str) else value)
    endpoint.full_clean(exclude=list(exclude), validate_constraints=False)
    if api_key:
        set_key(endpoint, api_key)
        return "entered"
    if forget_key:
        drop_key(endpoint, needed=False)
        return "forgotten"
    if endpoint.has_api_key and endpoint.origin != old_origin:
        drop_key(endpoint, needed=True)
        return KEY_MOVED
    return "kept" if endpoint.has_api_key else "none"


def keyed_endpoint_models() -> list[type[KeyedEndpoint]]:
    """Every table of keyed endpoints (the model endpoints of re-runs, of hosted evaluation)."""
    return [
        model
        for model in apps.get_models()
        if issubclass(model, KeyedEndpoint) and not model._meta.abstract
    ]


def rotate_keys() -> int:
    """Re-encrypt every stored API key of every keyed endpoint table under the first key of
    PODIUM_FIELD_ENCRYPTION_KEYS (after a new key was put first), so the old key can then be
    removed. One transaction: a key no configured key opens (`DecryptionError`) changes
    nothing. Writes one audit row per table (`<app>.endpoint.keys_rotated`, with the count,
    never a key). Returns how many keys were re-encrypted."""
    total = 0
    with transaction.atomic():
        for model in keyed_endpoint_models():
            endpoints = list(
                model.objects.select_for_update().exclude(api_key_encrypted="").order_by("pk")
            )
            for endpoint in endpoints:
                endpoint.api_key_encrypted = encryption.rotate(endpoint.api_key_encrypted)
            model.objects.bulk_update(endpoints, ["api_key_encrypted"], batch_size=500)
            audit.record(
                f"{model._meta.app_label}.endpoint.keys_rotated",
                actor=None,
                target=None,
                endpoints=len(endpoints),
            )
            total += len(endpoints)
    return total
