"""Two processes write one SQLite file at once through Django, as `make run`'s web server and
worker do (issue 32, point 11: a first run's console showed `database is locked` tracebacks).

Each writer is a fresh interpreter configured with `database_config`, the function the settings
call, for each way of choosing SQLite: no DATABASE_URL, or an `sqlite:///` one. The writers meet
before their first transaction, which reads and then writes: each waits (a second at most) for
the other to have read as well. In a DEFERRED transaction both then hold a read snapshot and the
second to write fails at once, the busy timeout not consulted (SQLite refuses to upgrade a
read transaction that another writer got ahead of); in an IMMEDIATE one the second waits at its
BEGIN, and the first goes on after the second. Then each makes many small writes, in
transactions and outside them (the web server's sessions, the worker's results).
"""

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
WRITES = 150

WRITER = r"""
import json, sys, time
from pathlib import Path

import django
from django.conf import settings

from config.env import database_config

url, path, name, other, writes = sys.argv[1:6]
folder = Path(path).parent
settings.configure(
    DATABASES={"default": database_config(url or None, sqlite_path=Path(path))},
    INSTALLED_APPS=[],
)
django.setup()
from django.db import connection, transaction


def wait_for(flag, seconds):
    deadline = time.monotonic() + seconds
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.005)


if name == "setup":  # what `migrate` is to `make run`: the first connection, alone
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE entry (id INTEGER PRIMARY KEY, writer TEXT NOT NULL)")
        pragmas = {
            pragma: cursor.execute(f"PRAGMA {pragma}").fetchone()[0]
            for pragma in ("journal_mode", "busy_timeout", "synchronous")
        }
    print(json.dumps({**pragmas, "transaction_mode": connection.transaction_mode}))
    sys.exit()

(folder / f"{name}.ready").touch()
wait_for(folder / f"{other}.ready", 60)
with transaction.atomic():
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM entry")
        (folder / f"{name}.read").touch()
        wait_for(folder / f"{other}.read", 1)
        cursor.execute("INSERT INTO entry (writer) VALUES (%s)", [name])
for _ in range(int(writes)):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM entry WHERE writer = %s", [name])
        cursor.execute("INSERT INTO entry (writer) VALUES (%s)", [name])
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO entry (writer) VALUES (%s)", [name])
"""


def _writer(url: str, path: Path, name: str, other: str = "") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, url, str(path), name, other, str(WRITES)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


URLS = pytest.mark.parametrize("url", ["", "sqlite:///{path}"], ids=["unset", "sqlite-url"])


@pytest.mark.integration
@URLS
def test_the_sqlite_connection_the_settings_build(tmp_path, url):
    path = tmp_path / "podium.sqlite3"

    # WAL (readers go on beside a writer), a 30 s busy timeout, synchronous NORMAL (1) and
    # IMMEDIATE transactions.
    assert _set_up(url.format(path=path), path) == {
        "journal_mode": "wal",
        "busy_timeout": 30_000,
        "synchronous": 1,
        "transaction_mode": "IMMEDIATE",
    }


@pytest.mark.integration
@URLS
def test_two_processes_write_one_sqlite_file_without_database_is_locked(tmp_path, url):
    path = tmp_path / "podium.sqlite3"
    url = url.format(path=path)
    _set_up(url, path)

    writers = [_writer(url, path, "web", "worker"), _writer(url, path, "worker", "web")]
    ended = [(writer.communicate(timeout=120)[1], writer.returncode) for writer in writers]

    assert ended == [("", 0), ("", 0)]  # no traceback ("database is locked"), both exit 0
    assert _rows_by_writer(path) == {"web": 1 + 2 * WRITES, "worker": 1 + 2 * WRITES}


def _set_up(url: str, path: Path) -> dict[str, object]:
    """Create the table from one connection, alone (what `migrate` is to `make run`), and
    return that connection's settings."""
    setup = _writer(url, path, "setup")
    out, err = setup.communicate(timeout=60)
    assert setup.returncode == 0, err
    return json.loads(out)


def _rows_by_writer(path: Path) -> dict[str, int]:
    """The rows each writer left, read from the file after both ended."""
    with closing(sqlite3.connect(path)) as connection:
        return dict(connection.execute("SELECT writer, count(*) FROM entry GROUP BY writer"))
