"""Hostile OpenAI-compatible endpoints on loopback, for the tests of what Podium does when the
endpoint it calls fights back (issue 31): one that redirects, one that quotes the key it was
sent, one whose answers are enormous, one that drips its reply a byte at a time, one that lies
about its token usage. Real HTTP servers (the client under test is the production code);
stdlib only.

    with HostileEndpoint(Redirect(target)) as endpoint:
        endpoint.base_url, endpoint.requests
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inference.standin import completion_body


def completion(text: str, *, prompt_tokens: Any = 10, completion_tokens: Any = 5) -> bytes:
    return json.dumps(
        completion_body(0, "hostile", text, prompt_tokens, completion_tokens)
    ).encode()


@dataclass
class Behaviour:
    """What the endpoint does with each chat request (a subclass overrides `reply`)."""

    def reply(self, handler: _Handler, authorization: str) -> None:
        handler.send_body(200, completion("A"))


@dataclass
class Redirect(Behaviour):
    """Every call answered with a redirect (`status`) to `target` + the request's path."""

    target: str
    status: int = 307

    def reply(self, handler: _Handler, authorization: str) -> None:
        handler.send_response(self.status)
        handler.send_header("Location", self.target + handler.path.removeprefix("/v1"))
        handler.send_header("Content-Length", "0")
        handler.end_headers()


@dataclass
class EchoKey(Behaviour):
    """Quotes the key it was sent: in a 401's error message, or (`in_answer`) in the answer."""

    in_answer: bool = False

    def reply(self, handler: _Handler, authorization: str) -> None:
        key = authorization.removeprefix("Bearer ")
        if self.in_answer:
            handler.send_body(200, completion(f"A. By the way, your key is {key} ({key[:12]}...)"))
        else:
            message = f"Invalid API key: {key}. Keys look like {key[:10]}...{key[-6:]}."
            handler.send_body(401, json.dumps({"error": {"message": message}}).encode())


@dataclass
class Giant(Behaviour):
    """Answers with `chars` characters, sent in 64 KiB pieces; `sent` adds up the bytes that
    went out before the client stopped reading (or all of them). The send buffer is held to
    64 KiB, so what `sent` counts beyond what the client read is what its receive buffer took
    (at most `receive_buffer_limit()`)."""

    chars: int
    sent: list[int] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)

    def bytes_sent(self, timeout: float = 10.0) -> int:
        """What the server wrote of its first answer, once it stopped writing: the client's
        close reaches the server's thread a moment after the client returned."""
        assert self.finished.wait(timeout), "the server never stopped writing"
        return self.sent[0]

    def reply(self, handler: _Handler, authorization: str) -> None:
        body = completion("A" * self.chars, completion_tokens=1)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        self.send_in_pieces(handler, body)

    def send_in_pieces(self, handler: _Handler, body: bytes) -> None:
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        sent = 0
        try:
            for start in range(0, len(body), 65536):
                handler.wfile.write(body[start : start + 65536])
                sent += len(body[start : start + 65536])
        except OSError:
            handler.close_connection = True
        self.sent.append(sent)
        self.finished.set()


SEND_BUFFER = 65536


def receive_buffer_limit() -> int:
    """The most a TCP receive buffer may grow to on this machine (the third figure of
    net.ipv4.tcp_rmem: 6 MB on many machines, 32 MB on others), or 64 MB where it cannot be
    read. Bytes a server wrote but the client never read can sit there, so a test that counts
    what a server wrote must allow for it."""
    try:
        with open("/proc/sys/net/ipv4/tcp_rmem") as figures:
            return int(figures.read().split()[2])
    except (OSError, IndexError, ValueError):
        return 64 * 1024 * 1024


@dataclass
class GiantUndeclared(Giant):
    """As `Giant`, without a Content-Length: the body ends when the connection closes."""

    def reply(self, handler: _Handler, authorization: str) -> None:
        body = completion("A" * self.chars, completion_tokens=1)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        self.send_in_pieces(handler, body)


@dataclass
class Drip(Behaviour):
    """Sends a valid reply one byte every `interval` seconds, headers and all, for at most
    `limit` seconds (then it gives up and closes): each byte arrives well inside any read
    timeout, so only a wall-clock deadline ends the call."""

    interval: float = 0.2
    limit: float = 60.0

    def reply(self, handler: _Handler, authorization: str) -> None:
        body = completion("A")
        head = (
            f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        handler.close_connection = True
        ends = time.monotonic() + self.limit
        try:
            for byte in head + body:
                if time.monotonic() > ends:
                    return
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(self.interval)
        except OSError:
            pass


@dataclass
class LyingUsage(Behaviour):
    """Answers `chars` characters and reports `prompt_tokens` and `completion_tokens` of its
    choosing (0, negative, absurd, not a number)."""

    chars: int
    prompt_tokens: Any = 0
    completion_tokens: Any = 0

    def reply(self, handler: _Handler, authorization: str) -> None:
        text = "A" + " a" * ((self.chars - 1) // 2)
        handler.send_body(
            200,
            completion(
                text,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
            ),
        )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        with self.server.lock:
            self.server.requests.append((self.path, self.headers.get("Authorization", "")))
        self.server.behaviour.reply(self, self.headers.get("Authorization", ""))

    def send_body(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    behaviour: Behaviour
    requests: list[tuple[str, str]]
    lock: threading.Lock


class HostileEndpoint:
    """A `behaviour` served on a free loopback port, in a thread, while the block runs.
    `requests` lists (path, Authorization) of every POST it received."""

    def __init__(self, behaviour: Behaviour | None = None) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.behaviour = behaviour or Behaviour()
        self._server.requests = []
        self._server.lock = threading.Lock()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[tuple[str, str]]:
        with self._server.lock:
            return list(self._server.requests)

    def __enter__(self) -> HostileEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
