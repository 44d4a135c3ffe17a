"""core.workers: worker identity and liveness, the heartbeat thread, retrying on a dropped
connection, and the reaper watchdog that each worker process runs."""

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


@pytest.mark.unit
def test_a_heartbeat_beats_while_its_block_runs_and_stops_after():
    calls = []
    with workers.Heartbeat(lambda: calls.append(time.monotonic()) is None, every=0.05) as beat:
        time.sleep(0.5)
    count = len(calls)
    time.sleep(0.2)
    assert 5 <= count == len(calls) == beat.beats
    assert beat.lost is False


@pytest.mark.unit
def test_a_heartbeat_stops_once_the_work_is_no_longer_ours():
    answers = iter([True, True, False, True])
    with workers.Heartbeat(lambda: next(answers), every=0.02) as beat:
        time.sleep(0.3)
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
        time.sleep(0.3)
    assert heartbeat.beats >= 2
    assert "heartbeat failed" in caplog.text


@pytest.mark.unit
def test_run_reapers_runs_each_even_if_one_fails(monkeypatch, caplog):
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
def test_the_watchdog_reaps_at_once_and_then_every_period(monkeypatch):
    rounds = []
    monkeypatch.setattr(workers, "_reapers", [lambda: rounds.append(time.monotonic()) or 0])
    monkeypatch.setattr(workers, "_watchdog", None)
    started = time.monotonic()
    stop = workers.start_watchdog(every=0.1)
    assert workers.start_watchdog(every=0.1) is stop  # one per process
    time.sleep(0.45)
    stop.set()
    assert rounds[0] - started < 0.05
    assert 4 <= len(rounds) <= 6


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
def test_retry_on_lost_connection_retries_once_only():
    from django.db import OperationalError

    calls = []

    def always_broken():
        calls.append(1)
        raise OperationalError("terminating connection due to administrator command")

    with pytest.raises(OperationalError):
        workers.retry_on_lost_connection(always_broken, what="a test")
    assert len(calls) == 2
