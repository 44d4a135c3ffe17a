"""Read settings from the environment (12-factor).

Plain functions, so tests can call them without reloading Django's settings. ``require`` is what
makes ``prod`` fail fast: a missing variable stops the process at import time with its name.
"""

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    """The variable's value, or ``default`` when it is unset."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    """``1/true/yes/on`` or ``0/false/no/off`` (any case); anything else is a configuration error."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false).")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """A comma-separated list; blanks are dropped, so ``"a, b,"`` is ``["a", "b"]``."""
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_fernet_keys(name: str, default: list[str] | None = None) -> list[str]:
    """A comma-separated list of Fernet keys (the first encrypts, all decrypt: rotation).
    ``ImproperlyConfigured`` names the position of a malformed key, never the key itself."""
    # Imported here: only the settings that read encryption keys need cryptography.
    from cryptography.fernet import Fernet

    keys = env_list(name, default)
    for position, key in enumerate(keys, start=1):
        try:
            Fernet(key)
        except (ValueError, TypeError):
            raise ImproperlyConfigured(
                f"{name}: key {position} is not a Fernet key (32 url-safe base64-encoded bytes; "
                'make one with: python -c "from cryptography.fernet import Fernet; '
                'print(Fernet.generate_key().decode())").'
            ) from None
    return keys


def env_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name, "").strip()
    return Path(raw).expanduser().resolve() if raw else default


def site_url_from_address(address: str) -> str:
    """The site's URL for links (no trailing slash) from the address ``runserver`` is given.

    ``address`` is what ``make run`` passes on (``PODIUM_ADDRESS``): ``host:port``,
    ``[ipv6]:port`` or a bare port. A wildcard host (``0.0.0.0``, ``[::]``) names no address a
    reader can open, so the link goes to the loopback with the same port; a server reached under
    another name sets ``PODIUM_SITE_URL``.
    """
    host, _, port = address.strip().rpartition(":")
    if not host:  # a bare port, as runserver takes it: runserver listens on 127.0.0.1
        host = "127.0.0.1"
    if host in {"0.0.0.0", "0", "[::]"}:
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def require(name: str) -> str:
    """The variable's value; raises ``ImproperlyConfigured`` naming it when unset or blank."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"The environment variable {name} is required in production.")
    return value


# The web server and the worker's processes write at once (scoring, judge jobs, hosted requests,
# re-runs): WAL lets readers go on beside a writer, IMMEDIATE takes the write lock at BEGIN (a
# DEFERRED transaction that reads and then writes fails at once when another writer got ahead
# of it, whatever the timeout), and a writer waits up to 30 s for another instead of failing.
SQLITE_OPTIONS: dict[str, Any] = {
    "timeout": 30,
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}


def database_config(database_url: str | None, *, sqlite_path: Path) -> dict[str, Any]:
    """``DATABASES["default"]`` for ``database_url``, or an SQLite file when it is unset or blank.

    SQLite is the embedded default so ``make run`` works on a fresh machine with nothing else
    running; PostgreSQL (``postgres://user@host:5432/name``) is what production and CI use.
    SQLite gets ``SQLITE_OPTIONS`` however it is chosen: unset, or ``sqlite:///path`` (options
    in the URL's query string win). An SQLite URL used to get none of them: a rollback journal,
    DEFERRED transactions and Python's 5 s timeout, and so `database is locked` tracebacks on
    a first run (issue 32, point 11).
    """
    if not (database_url and database_url.strip()):
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(sqlite_path),
            "OPTIONS": dict(SQLITE_OPTIONS),
        }
    # conn_max_age: keep connections across requests; health checks drop dead ones.
    config = dj_database_url.parse(database_url.strip(), conn_max_age=60, conn_health_checks=True)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
    return config
