"""The API's throttles: DRF's anonymous and user rates (scopes ``anon`` and ``user``, rates from
``DEFAULT_THROTTLE_RATES``, DRF's cache keys, DRF's sliding log and Retry-After), decided
atomically in the store every web process shares (api/throttle_log.py), so N workers under any
concurrency answer at most the rate in any period, not the rate plus whatever raced past DRF's
read-then-write."""

from __future__ import annotations

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from core.client_address import client_address

from .throttle_log import Decision, shared_request_log


class AtomicRateThrottle(SimpleRateThrottle):
    """DRF's ``SimpleRateThrottle`` with the read, the decision and the write made one atomic
    step in the shared store (``shared_request_log``). Everything else is DRF's: the rate's
    parsing, the cache key, "refused requests are not logged", and ``wait()`` (Retry-After) from
    the number of requests in the log and the time of the oldest."""

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        self.decision: Decision = shared_request_log().record(
            self.key, now=self.now, period=self.duration, limit=self.num_requests
        )
        return self.decision.allowed

    def get_ident(self, request) -> str:
        # The same client address as the sign-in lockouts: REMOTE_ADDR or the trusted proxies'
        # X-Forwarded-For entry, an IPv6 client as its /64 (core/client_address.py).
        return client_address(request)

    def wait(self) -> float | None:
        # DRF's own formula (SimpleRateThrottle.wait), over the log the decision saw.
        oldest = self.decision.oldest
        remaining = self.duration - (self.now - oldest) if oldest is not None else self.duration
        available = self.num_requests - self.decision.count + 1
        if available <= 0:
            return None
        return remaining / float(available)


class SharedAnonRateThrottle(AtomicRateThrottle, AnonRateThrottle):
    """Anonymous requests, per client address (``core.client_address``); DRF's
    ``get_cache_key`` ("throttle_anon_<address>", none for a signed-in user)."""


class SharedUserRateThrottle(AtomicRateThrottle, UserRateThrottle):
    """Signed-in users only: anonymous requests are counted by the anonymous throttle alone
    (DRF's user throttle would count them again, by address)."""

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return UserRateThrottle.get_cache_key(self, request, view)
