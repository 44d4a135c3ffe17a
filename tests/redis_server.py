"""A real Redis for the tests that need one (the throttles' Redis log, the Redis task broker).

`PODIUM_TEST_REDIS_URL` names a running server to use (database 15 is a good choice: the tests
delete only their own keys, under prefixes of their own, and never flush; `.ci/run` starts one
for its run and sets it). Without it, the session starts its own `redis-server` on a free
loopback port, with no persistence, and stops it at the end, so `make test` needs no Redis
running beforehand, only the `redis-server` program installed (Debian: `apt-get install
redis-server`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.processes import stop_process_group


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_url() -> Iterator[str]:
    """The URL of a Redis the tests may use (database 15), starting one if none is named."""
    named = os.environ.get("PODIUM_TEST_REDIS_URL", "").strip()
    if named:
        yield named
        return
    program = shutil.which("redis-server")
    if program is None:
        raise RuntimeError(
            "These tests need Redis: install redis-server (Debian: apt-get install redis-server) "
            "or set PODIUM_TEST_REDIS_URL to a running server."
        )
    port = _free_port()
    with tempfile.TemporaryDirectory() as folder:
        process = subprocess.Popen(
            [
                program,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                folder,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 10
            while not _answers(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {port}")
                time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/15"
        finally:
            stop_process_group(process, timeout=5)
