"""A lock held until the current transaction ends, keyed by a few values, for a rule that an
insert or update must check against rows other transactions may be writing at the same moment
and that no constraint can express (issue 31, point 4: the copy rule, "another account").

PostgreSQL: a transaction-scoped advisory lock (`pg_advisory_xact_lock`) on a 64-bit key hashed
from the values. Every writer that checks the rule takes it before reading, so the second of
two racing writers waits for the first to commit (or roll back) and, at READ COMMITTED, its
check then sees the first's row. A hash collision only makes two unrelated writers wait for
each other.

SQLite (`make run`, the default test database): nothing to take. Podium opens SQLite
transactions with `transaction_mode=IMMEDIATE` (config/env.py), so a transaction holds the
database's one write lock from its BEGIN: writers are serialised whole, a check inside one sees
every transaction committed before it, and none can commit in between.
"""

from __future__ import annotations

import hashlib

from django.db import connection


def lock_until_commit(namespace: str, *values: object) -> None:
    """Hold the lock named by `namespace` and `values` until the current transaction ends
    (a caller inside `transaction.atomic()`; outside one it would end at once, so that is a
    programming error: `RuntimeError`)."""
    if not connection.in_atomic_block:
        raise RuntimeError("lock_until_commit needs a transaction: call it inside atomic().")
    if connection.vendor != "postgresql":
        return  # SQLite: the IMMEDIATE transaction already holds the write lock (see above).
    text = "\x1f".join([namespace, *(str(value) for value in values)])
    key = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])
