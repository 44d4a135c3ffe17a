"""The API's throttles count atomically in the store every web process shares: the rate holds
under concurrency and across gunicorn workers, refusals are the JSON envelope with Retry-After,
and the client's address is not whatever X-Forwarded-For says."""

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from api.models import ThrottleHistory
from api.throttling import SharedAnonRateThrottle
from tests.live_gunicorn import database_env_for_test, gunicorn_server

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

needs_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="separate processes need a shared PostgreSQL database"
)


@pytest.fixture
def anon_rate(monkeypatch):
    """Sets the anonymous rate of this process's throttle (the test settings' is a million)."""

    def set_rate(rate: str) -> None:
        monkeypatch.setattr(SharedAnonRateThrottle, "THROTTLE_RATES", {"anon": rate})

    return set_rate


def test_anonymous_requests_beyond_the_rate_are_refused_and_counted_in_the_shared_store(anon_rate):
    anon_rate("3/min")
    url = reverse("api:benchmark-list")

    responses = [APIClient(REMOTE_ADDR="10.0.0.7").get(url) for _ in range(4)]

    assert [response.status_code for response in responses] == [200, 200, 200, 429]
    refused = responses[-1]
    assert refused.json() == {
        "detail": refused.json()["detail"],
        "code": "throttled",
    }
    assert refused.json()["detail"].startswith("Request was throttled. Expected available in ")
    assert 1 <= int(refused["Retry-After"]) <= 60
    # Logged in the database every process shares, once (the user throttle skips anonymous
    # requests), and the refused request not at all: 3 times, not 4.
    (history,) = ThrottleHistory.objects.all()
    assert history.bucket == "throttle_anon_10.0.0.7"
    assert len(history.history.split()) == 3
    assert APIClient(REMOTE_ADDR="10.0.0.8").get(url).status_code == 200


def test_a_forged_x_forwarded_for_does_not_make_a_new_client(anon_rate):
    """Without trusted proxies (PODIUM_TRUSTED_PROXY_COUNT=0) the address is REMOTE_ADDR: DRF's
    default read the whole X-Forwarded-For header, so each forged value got a fresh allowance."""
    anon_rate("2/min")
    url = reverse("api:benchmark-list")

    statuses = [
        APIClient(REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
        .get(url)
        .status_code
        for n in range(4)
    ]

    assert statuses == [200, 200, 429, 429]


def test_the_addresses_of_one_ipv6_64_network_share_one_allowance(anon_rate):
    anon_rate("2/min")
    url = reverse("api:benchmark-list")

    statuses = [
        APIClient(REMOTE_ADDR=f"2001:db8:7:8::{n}").get(url).status_code for n in range(1, 4)
    ]

    assert statuses == [200, 200, 429]
    assert APIClient(REMOTE_ADDR="2001:db8:7:9::1").get(url).status_code == 200


def test_behind_one_trusted_proxy_the_client_is_the_address_it_appended(anon_rate, settings):
    settings.PODIUM_TRUSTED_PROXY_COUNT = 1
    anon_rate("1/min")
    url = reverse("api:benchmark-list")

    def status(forwarded_for: str) -> int:
        client = APIClient(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded_for)
        return client.get(url).status_code

    # The client may prepend anything; the proxy's own entry (the last) is what counts.
    assert [status("203.0.113.5"), status("1.2.3.4, 203.0.113.5"), status("203.0.113.6")] == [
        200,
        429,
        200,
    ]


@needs_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_to_four_gunicorn_workers_get_at_most_the_rate():
    """400 concurrent anonymous requests against 120/min were answered 216-221 times: DRF read
    the history, appended and wrote it back, and concurrent requests overwrote each other. Counted
    atomically, exactly the rate is answered, by several workers."""
    rate, requests = 20, 200
    with gunicorn_server(
        workers=4, env={**database_env_for_test(), "PODIUM_API_ANON_RATE": f"{rate}/min"}
    ) as server:
        start = threading.Barrier(32)

        def get(_: int) -> tuple[int, dict | None, str | None]:
            if _ < 32:
                start.wait()  # the first 32 leave together
            try:
                with urllib.request.urlopen(server.url + "/api/v1/benchmarks/", timeout=60) as r:
                    return r.status, None, None
            except urllib.error.HTTPError as refused:
                return refused.code, json.loads(refused.read()), refused.headers["Retry-After"]

        with ThreadPoolExecutor(max_workers=32) as pool:
            results = list(pool.map(get, range(requests)))

        answers = server.answers("/api/v1/benchmarks/", at_least=requests)

    statuses = [status for status, _, _ in results]
    assert statuses.count(200) == rate
    assert statuses.count(429) == requests - rate
    refusals = [
        (body["code"], int(retry_after) >= 1) for status, body, retry_after in results if body
    ]
    assert refusals == [("throttled", True)] * (requests - rate)
    # Several workers answered (which ones is the kernel's choice): the count held across them.
    assert len(answers) == requests
    assert len({pid for pid, _, _, _ in answers}) >= 2
