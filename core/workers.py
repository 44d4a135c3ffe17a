"""What every kind of background work shares on the django-q2 cluster, whatever its states: who
a worker is, whether a worker on this host is gone, a heartbeat thread that beats while a
CPU-bound step runs, a way to survive a database connection the server dropped, and the
watchdog that runs the reapers every few seconds in each worker process.

Apps plug in with plain callables (`add_reaper`), so `core` imports none of them. The states,
the claim and what a reaper does belong to each app (`submissions` for scoring runs, the
engine's `inference.lifecycle` for judge jobs and re-runs). docs/workers.md has
the timings.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections
from django.db import connection as default_connection

logger = logging.getLogger(__name__)

# Errors that mean the connection itself is gone (killed backend, restarted server, network).
CONNECTION_ERRORS = (OperationalError, InterfaceError)


def worker_id() -> str:
    """This process as a worker: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def worker_is_gone(worker: str) -> bool:
    """Whether `worker` (a `worker_id()`) ran on this host in a process that no longer exists.

    A worker on another host, or an unreadable value, is never "gone" here: for those only a
    stale heartbeat tells. A reused pid makes a dead worker look alive, which only delays its
    recovery to the heartbeat's timeout.
    """
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


class Heartbeat:
    """Call `beat` every `every` seconds in a daemon thread while the `with` block runs.

    The step inside the block may hold the CPU (scoring is numpy and Python); the thread still
    gets its turn, because Python switches threads every few milliseconds and numpy releases
    the GIL. `beat` returns False once the work is no longer this worker's (the reaper handed
    it out again): the thread then stops and `lost` is True. A failing beat (say, the
    database dropped the thread's connection) is logged, its connection closed so the next
    beat opens a fresh one, and beating goes on. The thread's own connection is closed when
    it ends.
    """

    def __init__(self, beat: Callable[[], bool], *, every: float, name: str = "heartbeat") -> None:
        self._beat = beat
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.lost = False
        self.beats = 0

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        # A beat blocked on the database must not hold up the work's result; the thread is a
        # daemon, and a late beat only matches a row still held by this worker.
        self._thread.join(timeout=self._every)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._every):
                try:
                    if not self._beat():
                        self.lost = True
                        return
                    self.beats += 1
                except DatabaseError:
                    logger.warning(
                        "heartbeat failed; retrying with a new connection", exc_info=True
                    )
                    close_old_connections()
        finally:
            _close_this_threads_connection()


def _close_this_threads_connection() -> None:
    """Close the calling thread's default connection (Django's are per thread), even a broken
    one: a helper thread must not die of a connection the server already dropped."""
    try:
        default_connection.close()
    except DatabaseError:
        logger.debug("closing a broken connection failed", exc_info=True)


def retry_on_lost_connection[T](action: Callable[[], T], *, what: str) -> T:
    """Run `action`; if the database connection broke under it, close that connection and run
    it once more on a fresh one. `action` must be safe to repeat (a claim or an idempotent
    write). Inside an outer transaction nothing is retried: the transaction is lost anyway,
    and its owner must see the error."""
    try:
        return action()
    except CONNECTION_ERRORS:
        if default_connection.in_atomic_block:
            raise
        logger.warning("%s: the database connection broke; retrying once", what, exc_info=True)
        close_old_connections()
        default_connection.close()
        return action()


# --- the watchdog: reapers every few seconds in each worker process ------------------------------

_reapers: list[Callable[[], int]] = []


def add_reaper(reaper: Callable[[], int]) -> None:
    """Register a reaper (returns how many stale items it touched) for the watchdog. Reapers
    must be cheap when there is nothing to do (one indexed query) and safe to run in several
    processes at once (they lock what they change)."""
    if reaper not in _reapers:
        _reapers.append(reaper)


def run_reapers() -> int:
    """Run every registered reaper once; one failing does not stop the others."""
    touched = 0
    for reaper in list(_reapers):
        try:
            touched += reaper()
        except Exception:
            logger.exception("reaper %s failed", getattr(reaper, "__qualname__", reaper))
            close_old_connections()
    return touched


def reap_seconds() -> float:
    return float(settings.PODIUM_WORKER_REAP_SECONDS)


def _watch(stop: threading.Event, every: float) -> None:
    while True:
        run_reapers()
        _close_this_threads_connection()  # reopened next round
        if stop.wait(every):
            return


_watchdog: tuple[threading.Thread, threading.Event] | None = None


def start_watchdog(*, every: float | None = None) -> threading.Event:
    """Start (once per process) the daemon thread that runs the reapers now and then every
    `every` seconds (PODIUM_WORKER_REAP_SECONDS). Returns the event that stops it.

    django-q2's Schedule runs at most once a minute, and its guard calls the scheduler only
    every 30 s; scoring takes seconds. So each worker process watches by itself: the first
    round runs as the worker starts, which is also when the cluster's guard has just
    replaced a killed worker (django-q2's `post_spawn` signal, see `on_worker_spawn`).
    """
    global _watchdog
    if _watchdog is not None and _watchdog[0].is_alive():
        return _watchdog[1]
    stop = threading.Event()
    thread = threading.Thread(
        target=_watch, args=(stop, every or reap_seconds()), name="podium-reaper", daemon=True
    )
    thread.start()
    _watchdog = (thread, stop)
    return stop


def on_worker_spawn(**_: Any) -> None:
    """django-q2's `post_spawn` receiver, in each new worker process of the cluster."""
    start_watchdog()
