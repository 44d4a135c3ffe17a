"""The one way Podium reaches a URL someone else chose (docs/inference.md, "Calling the outside
world"): every endpoint call of the judge, a re-run and hosted evaluation goes through a
`Transport`, and the rules below hold for all of them because they are enforced where the
bytes move, not where a URL is typed in.

- **No redirect is followed.** A 3xx is handed back as it is (`ChatClient` words it: "the
  endpoint answered with a redirect to ...; give its final URL").
- **The address is checked where the connection is made.** `GuardedBackend.connect_tcp`
  resolves the host itself, refuses (`AddressRefused`) when any address it resolves to is not
  on the public internet (loopback, private, link-local, multicast, reserved: the server's own
  network, a cloud metadata service), unless private addresses are allowed, and connects to
  the very address it checked. A DNS answer that changes between a form's check and the call
  (rebinding) is caught here, and so is a row written around the form (a shell, the admin).
- **Every call has a wall-clock deadline** (`bounded_call`): each read and write of the socket
  waits at most what is left of it, so an endpoint that drips a byte a second gets no longer
  than the deadline, however its bytes are spaced. A run's `stop` event (the end of a time
  slice, a cancel) ends a call in flight within `POLL_SECONDS` (`CallCancelled`).
- **Every reply is read up to a bound** (`ReplyTooLarge`): the reader stops past it, and a
  Content-Length over it is refused before a byte of the body is read. h11 bounds the headers.

httpcore2 (the transport under httpx and openai) does the HTTP; this module gives it the
network backend that applies these rules (the rules themselves are `inference.guard`'s). Imported
by the first `ChatClient`, not at start-up (httpcore2 takes ~0.27 s). No Django here.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpcore2

from . import guard
from .guard import (
    POLL_SECONDS,
    AddressRefused,
    ReplyTooLarge,
    blocking,
    wait_limit,
)

# Connections kept open per client between calls: the engine's threads reuse them.
KEEPALIVE_SECONDS = 30.0


class BoundedStream(httpcore2.NetworkStream):
    """A connected socket whose every read and write waits only as long as the call may."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return blocking(lambda: self._sock.recv(max_bytes), self._sock, timeout)
        except TimeoutError:
            raise httpcore2.ReadTimeout("no answer within the read timeout") from None
        except OSError as error:
            raise httpcore2.ReadError(str(error)) from None

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        try:
            while view:
                sent = blocking(lambda part=view: self._sock.send(part), self._sock, timeout)
                view = view[sent:]
        except TimeoutError:
            raise httpcore2.WriteTimeout("the endpoint took no data within the timeout") from None
        except OSError as error:
            raise httpcore2.WriteError(str(error)) from None

    def close(self) -> None:
        self._sock.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        try:
            self._sock.settimeout(wait_limit(timeout))
            wrapped = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
        except TimeoutError:
            self.close()
            raise httpcore2.ConnectTimeout("the TLS handshake did not end in time") from None
        except OSError as error:
            self.close()
            raise httpcore2.ConnectError(str(error)) from None
        except BaseException:
            self.close()
            raise
        return BoundedStream(wrapped)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object" and isinstance(self._sock, ssl.SSLSocket):
            return self._sock._sslobj  # type: ignore[attr-defined]
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "socket":
            return self._sock
        if info == "is_readable":
            return _readable(self._sock)
        return None


def _readable(sock: socket.socket) -> bool:
    """Whether a kept-alive connection has something to read (the server closed it, or sent
    what nobody asked for): the pool then drops it rather than reuse it."""
    if sock.fileno() < 0:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def _connect(sock: socket.socket, address: Any, timeout: float | None) -> None:
    """connect(), a `POLL_SECONDS` wait at a time (the call's deadline and stop apply), until
    it is made or `timeout` passes (TimeoutError)."""
    started = time.monotonic()
    sock.setblocking(False)
    code = sock.connect_ex(address)
    if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
        raise OSError(code, os.strerror(code))
    while code != 0:
        limit = wait_limit(None if timeout is None else timeout - (time.monotonic() - started))
        if limit is not None and limit <= 0:
            raise TimeoutError("timed out")
        _, writable, _ = select.select([], [sock], [], min(limit or POLL_SECONDS, POLL_SECONDS))
        if writable:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, os.strerror(code))
            break


class GuardedBackend(httpcore2.NetworkBackend):
    """httpcore2's network backend with the address rule applied at connect time (unless
    `allow_private`): every address the host resolves to must be public, and the socket
    connects to one of those very addresses."""

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = wait_limit(timeout)
        try:
            infos = guard.resolve(host, port)
        except (OSError, UnicodeError) as error:
            raise httpcore2.ConnectError(f"the host {host!r} does not resolve: {error}") from None
        if not self.allow_private:
            for info in infos:
                problem = guard.address_problem(info[4][0])
                if problem:
                    raise AddressRefused(
                        f"its host {host!r} is at {info[4][0]}, {problem}; Podium calls "
                        "endpoints on the public internet only"
                    )
        last: OSError | None = None
        for family, kind, proto, _name, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                _connect(sock, address, timeout)
            except TimeoutError:
                sock.close()
                raise httpcore2.ConnectTimeout(f"no connection to {host} in time") from None
            except OSError as error:
                sock.close()
                last = error
                continue
            except BaseException:
                sock.close()
                raise
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return BoundedStream(sock)
        raise httpcore2.ConnectError(str(last or f"no address for {host!r}"))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore2.NetworkStream:
        raise AddressRefused("Podium calls endpoints over TCP only")


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


class Transport:
    """A pool of connections to one endpoint's host, through `GuardedBackend`. `post` sends one
    request and reads its reply whole, up to `max_bytes`; no redirect is followed (a 3xx comes
    back as a `Response` like any other status)."""

    def __init__(self, *, allow_private: bool, max_connections: int) -> None:
        self._pool = httpcore2.ConnectionPool(
            max_connections=max(1, max_connections),
            keepalive_expiry=KEEPALIVE_SECONDS,
            network_backend=GuardedBackend(allow_private=allow_private),
            retries=0,
        )

    def post(
        self,
        url: str,
        *,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        max_bytes: int,
        timeout: float,
    ) -> Response:
        extensions = {
            "timeout": {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
        }
        with self._pool.stream(
            "POST", url, headers=headers, content=body, extensions=extensions
        ) as response:
            found = {
                name.decode("latin-1").lower(): value.decode("latin-1")
                for name, value in response.headers
            }
            declared = found.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise ReplyTooLarge(max_bytes)
            chunks = []
            size = 0
            for chunk in response.iter_stream():
                size += len(chunk)
                if size > max_bytes:
                    raise ReplyTooLarge(max_bytes)
                chunks.append(chunk)
            return Response(response.status, found, b"".join(chunks))

    def close(self) -> None:
        self._pool.close()
