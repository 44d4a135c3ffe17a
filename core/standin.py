"""The HTTP scaffolding every stand-in server shares: a threaded server on loopback that starts
and stops cleanly, JSON and page responses, a dropped connection on purpose, a log of the
requests it received, and serving in the foreground until Ctrl-C or SIGTERM.

A stand-in plays an outside service in tests and in the demo (`make run`): the judge model
(`judging.standin`), a submitted model (`verifying.standin`), both through the engine's chat
completions (`inference.standin`), and GitHub's OAuth endpoints (`accounts.github_standin`).
Clients talk to it over real HTTP, so the client code under test is the production code.

Stdlib only and no Django imports, so a stand-in runs anywhere: in a test thread, in a
subprocess, or in the foreground through its management command.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, ClassVar, Self

WILDCARD_HOSTS = ("", "0.0.0.0")
# The request log keeps the newest this many: a stand-in serving the demo for days stays small.
REQUEST_LOG_SIZE = 10_000


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it, before its body was read."""

    method: str
    path: str
    headers: dict[str, str]

    @property
    def authorization(self) -> str:
        """The Authorization header ("" when absent)."""
        return next(
            (value for name, value in self.headers.items() if name.lower() == "authorization"),
            "",
        )


class StandinHandler(BaseHTTPRequestHandler):
    """The request handler every stand-in's own handler extends: keep-alive HTTP/1.1 (which
    pooled clients expect), no log lines, the request logged on the server, and the replies."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms per response.
    disable_nagle_algorithm = True
    server: _Server

    @property
    def owner(self) -> Any:
        """The `StandinServer` this handler serves (each subclass knows its own type)."""
        return self.server.owner

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: a test's output, or the demo's terminal shared with runserver's log.
        pass

    def version_string(self) -> str:
        return self.owner.server_version

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        if parsed:
            self.owner._log(LoggedRequest(self.command, self.path, dict(self.headers.items())))
        return parsed

    def read_body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        return self.rfile.read(length) if length > 0 else b""

    def send_bytes(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> bool:
        """Write a response; False when the client has already gone (e.g. it timed out)."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True
            return False
        return True

    def send_json(
        self, status: int, payload: object, *, headers: dict[str, str] | None = None
    ) -> bool:
        return self.send_bytes(status, json.dumps(payload).encode(), "application/json", headers)

    def drop(self) -> None:
        """Close the connection without a byte of response, as a crashing proxy would."""
        self.close_connection = True
        with contextlib.suppress(OSError):  # the client may have gone already
            self.connection.shutdown(socket.SHUT_RDWR)


class StandinServer:
    """A stand-in's server: `with Server(...) as server: server.address`. `start()` binds and
    serves in a daemon thread; `stop()` closes the socket and cuts the open connections, so a
    stopped stand-in is down for its clients too; `start()` again serves on the same port.
    `requests` is every request received, in order (the newest `REQUEST_LOG_SIZE`). Subclasses
    set `handler`."""

    handler: ClassVar[type[StandinHandler]]
    thread_name: ClassVar[str] = "standin"
    server_version: ClassVar[str] = "Standin/1.0"

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self._requested_port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._requests: deque[LoggedRequest] = deque(maxlen=REQUEST_LOG_SIZE)

    def start(self) -> Self:
        """Bind the socket and serve in a daemon thread; returns self."""
        if self._server is not None:
            raise RuntimeError(f"the {type(self).__name__} is already running")
        self._server = _Server((self.host, self._requested_port), self.handler)
        self._server.owner = self
        # Bound now: a restart after `stop()` serves at the same address.
        self._requested_port = self._server.server_address[1]
        # A short poll interval keeps stop() fast (shutdown() waits for the next poll).
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: close the listening socket and cut open connections (requests still
        sleeping are abandoned)."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._server.close_connections()
        if self._thread is not None:
            self._thread.join()
        self._server = self._thread = None

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port it serves on (once started; before, the one it was asked for)."""
        return self._requested_port

    @property
    def address(self) -> str:
        """ "http://host:port", with a wildcard bind address replaced by one a client can
        connect to."""
        host = "127.0.0.1" if self.host in WILDCARD_HOSTS else self.host
        return f"http://{host}:{self.port}"

    @property
    def requests(self) -> list[LoggedRequest]:
        """A copy: every request received, in order (the newest `REQUEST_LOG_SIZE`)."""
        with self._lock:
            return list(self._requests)

    def _log(self, request: LoggedRequest) -> None:
        with self._lock:
            self._requests.append(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Clients run 50+ concurrent connections; the default backlog of 5 would refuse some.
    request_queue_size = 128
    owner: StandinServer

    def server_activate(self) -> None:
        super().server_activate()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Cut every kept-alive connection (pooled connections would otherwise still be
        served after the listening socket closed)."""
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    # SIGTERM takes the same clean way out as Ctrl-C.
    raise KeyboardInterrupt


def serve_until_stopped(server: StandinServer, *, announce: Callable[[], None]) -> None:
    """Serve in the foreground (a stand-in's management command): start `server`, call
    `announce` (the command's "listening on ..." line), and serve until Ctrl-C or SIGTERM,
    both a clean exit. `OSError` when the address cannot be bound."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with server:
            announce()
            while True:
                # Short sleeps: the kernel may hand SIGTERM to a server thread, and Python runs
                # the handler only once the main thread is awake; a long sleep would miss it.
                time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
