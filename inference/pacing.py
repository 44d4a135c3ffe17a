"""Pacing calls to an endpoint: at most N calls a minute, whatever the number of threads
(hosted evaluation's `hosted_requests_per_minute`, docs/hosted.md). No Django here.

`RateLimiter` hands out start times one interval apart (60 / N seconds) on the monotonic
clock: each caller reserves the next free slot under a lock and sleeps until it, so calls
from any number of worker threads start evenly spaced and never more than N in any minute.
There is no burst: an idle limiter lets the next call go at once, then spaces the following
ones. The wait gives way to a `stop` event (a time slice ending, a cancel), so a stopped run
never sleeps out its reservations.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    """At most `per_minute` call starts in any 60 s, spaced evenly. Thread-safe. `clock`
    and `sleep` stand in for `time.monotonic` and an interruptible wait in tests; `sleep`
    returns True when it was interrupted (as `threading.Event.wait` does)."""

    def __init__(
        self,
        per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[threading.Event, float], bool] | None = None,
    ) -> None:
        if per_minute <= 0:
            raise ValueError(
                f"a rate limit is a positive number of calls a minute, not {per_minute!r}"
            )
        self.per_minute = per_minute
        self.interval = 60.0 / per_minute
        self._clock = clock
        self._sleep = sleep or (lambda stop, seconds: stop.wait(seconds))
        self._lock = threading.Lock()
        self._next: float | None = None

    def reserve(self) -> float:
        """Take the next free start time (on `clock`) and return it."""
        with self._lock:
            now = self._clock()
            start = now if self._next is None or self._next <= now else self._next
            self._next = start + self.interval
            return start

    def wait(self, stop: threading.Event | None = None) -> bool:
        """Block until this caller's slot: True when the call may start, False when `stop` was
        set first (the slot is then simply unused)."""
        stop = stop or threading.Event()
        start = self.reserve()
        while True:
            if stop.is_set():
                return False
            delay = start - self._clock()
            if delay <= 0:
                return True
            if self._sleep(stop, delay):
                return False
