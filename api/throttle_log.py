"""The API throttles' request log, read and written atomically in the store every web process
shares.

DRF's ``SimpleRateThrottle`` keeps, per client, the times of its requests answered within the last
period (a *sliding log*), and answers a request only if fewer than the rate are in it. That is
exact: never more than the rate in any period. But it reads the list from the cache, appends and
writes it back: two requests in two processes read the same list and are both answered (400
concurrent requests against 120/min got 216-221 answers). Here the same decision is made with the
list held for this one request:

- the database (the default): a row per client and scope (``api.ThrottleHistory``), locked for
  the decision by the ``INSERT ... ON CONFLICT DO UPDATE`` that starts the transaction (on
  PostgreSQL a row lock; on SQLite the database's write lock), so concurrent requests decide one
  after another;
- Redis, when ``PODIUM_SHARED_CACHE_URL`` names it: a sorted set per client, trimmed, counted and
  added to by one Lua script, which Redis runs without interleaving.

Hand-written because no maintained library does this for DRF on both stores: django-ratelimit
and DRF count with the cache's ``get``/``set`` or ``incr``, which Django's database cache
implements as a read and a write. Why not a counter per fixed window (one ``INCR``): it lets twice
the rate through around a window's end, and the usual fix, weighing the previous window, is an
estimate that lets a burst across the boundary overshoot; the log is exact.
"""

from __future__ import annotations

import math
import random
import uuid
from dataclasses import dataclass
from typing import Protocol

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connections, transaction

from .models import ThrottleHistory

# One decision in this many also deletes the database rows of clients gone quiet.
CLEANUP_ONE_IN = 500


@dataclass(frozen=True)
class Decision:
    """Whether the request is answered, and the client's log after it: how many requests are in
    the last period, and the time of the oldest (for Retry-After, as DRF computes it)."""

    allowed: bool
    count: int
    oldest: float | None


class RequestLog(Protocol):
    def record(self, bucket: str, *, now: float, period: float, limit: int) -> Decision:
        """Answer the request of `bucket` at `now` if fewer than `limit` requests are in the
        last `period` seconds, and log it if so (a refused request is not logged, as in DRF)."""
        ...


class DatabaseRequestLog:
    """The log as rows of ``api.ThrottleHistory`` in the default database."""

    def __init__(self, using: str = "default") -> None:
        self.using = using

    def record(self, bucket: str, *, now: float, period: float, limit: int) -> Decision:
        connection = connections[self.using]
        table = connection.ops.quote_name(ThrottleHistory._meta.db_table)
        expires_at = math.ceil(now + period)
        with transaction.atomic(using=self.using), connection.cursor() as cursor:
            # The first statement writes, so it takes the lock that the rest of the transaction
            # holds: the row's (PostgreSQL), the database's (SQLite). The table name is ours,
            # quoted; every value is a parameter.
            cursor.execute(
                f"INSERT INTO {table} (bucket, history, expires_at) VALUES (%s, '', %s) "
                "ON CONFLICT (bucket) DO UPDATE SET expires_at = excluded.expires_at "
                "RETURNING history",
                [bucket, expires_at],
            )
            (text,) = cursor.fetchone()
            history = sorted(
                (at for at in map(float, text.split()) if at > now - period), reverse=True
            )
            allowed = len(history) < limit
            if allowed:
                history.insert(0, now)
                cursor.execute(
                    f"UPDATE {table} SET history = %s WHERE bucket = %s",
                    [" ".join(f"{at:.3f}" for at in history), bucket],
                )
            if random.randrange(CLEANUP_ONE_IN) == 0:  # not a secret: any generator will do
                cursor.execute(f"DELETE FROM {table} WHERE expires_at < %s", [math.floor(now)])
        return Decision(
            allowed=allowed, count=len(history), oldest=history[-1] if history else None
        )


# KEYS[1]: the client's sorted set (member: a unique id, score: the request's time).
# ARGV: now, period (seconds), limit, this request's member.
_RECORD = """
local now = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < tonumber(ARGV[3]) then
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    count = count + 1
    allowed = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if count > 0 then redis.call('PEXPIRE', KEYS[1], math.ceil(period * 1000)) end
return {allowed, count, oldest[2] or false}
"""


class RedisRequestLog:
    """The log as a Redis sorted set per client, in the shared cache's Redis (its key prefix and
    version apply)."""

    def __init__(self, cache: RedisCache) -> None:
        self.cache = cache

    def record(self, bucket: str, *, now: float, period: float, limit: int) -> Decision:
        key = self.cache.make_and_validate_key(f"throttle-log:{bucket}")
        # Django's Redis cache has no scripting; the script runs on the redis-py client behind it.
        client = self.cache._cache.get_client(key, write=True)
        allowed, count, oldest = client.register_script(_RECORD)(
            keys=[key], args=[f"{now:.6f}", period, limit, f"{now:.6f}-{uuid.uuid4().hex}"]
        )
        return Decision(
            allowed=bool(allowed), count=int(count), oldest=float(oldest) if oldest else None
        )


def shared_request_log() -> RequestLog:
    """The log in the store ``CACHES["shared"]`` names: Redis, else the database."""
    cache = caches["shared"]
    if isinstance(cache, RedisCache):
        return RedisRequestLog(cache)
    return DatabaseRequestLog()
