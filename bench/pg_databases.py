"""Creating and dropping the PostgreSQL databases the bench/ scripts run in (through the
server's `postgres` maintenance database)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def _maintenance(url: str) -> tuple[str, str]:
    """(the maintenance database's URL on `url`'s server, `url`'s database name)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/postgres")), parts.path.lstrip("/")


def create_database(url: str, *, if_missing: bool = False) -> bool:
    """Create `url`'s database; with `if_missing`, only when it does not exist yet. True if
    this call created it."""
    import psycopg

    admin, name = _maintenance(url)
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = "SELECT 1 FROM pg_database WHERE datname = %s"
        if if_missing and conn.execute(exists, [name]).fetchone():
            return False
        conn.execute(f'CREATE DATABASE "{name}"')
    return True


def drop_database(url: str) -> None:
    """Drop `url`'s database if it exists, whoever is connected to it."""
    import psycopg

    admin, name = _maintenance(url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
