"""Throttles counting in the shared cache: every web worker process sees the same counts, so N
workers allow the configured rate, not N times it."""

from __future__ import annotations

from django.core.cache import caches
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class SharedAnonRateThrottle(AnonRateThrottle):
    @property
    def cache(self):  # type: ignore[override]
        return caches["shared"]


class SharedUserRateThrottle(UserRateThrottle):
    """Signed-in users only: anonymous requests are counted by the anonymous throttle alone
    (DRF's user throttle would count them again, by address)."""

    @property
    def cache(self):  # type: ignore[override]
        return caches["shared"]

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return super().get_cache_key(request, view)
