"""The rules for a call to a URL someone else chose that need no HTTP library
(docs/inference.md, "Calling the outside world"): which addresses a worker may connect to, and
the wall-clock deadline and the stop of the call in flight, which `inference.transport` applies
to every socket operation. Kept apart from the transport so that the engine's modules can name
them without importing httpcore2 (~0.27 s) in every process at start-up (issue 16). No Django.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

# How often a call blocked on the network looks at its run's stop event.
POLL_SECONDS = 0.2


class AddressRefused(Exception):
    """The endpoint's host resolves to an address Podium's workers must not call."""


class ReplyTooLarge(Exception):
    """The reply's body is longer than the call allows; reading stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply was longer than {limit:,} bytes, the most it may be")
        self.limit = limit


class DeadlinePassed(Exception):
    """The call's wall-clock deadline passed before it ended."""


class CallCancelled(Exception):
    """The run the call belongs to was stopped (its time slice ended, it was cancelled)."""


# --- the address rule ---------------------------------------------------------------------


def address_problem(address: str) -> str:
    """Why a worker must not connect to `address` (an IP address as text), or "": loopback,
    private, link-local, shared, multicast, reserved or unspecified addresses (an IPv4 address
    mapped into IPv6 is judged as itself)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified):
        return ""
    return "an address of a private network"


def resolve(host: str, port: int) -> list[tuple[Any, ...]]:
    """`getaddrinfo`'s TCP answers for host and port (a test replaces this to play a DNS that
    changes its answer)."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)


# --- the deadline and the stop of the call in flight ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Bounds:
    deadline: float | None
    stop: threading.Event | None


_local = threading.local()


def _bounds() -> _Bounds:
    return getattr(_local, "bounds", None) or _Bounds(None, None)


@contextlib.contextmanager
def bounded_call(seconds: float | None) -> Iterator[None]:
    """Every socket operation of this thread inside the block ends by `seconds` from now
    (`DeadlinePassed` after that). The stop event of an enclosing `stoppable` is kept."""
    outer = _bounds()
    deadline = None if seconds is None else time.monotonic() + seconds
    if outer.deadline is not None and (deadline is None or outer.deadline < deadline):
        deadline = outer.deadline
    _local.bounds = _Bounds(deadline, outer.stop)
    try:
        yield
    finally:
        _local.bounds = outer


@contextlib.contextmanager
def stoppable(stop: threading.Event | None) -> Iterator[None]:
    """A call of this thread inside the block that is blocked on the network ends
    (`CallCancelled`) within `POLL_SECONDS` of `stop` being set."""
    outer = _bounds()
    _local.bounds = _Bounds(outer.deadline, stop)
    try:
        yield
    finally:
        _local.bounds = outer


def wait_limit(timeout: float | None) -> float | None:
    """How long the next socket operation may wait: its own timeout, capped by what is left of
    the call's deadline. Raises once the deadline has passed or the run was stopped."""
    bounds = _bounds()
    if bounds.stop is not None and bounds.stop.is_set():
        raise CallCancelled("the run was stopped")
    if bounds.deadline is not None:
        left = bounds.deadline - time.monotonic()
        if left <= 0:
            raise DeadlinePassed("the call's deadline passed")
        timeout = left if timeout is None else min(timeout, left)
    return timeout


def blocking[T](operation: Callable[[], T], sock: socket.socket, timeout: float | None) -> T:
    """Run a socket operation that may block, a `POLL_SECONDS` wait at a time, until it is done,
    its own `timeout` passes (TimeoutError), or the call's deadline or stop says so. Only
    operations that do nothing when they time out are retried this way: recv and send."""
    started = time.monotonic()
    while True:
        limit = wait_limit(None if timeout is None else timeout - (time.monotonic() - started))
        if limit is not None and limit <= 0:
            raise TimeoutError("timed out")
        sock.settimeout(POLL_SECONDS if limit is None else min(limit, POLL_SECONDS))
        try:
            return operation()
        except TimeoutError:
            if limit is not None and limit <= POLL_SECONDS:
                raise
