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
    @property
    def cache(self):  # type: ignore[override]
        return caches["shared"]
