"""`core.locks.lock_until_commit`: it needs a transaction; on PostgreSQL a second transaction
asking for the same key waits until the first ends, and one asking for another key does not."""

import threading
import time

import pytest
from django.db import connection, transaction

from core.locks import lock_until_commit

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

HELD = 1.0


def test_the_lock_needs_a_transaction():
    with pytest.raises(RuntimeError, match="lock_until_commit needs a transaction"):
        lock_until_commit("tests.lock", 1)


def hold(*values):
    """Hold the lock of `values` in another thread's transaction for HELD seconds."""
    taken = threading.Event()

    def run():
        try:
            with transaction.atomic():
                lock_until_commit("tests.lock", *values)
                taken.set()
                time.sleep(HELD)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert taken.wait(20)
    return thread


def waited_for(*values) -> float:
    started = time.monotonic()
    with transaction.atomic():
        lock_until_commit("tests.lock", *values)
    return time.monotonic() - started


def test_a_second_transaction_waits_for_the_same_key_only():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's IMMEDIATE transactions serialise every writer: no key to wait on")
    thread = hold(7, "abc")
    try:
        other_key = waited_for(7, "abd")
        same_key = waited_for(7, "abc")
    finally:
        thread.join(20)

    assert other_key < HELD / 2
    assert same_key > HELD / 2
