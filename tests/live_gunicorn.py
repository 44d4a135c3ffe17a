"""A real ``gunicorn config.wsgi`` with several worker processes on loopback, for tests (and
bench/api.py) that need what only separate processes show: counts that must hold across workers.

``gunicorn_server`` starts it in its own process group, waits until it answers, yields a
``LiveGunicorn`` (its base URL, and which worker process answered each request, read from the
access log), and stops it. ``database_env_for_test`` points it at the database of the running test
(PostgreSQL, with ``django_db(transaction=True)`` so that what the test writes is committed).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.processes import stop_process_group

PROJECT_ROOT = Path(__file__).resolve().parents[1]
GUNICORN = PROJECT_ROOT / ".venv" / "bin" / "gunicorn"
# The access log line: the worker's pid, the request line, the status.
ACCESS_LOG_FORMAT = '%(p)s "%(r)s" %(s)s'
ACCESS_LINE = re.compile(r'^<(\d+)> "(\S+) (\S+) [^"]*" (\d{3})$')


@dataclass(frozen=True)
class LiveGunicorn:
    url: str
    workers: int
    access_log: Path
    process: subprocess.Popen

    def answers(
        self, path: str | None = None, *, at_least: int = 0, timeout: float = 10.0
    ) -> list[tuple[int, str, str, int]]:
        """(worker pid, method, path, status) of every request answered so far (to `path`, if
        given), in order. A worker writes its line just after sending the response: `at_least`
        waits up to `timeout` seconds for that many."""
        deadline = time.monotonic() + timeout
        while True:
            rows = []
            for line in self.access_log.read_text().splitlines():
                if match := ACCESS_LINE.match(line.strip()):
                    pid, method, answered, status = match.groups()
                    if path is None or answered == path:
                        rows.append((int(pid), method, answered, int(status)))
            if len(rows) >= at_least or time.monotonic() > deadline:
                return rows
            time.sleep(0.05)


def free_port() -> int:
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_env_for_test() -> dict[str, str]:
    """DATABASE_URL of the test database this pytest process uses (PostgreSQL only: an SQLite
    test database lives in this process's memory)."""
    from django.db import connection

    database = connection.settings_dict
    return {
        "DATABASE_URL": (
            f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
            f"{database['PORT'] or 5432}/{database['NAME']}"
        )
    }


def wait_until_up(url: str, process: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until `url` answers at all (any status); fails if gunicorn exits or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer {url} within {timeout:.0f} s")


def wait_until_every_worker_answers(server: LiveGunicorn, path: str, timeout: float = 90.0) -> None:
    """Until each worker has answered a request (they boot one after another, slowly on a busy
    machine): before that, "across workers" would mean across the one that is up. Concurrent
    probes, because one idle worker tends to take every sequential request."""
    deadline = time.monotonic() + timeout

    def probe(_: int) -> None:
        with contextlib.suppress(OSError), urllib.request.urlopen(server.url + path, timeout=30):
            pass

    while len({pid for pid, *_ in server.answers()}) < server.workers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"not every one of {server.workers} gunicorn workers answered")
        with ThreadPoolExecutor(max_workers=2 * server.workers) as pool:
            list(pool.map(probe, range(2 * server.workers)))


@contextlib.contextmanager
def gunicorn_server(
    *,
    workers: int = 4,
    env: dict[str, str] | None = None,
    settings_module: str = "config.settings.test",
    # Not an API path: a probe that timed out on a slow start would still be counted by the
    # API's throttles after the test started counting.
    ready_path: str = "/accounts/login/",
    stderr: Path | None = None,
) -> Iterator[LiveGunicorn]:
    """``gunicorn config.wsgi -w <workers>`` on a free loopback port with `settings_module` and the
    current environment plus `env`; stopped (the whole process group) on exit. Its standard
    error (Django's log) goes to the file `stderr`, if given, else nowhere."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="podium-gunicorn-") as folder:
        access_log = Path(folder) / "access.log"
        access_log.touch()
        command = [
            str(GUNICORN),
            "config.wsgi",
            *("-w", str(workers), "-b", f"127.0.0.1:{port}"),
            *("--access-logfile", str(access_log), "--access-logformat", ACCESS_LOG_FORMAT),
            # A slow shared machine: a worker busy for a while is not dead.
            *("--timeout", "120", "--graceful-timeout", "5"),
        ]
        process_env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": settings_module,
            "ALLOWED_HOSTS": "127.0.0.1",
            "LOG_LEVEL": "WARNING",
            **(env or {}),
        }
        error_file = stderr.open("wb") if stderr else None
        process = subprocess.Popen(
            command,
            cwd=PROJECT_ROOT,
            env=process_env,
            stdout=subprocess.DEVNULL,
            stderr=error_file or subprocess.DEVNULL,
            start_new_session=True,
        )
        server = LiveGunicorn(
            url=f"http://127.0.0.1:{port}",
            workers=workers,
            access_log=access_log,
            process=process,
        )
        try:
            wait_until_up(server.url + ready_path, process)
            wait_until_every_worker_answers(server, ready_path)
            yield server
        finally:
            stop_process_group(process)
            if error_file:
                error_file.close()
