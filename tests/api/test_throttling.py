"""Throttling counts in the shared cache, so every web worker process sees the same count."""

import pytest
from django.core.cache import caches
from django.urls import reverse
from rest_framework.test import APIClient

from api.throttling import SharedAnonRateThrottle

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_anonymous_requests_beyond_the_rate_are_refused_and_counted_in_the_shared_cache(
    monkeypatch,
):
    monkeypatch.setattr(SharedAnonRateThrottle, "THROTTLE_RATES", {"anon": "3/min"})
    caches["shared"].clear()
    url = reverse("api:benchmark-list")

    statuses = [APIClient(REMOTE_ADDR="10.0.0.7").get(url).status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    # The count is in the database-backed cache every process reads, not in this process.
    assert caches["shared"].get("throttle_anon_10.0.0.7") is not None
    assert caches["shared"].get("throttle_user_10.0.0.7") is None  # counted once, not twice
    assert APIClient(REMOTE_ADDR="10.0.0.8").get(url).status_code == 200
    caches["shared"].clear()
