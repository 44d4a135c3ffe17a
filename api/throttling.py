"""The API's throttles: DRF's anonymous and user rates (scopes ``anon`` and ``user``, rates from
``DEFAULT_THROTTLE_RATES``), counted atomically in the store every web process shares
(api/throttle_counter.py), so N workers under any concurrency allow the configured rate, not N
times it, and not the rate plus whatever raced past DRF's read-then-write."""

from __future__ import annotations

import math

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from core.client_address import client_address

from .throttle_counter import WindowCount, shared_window_counter


def sliding_estimate(count: WindowCount, *, elapsed: float) -> float:
    """Requests within the last period, estimated: all of the current window's, and the previous
    window's in proportion to the part of it that is less than one period ago (`elapsed` is the
    fraction of the current window already past, 0 <= elapsed < 1)."""
    return count.previous * (1.0 - elapsed) + count.current


def seconds_until_allowed(
    count: WindowCount, *, limit: int, elapsed: float, period: float
) -> float:
    """How long until one more request would be allowed, if none came meanwhile. `count` is the
    refused request's, so the window holds ``count.current - 1`` allowed ones."""
    allowed = count.current - 1
    if allowed + 1 <= limit:
        # This window has room: wait until the previous window's weight has shrunk enough.
        if count.previous == 0:
            return 0.0
        needed = 1.0 - (limit - allowed - 1) / count.previous
        return max(0.0, (needed - elapsed) * period)
    # This window is full: it becomes the previous one, and has to shrink in turn.
    needed = max(0.0, 1.0 - (limit - 1) / allowed) if allowed else 0.0
    return (1.0 - elapsed) * period + needed * period


class AtomicWindowRateThrottle(SimpleRateThrottle):
    """DRF's ``SimpleRateThrottle`` (rates, scopes, cache keys, ``Retry-After``) with the counting
    replaced: one atomic increment per request in the shared store, a sliding-window estimate
    against the rate, and the increment taken back when the request is refused, so refusals do not
    count (as in DRF) and a client that keeps hammering is let in again as the window slides.

    Every allowed request saw a count at or below the rate when it was counted, and counts only
    grow by allowed requests or by refused ones not yet taken back: so at most the rate is
    allowed per window, however many requests arrive at once and in however many processes.
    """

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        now = self.timer()
        period = self.duration
        window = int(now // period)
        elapsed = (now - window * period) / period
        bucket = f"{self.scope}:{period}:{self.key}"
        counter = shared_window_counter()
        count = counter.hit(bucket, window=window, period=period, now=now)
        if sliding_estimate(count, elapsed=elapsed) <= self.num_requests:
            return True
        counter.undo(bucket, window=window, period=period)
        self._wait = seconds_until_allowed(
            count, limit=self.num_requests, elapsed=elapsed, period=period
        )
        return False

    def get_ident(self, request) -> str:
        # The same client address as the sign-in lockouts: REMOTE_ADDR or the trusted proxies'
        # X-Forwarded-For entry, an IPv6 client as its /64 (core/client_address.py).
        return client_address(request)

    def wait(self) -> float:
        # DRF sends math.ceil of this as Retry-After; at least one second.
        return max(1.0, math.ceil(getattr(self, "_wait", self.duration)))


class SharedAnonRateThrottle(AtomicWindowRateThrottle, AnonRateThrottle):
    """Anonymous requests, per client address (``core.client_address``); DRF's
    ``get_cache_key`` ("throttle_anon_<address>", none for a signed-in user)."""


class SharedUserRateThrottle(AtomicWindowRateThrottle, UserRateThrottle):
    """Signed-in users only: anonymous requests are counted by the anonymous throttle alone
    (DRF's user throttle would count them again, by address)."""

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return UserRateThrottle.get_cache_key(self, request, view)
