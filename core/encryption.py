"""Secrets we hold for someone else, encrypted at rest: a model endpoint's API key.

PyCA `cryptography`'s Fernet (AES-128-CBC with an HMAC-SHA256 tag, a timestamped token) behind
`MultiFernet`, which is what rotation needs: the first key of `PODIUM_FIELD_ENCRYPTION_KEYS`
encrypts, every key decrypts, and `rotate` re-encrypts a token under the first key. The keys are
their own setting, never derived from SECRET_KEY, so rotating one does not touch the other
(docs/deployment.md, "Encryption keys").

A value is decrypted only where it is about to be used (`ModelEndpoint.config()`); nothing here
logs, and no error message carries a plaintext or a token.
"""

from __future__ import annotations

import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

SETTING = "PODIUM_FIELD_ENCRYPTION_KEYS"


class DecryptionError(Exception):
    """A stored token none of the configured keys opens (a key was removed too early, or the
    row was tampered with)."""


@functools.lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    # The settings validated each key (`config.env.env_fernet_keys`); an empty list is a
    # settings module that forgot the variable.
    if not keys:
        raise ImproperlyConfigured(f"{SETTING} is empty: set at least one Fernet key.")
    return MultiFernet([Fernet(key) for key in keys])


def _current() -> MultiFernet:
    # Keyed on the setting's value, so a test (or a reload) that changes it is honoured.
    return _fernet(tuple(getattr(settings, SETTING, ())))


def encrypt(plaintext: str) -> str:
    """A Fernet token (ASCII) for `plaintext`, under the first configured key."""
    return _current().encrypt(plaintext.encode()).decode("ascii")


def decrypt(token: str) -> str:
    """The plaintext of a token made by `encrypt` under any configured key."""
    try:
        return _current().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, UnicodeError):
        raise DecryptionError(
            f"A stored secret cannot be decrypted with the keys in {SETTING}; it was encrypted "
            "with a key that is no longer configured. Enter it again."
        ) from None


def rotate(token: str) -> str:
    """The same secret re-encrypted under the first configured key."""
    try:
        return _current().rotate(token.encode("ascii")).decode("ascii")
    except (InvalidToken, UnicodeError):
        raise DecryptionError(
            f"A stored secret cannot be decrypted with the keys in {SETTING}."
        ) from None
