"""core.workers: worker identity and liveness, the heartbeat thread, retrying on a dropped
connection, and the reaper watchdog that each worker process runs."""

import itertools
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from django.db import connection

from core import workers


@pytest.mark.unit
def test_worker_id_is_host_and_pid():
    assert workers.worker_id() == f"{socket.gethostname()}:{os.getpid()}"


@pytest.mark.unit
def test_a_worker_is_gone_only_if_its_process_on_this_host_has_exited():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    host = socket.gethostname()
    try:
        assert workers.worker_is_gone(f"{host}:{child.pid}") is False
    finally:
        child.kill()
        child.wait()
    assert workers.worker_is_gone(f"{host}:{child.pid}") is True
    assert workers.worker_is_gone(workers.worker_id()) is False
    assert workers.worker_is_gone(f"another-{host}:{child.pid}") is False  # only a heartbeat tells
    assert workers.worker_is_gone("") is False
    assert workers.worker_is_gone(f"{host}:not-a-pid") is False


@pytest.fixture
def database_open(django_db_blocker):
    """The database open to a test outside any transaction. Closing a broken or failed
    connection (close_old_connections) asks the server whether it is usable when this process
    has one open, and whether it has depends on which tests ran before in the same process:
    pytest-xdist's workers each run a different share, and such a test failed there with
    "Database access not allowed". No transaction, or retry_on_lost_connection would not
    retry."""
    with django_db_blocker.unblock():
        yield


def wait_until(condition, timeout=60.0):
    """Until `condition()` holds. The heartbeat tests wait for the beats they need rather than
    counting the beats of a fixed sleep, which a loaded machine falls short of; `timeout`
    only keeps a broken heartbeat from hanging the suite."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.01)


@pytest.mark.unit
def test_a_heartbeat_beats_while_its_block_runs_and_stops_after():
    calls = []
    with workers.Heartbeat(lambda: calls.append(time.monotonic()) is None, every=0.05) as beat:
        wait_until(lambda: len(calls) >= 5)
    beat._thread.join(timeout=60)  # a beat under way at the stop (a loaded machine) is counted
    count = len(calls)
    time.sleep(0.2)
    assert 5 <= count == len(calls) == beat.beats
    assert beat.lost is False


@pytest.mark.unit
def test_a_heartbeat_stops_once_the_work_is_no_longer_ours():
    answers = iter([True, True, False, True])
    with workers.Heartbeat(lambda: next(answers), every=0.02) as beat:
        wait_until(lambda: beat.lost)  # the thread has ended: no beat after the lost one
    assert (beat.beats, beat.lost) == (2, True)


@pytest.mark.unit
def test_a_failing_beat_is_logged_and_beating_goes_on(caplog):
    from django.db import OperationalError

    results = iter([OperationalError("server closed the connection"), True, True])

    def beat():
        result = next(results, True)
        if isinstance(result, Exception):
            raise result
        return result

    with workers.Heartbeat(beat, every=0.02) as heartbeat:
        wait_until(lambda: heartbeat.beats >= 2)
    assert heartbeat.beats >= 2
    assert "heartbeat failed" in caplog.text


@pytest.mark.unit
def test_run_reapers_runs_each_even_if_one_fails(monkeypatch, caplog, database_open):
    calls = []

    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(workers, "_reapers", [])
    workers.add_reaper(broken)
    workers.add_reaper(lambda: calls.append("second") or 2)
    workers.add_reaper(broken)  # registered once
    assert workers.run_reapers() == 2
    assert calls == ["second"]
    assert len(workers._reapers) == 2
    assert "reaper" in caplog.text


@pytest.mark.unit
def test_the_watchdog_reaps_at_once(monkeypatch):
    # A period far longer than the wait: a watchdog that waited a period before its first
    # round would not reap here. (It asserted "within 50 ms" before, which a loaded machine
    # missed; the order of events is what matters.)
    reaped = threading.Event()
    monkeypatch.setattr(workers, "_reapers", [lambda: reaped.set() or 0])
    monkeypatch.setattr(workers, "_watchdog", None)
    stop = workers.start_watchdog(every=3600)
    try:
        assert workers.start_watchdog(every=3600) is stop  # one per process
        assert reaped.wait(timeout=60)
    finally:
        stop.set()
        workers._watchdog[0].join(timeout=60)


@pytest.mark.unit
def test_the_watchdog_reaps_every_period_until_stopped(monkeypatch):
    # The rounds are at least a period apart and keep coming; after the stop, none. (It counted
    # the rounds in a fixed 0.45 s before, which a loaded machine fell short of.)
    rounds = []
    fourth = threading.Event()

    def reaper():
        rounds.append(time.monotonic())
        if len(rounds) == 4:
            fourth.set()
        return 0

    monkeypatch.setattr(workers, "_reapers", [reaper])
    monkeypatch.setattr(workers, "_watchdog", None)
    stop = workers.start_watchdog(every=0.1)
    thread = workers._watchdog[0]
    try:
        assert fourth.wait(timeout=60)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive()
    gaps = [later - earlier for earlier, later in itertools.pairwise(rounds)]
    assert min(gaps) >= 0.1 * 0.99  # Event.wait's clock may round a hair short
    stopped_at = len(rounds)
    time.sleep(0.3)
    assert len(rounds) == stopped_at


@pytest.mark.unit
def test_the_cluster_signal_starts_the_watchdog(monkeypatch):
    from django_q.signals import post_spawn

    seen = threading.Event()
    monkeypatch.setattr(workers, "_reapers", [lambda: seen.set() or 0])
    monkeypatch.setattr(workers, "_watchdog", None)
    post_spawn.send(sender="django_q", proc_name="Process-test")
    assert seen.wait(2)
    workers._watchdog[1].set()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_terminate_backend")
def test_retry_on_lost_connection_replaces_a_terminated_connection():
    def backend_pid():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    first = backend_pid()
    killer = threading.Thread(target=_terminate, args=(first,))
    killer.start()
    killer.join()
    assert workers.retry_on_lost_connection(backend_pid, what="a test") != first


def _terminate(pid):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    connection.close()


@pytest.mark.unit
def test_retry_on_lost_connection_retries_once_only(database_open):
    from django.db import OperationalError

    calls = []

    def always_broken():
        calls.append(1)
        raise OperationalError("terminating connection due to administrator command")

    with pytest.raises(OperationalError):
        workers.retry_on_lost_connection(always_broken, what="a test")
    assert len(calls) == 2
