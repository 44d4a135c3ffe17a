"""The throttles' request log on both stores (the database and Redis): DRF's sliding-log
decision, made atomically, so concurrent requests cannot both take the last place."""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache.backends.redis import RedisCache
from django.db import connection, connections

from api.models import ThrottleHistory
from api.throttle_log import DatabaseRequestLog, Decision, RedisRequestLog

T0 = 1_800_000_000.0


@pytest.fixture
def redis_log(redis_url):
    """A log in a real Redis (tests/redis_server.py), under a key prefix of its own."""
    cache = RedisCache(redis_url, {"KEY_PREFIX": f"podium-test-{uuid.uuid4().hex}"})
    yield RedisRequestLog(cache)
    client = cache._cache.get_client(write=True)
    for key in client.scan_iter(f"{cache.key_prefix}*"):
        client.delete(key)


@pytest.fixture(params=[pytest.param("database", marks=pytest.mark.django_db), "redis"])
def log(request):
    """Each store in turn (the database one with the test's database opened by its mark)."""
    if request.param == "database":
        return DatabaseRequestLog()
    return request.getfixturevalue("redis_log")


def record(log, at: float, bucket: str = "throttle_anon_a", limit: int = 3) -> Decision:
    return log.record(bucket, now=at, period=60, limit=limit)


def test_requests_are_answered_up_to_the_limit_and_refusals_are_not_logged(log):
    decisions = [record(log, T0 + n) for n in range(5)]

    assert decisions == [
        Decision(allowed=True, count=1, oldest=T0),
        Decision(allowed=True, count=2, oldest=T0),
        Decision(allowed=True, count=3, oldest=T0),
        Decision(allowed=False, count=3, oldest=T0),
        Decision(allowed=False, count=3, oldest=T0),
    ]
    # Another client has its own log.
    assert record(log, T0 + 5, bucket="throttle_anon_b") == Decision(True, 1, T0 + 5)


def test_a_request_leaves_the_log_one_period_after_it(log):
    for n in range(3):
        record(log, T0 + n)

    # At T0 + 60 the first request is exactly one period old: it no longer counts (as in DRF).
    assert record(log, T0 + 59.999) == Decision(allowed=False, count=3, oldest=T0)
    assert record(log, T0 + 60) == Decision(allowed=True, count=3, oldest=T0 + 1)
    # Long after, nothing is left but the new one.
    assert record(log, T0 + 1000) == Decision(allowed=True, count=1, oldest=T0 + 1000)


@pytest.mark.django_db
def test_the_database_row_holds_the_answered_requests_newest_first():
    log = DatabaseRequestLog()
    for at in (T0, T0 + 1.5, T0 + 2.25, T0 + 3):
        record(log, at)

    row = ThrottleHistory.objects.get()
    assert row.history == f"{T0 + 2.25:.3f} {T0 + 1.5:.3f} {T0:.3f}"
    assert row.expires_at == int(T0 + 3 + 60)


def hammer(make_log, *, threads: int = 16, each: int = 25, limit: int = 120) -> list[bool]:
    """`threads` threads at once, `each` decisions apiece, all in the same instant's period."""
    start = threading.Barrier(threads)

    def run(_: int) -> list[bool]:
        start.wait()
        log = make_log()
        try:
            return [
                record(log, T0 + 1, bucket="throttle_anon_burst", limit=limit).allowed
                for _ in range(each)
            ]
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return [allowed for batch in pool.map(run, range(threads)) for allowed in batch]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_400_concurrent_database_decisions_answer_exactly_the_limit():
    """16 threads, each with its own database connection: DRF's read-then-write let several of
    them take the same last place."""
    assert hammer(DatabaseRequestLog).count(True) == 120


def test_400_concurrent_redis_decisions_answer_exactly_the_limit(redis_log):
    assert hammer(lambda: redis_log).count(True) == 120
