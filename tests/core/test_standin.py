"""The stand-ins' shared HTTP scaffolding (`core.standin`) over real loopback HTTP: start, stop
(open connections cut), a restart at the same address, the request log, the replies, and
serving in the foreground until SIGTERM."""

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from core.standin import StandinHandler, StandinServer, serve_until_stopped

pytestmark = pytest.mark.integration


class EchoHandler(StandinHandler):
    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/drop":
            self.drop()
        else:
            self.send_json(200, {"path": self.path})

    def do_POST(self) -> None:  # noqa: N802
        self.send_bytes(201, self.read_body(), "text/plain", {"X-Seen": "yes"})


class Echo(StandinServer):
    handler = EchoHandler
    server_version = "Echo/1.0"


def request(server: Echo, method: str, path: str, body: bytes | None = None, **headers):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=2)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_it_serves_replies_and_logs_every_request_in_order():
    with Echo() as server:
        assert server.address == f"http://127.0.0.1:{server.port}"
        status, headers, body = request(server, "GET", "/a")
        assert (status, body, headers["Server"]) == (200, b'{"path": "/a"}', "Echo/1.0")
        status, headers, body = request(server, "POST", "/b", b"hello", Authorization="Bearer k")
        assert (status, body, headers["X-Seen"], headers["Content-Type"]) == (
            201,
            b"hello",
            "yes",
            "text/plain",
        )

        log = server.requests

    assert [(r.method, r.path, r.authorization) for r in log] == [
        ("GET", "/a", ""),
        ("POST", "/b", "Bearer k"),
    ]


def test_a_dropped_connection_gets_no_byte():
    with Echo() as server, pytest.raises(http.client.RemoteDisconnected):
        request(server, "GET", "/drop")


def test_stop_cuts_kept_alive_connections_and_start_serves_the_same_port_again():
    server = Echo().start()
    port = server.port
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    connection.request("GET", "/kept")
    assert connection.getresponse().read() == b'{"path": "/kept"}'

    def ask_again() -> None:
        connection.request("GET", "/after")
        connection.getresponse()

    server.stop()
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        ask_again()
    connection.close()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass

    server.start()
    try:
        assert (server.port, request(server, "GET", "/back")[0]) == (port, 200)
        with pytest.raises(RuntimeError, match="already running"):
            server.start()
    finally:
        server.stop()
    server.stop()  # stopping a stopped server is harmless


def test_a_wildcard_bind_is_addressed_on_loopback():
    with Echo(host="0.0.0.0") as server:
        assert server.address == f"http://127.0.0.1:{server.port}"
        assert request(server, "GET", "/x")[0] == 200


PROGRAM = """
import sys
from core.standin import StandinHandler, StandinServer, serve_until_stopped

class Quiet(StandinServer):
    handler = StandinHandler

server = Quiet()
serve_until_stopped(server, announce=lambda: print(server.port, flush=True))
print("stopped", flush=True)
"""


def test_serving_in_the_foreground_ends_cleanly_on_sigterm(repo_root):
    process = subprocess.Popen(
        [sys.executable, "-c", PROGRAM],
        cwd=repo_root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(repo_root), *sys.path])},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(process.stdout.readline())
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)

    assert (process.returncode, out, err) == (0, "stopped\n", "")


def test_a_busy_address_is_an_oserror_before_anything_is_announced():
    announced = threading.Event()
    with Echo() as taken:
        busy = Echo(port=taken.port)
        with pytest.raises(OSError, match="in use"):
            serve_until_stopped(busy, announce=announced.set)
    assert (announced.is_set(), busy.running) == (False, False)
