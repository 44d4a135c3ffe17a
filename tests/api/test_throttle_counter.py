"""The throttles' atomic window counter, on both stores (the database and Redis), and the
sliding-window arithmetic."""

import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache.backends.redis import RedisCache
from django.db import connection, connections

from api.models import ThrottleWindow
from api.throttle_counter import DatabaseWindowCounter, RedisWindowCounter, WindowCount
from api.throttling import seconds_until_allowed, sliding_estimate

REDIS_URL = os.environ.get("PODIUM_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
PERIOD = 60


@pytest.fixture
def redis_counter():
    """A counter in a real Redis (.ci/run starts one), under a key prefix of its own."""
    cache = RedisCache(REDIS_URL, {"KEY_PREFIX": f"podium-test-{uuid.uuid4().hex}"})
    try:
        cache._cache.get_client(write=True).ping()
    except Exception as error:  # any connection error: say how to get Redis
        pytest.fail(f"Redis at {REDIS_URL} is needed (redis-server --daemonize yes): {error}")
    yield RedisWindowCounter(cache)
    client = cache._cache.get_client(write=True)
    for key in client.scan_iter(f"{cache.key_prefix}*"):
        client.delete(key)


@pytest.fixture(params=["database", "redis"])
def counter(request):
    if request.param == "database":
        request.getfixturevalue("db")
        return DatabaseWindowCounter()
    return request.getfixturevalue("redis_counter")


def hits(counter, bucket: str, window: int, times: int = 1) -> list[WindowCount]:
    return [
        counter.hit(bucket, window=window, period=PERIOD, now=window * PERIOD) for _ in range(times)
    ]


def test_each_hit_gets_the_next_number_in_its_window(counter):
    assert hits(counter, "anon:60:a", 100, 3) == [
        WindowCount(current=1, previous=0),
        WindowCount(current=2, previous=0),
        WindowCount(current=3, previous=0),
    ]
    # Another client counts on its own.
    assert hits(counter, "anon:60:b", 100) == [WindowCount(current=1, previous=0)]


def test_the_next_window_starts_at_one_and_remembers_the_last_windows_count(counter):
    hits(counter, "anon:60:a", 100, 3)

    assert hits(counter, "anon:60:a", 101, 2) == [
        WindowCount(current=1, previous=3),
        WindowCount(current=2, previous=3),
    ]
    # A window further on: the old count is more than a period ago and no longer matters.
    assert hits(counter, "anon:60:a", 103) == [WindowCount(current=1, previous=0)]


def test_an_undone_hit_no_longer_counts_in_its_window_or_as_the_previous_one(counter):
    hits(counter, "anon:60:a", 100, 3)
    counter.undo("anon:60:a", window=100, period=PERIOD)

    assert hits(counter, "anon:60:a", 100) == [WindowCount(current=3, previous=0)]
    # Undone after the next window began: it leaves the previous count instead.
    hits(counter, "anon:60:a", 101)
    counter.undo("anon:60:a", window=100, period=PERIOD)
    assert hits(counter, "anon:60:a", 101) == [WindowCount(current=2, previous=2)]


@pytest.mark.django_db
def test_a_database_row_already_in_a_later_window_keeps_counting_there():
    """A process whose clock is a little behind counts in the row's window instead of turning
    it back (which would hand every client a fresh allowance)."""
    counter = DatabaseWindowCounter()
    hits(counter, "anon:60:a", 101, 2)

    assert hits(counter, "anon:60:a", 100) == [WindowCount(current=3, previous=0)]
    assert ThrottleWindow.objects.get().window_index == 101


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_concurrent_database_hits_each_get_a_different_number():
    """16 threads, each with its own database connection, 25 hits each: DRF's read-then-write
    would hand the same number to several of them."""
    start = threading.Barrier(16)

    def hit_25(_: int) -> list[int]:
        start.wait()
        try:
            counter = DatabaseWindowCounter()
            return [hits(counter, "anon:60:burst", 100)[0].current for _ in range(25)]
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=16) as pool:
        numbers = [number for batch in pool.map(hit_25, range(16)) for number in batch]

    assert sorted(numbers) == list(range(1, 401))


def test_concurrent_redis_hits_each_get_a_different_number(redis_counter):
    start = threading.Barrier(16)

    def hit_25(_: int) -> list[int]:
        start.wait()
        return [hits(redis_counter, "anon:60:burst", 100)[0].current for _ in range(25)]

    with ThreadPoolExecutor(max_workers=16) as pool:
        numbers = [number for batch in pool.map(hit_25, range(16)) for number in batch]

    assert sorted(numbers) == list(range(1, 401))


@pytest.mark.unit
@pytest.mark.parametrize(
    ("count", "elapsed", "estimate"),
    [
        (WindowCount(current=5, previous=0), 0.5, 5.0),
        (WindowCount(current=5, previous=10), 0.0, 15.0),
        (WindowCount(current=5, previous=10), 0.25, 12.5),
        (WindowCount(current=1, previous=10), 0.9, 2.0),
    ],
)
def test_the_estimate_weighs_the_previous_window_by_its_part_within_the_period(
    count, elapsed, estimate
):
    assert sliding_estimate(count, elapsed=elapsed) == pytest.approx(estimate)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("count", "elapsed", "wait"),
    [
        # 10 allowed in this window, limit 10: until the window ends, then 10 more weighed at
        # (1 - g) must fall to 9: g = 0.1, so 30 s + 6 s.
        (WindowCount(current=11, previous=0), 0.5, 36.0),
        # 3 allowed now, 10 in the previous window, limit 10: the previous window's weight must
        # fall to 6/10 -> elapsed 0.4, 0.15 of 60 s from now.
        (WindowCount(current=4, previous=10), 0.25, 9.0),
    ],
)
def test_retry_after_is_when_one_more_request_would_be_allowed(count, elapsed, wait):
    assert seconds_until_allowed(count, limit=10, elapsed=elapsed, period=60) == pytest.approx(wait)
    # And indeed: one more request then fits.
    later = elapsed + wait / 60
    if later < 1:
        assert sliding_estimate(count, elapsed=later) <= 10 + 1e-9
