"""Atomic request counters for the API's throttles, in the store every web process shares.

DRF's ``SimpleRateThrottle`` reads a list of timestamps from the cache, appends one and writes it
back: two requests in two processes read the same list, and both are let through. Under 400
concurrent requests against 120/min, about 220 were answered. Here each request is counted by one
atomic operation that returns its own count, so no two requests can both be the 120th.

The count is a *sliding-window counter* (the estimate Cloudflare and others use): the number of
requests in the current fixed window plus the previous window's, weighted by how much of it still
lies within one period of now. It costs two integers per client, refuses bursts that straddle a
window boundary (a plain fixed window would allow twice the rate there), and needs no list.

Two stores, following ``CACHES["shared"]`` (config/settings/base.py):

- the database (the default): one row per client and scope, counted by a single
  ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` (PostgreSQL and SQLite alike; the row lock
  of the upsert serialises concurrent requests);
- Redis, when ``PODIUM_SHARED_CACHE_URL`` names it: ``INCR`` on the window's key in a Lua script
  that also sets its expiry and reads the previous window, one round trip.

Hand-written because no maintained library does this for DRF on both stores: django-ratelimit
counts with the cache's ``incr``, which Django's database cache implements as a read and a write.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connections

from .models import ThrottleWindow

# One request in this many also deletes the database's rows of windows long past.
CLEANUP_ONE_IN = 500


@dataclass(frozen=True)
class WindowCount:
    """What one counted request learns: its own number in the current window (1 for the first),
    and the previous window's final count."""

    current: int
    previous: int


class WindowCounter(Protocol):
    def hit(self, bucket: str, *, window: int, period: int, now: float) -> WindowCount:
        """Count one request of `bucket` in window number `window` (of `period` seconds)."""
        ...

    def undo(self, bucket: str, *, window: int, period: int) -> None:
        """Take back one request counted in `window` (a refused request does not count)."""
        ...


class DatabaseWindowCounter:
    """The counter as rows of ``api.ThrottleWindow`` in the default database."""

    def __init__(self, using: str = "default") -> None:
        self.using = using

    def _table(self) -> str:
        return connections[self.using].ops.quote_name(ThrottleWindow._meta.db_table)

    def hit(self, bucket: str, *, window: int, period: int, now: float) -> WindowCount:
        table = self._table()
        # In the SET list every column reference is the row's value before this update (SQL
        # semantics), so `hits` moves to `previous_hits` in the same statement that resets it.
        # A row already in a later window (another host's clock a little ahead) keeps it.
        sql = f"""
            INSERT INTO {table} (bucket, window_index, hits, previous_hits, expires_at)
            VALUES (%s, %s, 1, 0, %s)
            ON CONFLICT (bucket) DO UPDATE SET
                hits = CASE WHEN {table}.window_index >= excluded.window_index
                    THEN {table}.hits + 1 ELSE 1 END,
                previous_hits = CASE
                    WHEN {table}.window_index >= excluded.window_index THEN {table}.previous_hits
                    WHEN {table}.window_index = excluded.window_index - 1 THEN {table}.hits
                    ELSE 0 END,
                window_index = CASE WHEN {table}.window_index >= excluded.window_index
                    THEN {table}.window_index ELSE excluded.window_index END,
                expires_at = CASE WHEN {table}.expires_at >= excluded.expires_at
                    THEN {table}.expires_at ELSE excluded.expires_at END
            RETURNING hits, previous_hits
        """  # the table name is ours, quoted; every value is a parameter
        # The row matters until the end of the next window, where it is the previous one.
        expires_at = (window + 2) * period
        with connections[self.using].cursor() as cursor:
            cursor.execute(sql, [bucket, window, expires_at])
            current, previous = cursor.fetchone()
            if random.randrange(CLEANUP_ONE_IN) == 0:  # not a secret: any generator will do
                cursor.execute(f"DELETE FROM {table} WHERE expires_at < %s", [int(now)])
        return WindowCount(current=current, previous=previous)

    def undo(self, bucket: str, *, window: int, period: int) -> None:
        # If the row has moved on to the next window meanwhile, the request is in its previous
        # count; further on, it no longer counts at all.
        table = self._table()
        sql = f"""
            UPDATE {table} SET
                hits = CASE WHEN window_index = %s AND hits > 0 THEN hits - 1 ELSE hits END,
                previous_hits = CASE WHEN window_index = %s AND previous_hits > 0
                    THEN previous_hits - 1 ELSE previous_hits END
            WHERE bucket = %s AND window_index IN (%s, %s)
        """
        with connections[self.using].cursor() as cursor:
            cursor.execute(sql, [window, window + 1, bucket, window, window + 1])


# KEYS[1]: the current window's key, KEYS[2]: the previous one's; ARGV[1]: seconds to keep.
_HIT = """
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
return {current, previous}
"""
# Only an existing key: DECR on an expired one would create it at -1, without an expiry.
_UNDO = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
"""


class RedisWindowCounter:
    """The counter as one Redis integer per client, scope and window, in the shared cache's Redis
    (its key prefix and version apply)."""

    def __init__(self, cache: RedisCache) -> None:
        self.cache = cache

    def _key(self, bucket: str, window: int) -> str:
        return self.cache.make_and_validate_key(f"throttle:{bucket}:{window}")

    def _client(self, key: str):
        # Django's Redis cache exposes no atomic "increment or create", and its incr() raises on a
        # missing key; the script needs the redis-py client behind it.
        return self.cache._cache.get_client(key, write=True)

    def hit(self, bucket: str, *, window: int, period: int, now: float) -> WindowCount:
        key = self._key(bucket, window)
        client = self._client(key)
        current, previous = client.register_script(_HIT)(
            keys=[key, self._key(bucket, window - 1)], args=[2 * period]
        )
        return WindowCount(current=int(current), previous=int(previous))

    def undo(self, bucket: str, *, window: int, period: int) -> None:
        key = self._key(bucket, window)
        self._client(key).register_script(_UNDO)(keys=[key])


def shared_window_counter() -> WindowCounter:
    """The counter in the store ``CACHES["shared"]`` names: Redis, else the database."""
    cache = caches["shared"]
    if isinstance(cache, RedisCache):
        return RedisWindowCounter(cache)
    return DatabaseWindowCounter()
