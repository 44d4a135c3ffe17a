"""The outage logic of `inference.client` without a database or a server: while the endpoint is
unreachable only one probe is in flight, transport failures cost no attempt, an outage resumes
from its saved state, and one that lasts too long stops the run."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from inference.client import (
    Backoff,
    EndpointUnreachable,
    Outage,
    OutageState,
    Reply,
    TransientError,
    ask_until_usable,
)

pytestmark = pytest.mark.unit


class FlakyEndpoint:
    """Refuses every call until `up_at` (monotonic), then answers; records how many calls were
    in flight at once among those started while the outage was known."""

    def __init__(self, outage: Outage, down_seconds: float) -> None:
        self.outage = outage
        self.up_at = time.monotonic() + down_seconds
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak_during_outage = 0
        self.calls = 0

    def call(self) -> Reply:
        known = self.outage.state().since is not None
        with self.lock:
            self.calls += 1
            self.in_flight += 1
            if known:
                self.peak_during_outage = max(self.peak_during_outage, self.in_flight)
        try:
            time.sleep(0.01)
            if time.monotonic() < self.up_at:
                raise TransientError("connection failed: refused")
            return Reply("fine", 1, 1, 10)
        finally:
            with self.lock:
                self.in_flight -= 1


def test_while_unreachable_one_probe_at_a_time_and_no_attempt_is_charged():
    outage = Outage(limit_seconds=30, base=0.01, cap=0.05)
    endpoint = FlakyEndpoint(outage, down_seconds=0.6)

    def ask(_):
        return ask_until_usable(
            endpoint.call,
            lambda reply: reply.text,
            max_attempts=1,
            backoff=Backoff(base=0.01),
            outage=outage,
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        asked = list(pool.map(ask, range(8)))

    assert [item.value for item in asked] == ["fine"] * 8
    assert [item.attempts for item in asked] == [1] * 8  # only the answers were attempts
    assert endpoint.peak_during_outage == 1
    # 8 calls in flight when it went down, about 0.6 / 0.05 probes, then 8 answers.
    assert endpoint.calls <= 8 + 20 + 8
    assert outage.state() == OutageState()


def test_an_outage_longer_than_the_limit_stops_the_run_with_its_start_and_last_error():
    # Each user names its endpoint in the message (the judge's, a model's).
    outage = Outage(limit_seconds=0.3, base=0.01, cap=0.05, endpoint_name="judge endpoint")
    endpoint = FlakyEndpoint(outage, down_seconds=60)
    started = datetime.now(UTC)

    with pytest.raises(EndpointUnreachable) as raised:
        ask_until_usable(
            endpoint.call,
            lambda reply: reply.text,
            max_attempts=5,
            backoff=Backoff(),
            outage=outage,
        )

    assert str(raised.value) == (
        f"The judge endpoint was unreachable from {started:%Y-%m-%d %H:%M} UTC for 0 s "
        f"(the limit is 0 s): connection failed: refused"
    )


def test_a_saved_outage_waits_for_its_next_try_and_keeps_its_clock():
    since = datetime.now(UTC) - timedelta(seconds=100)
    next_try = datetime.now(UTC) + timedelta(seconds=0.3)
    outage = Outage(
        limit_seconds=1000, state=OutageState(since, next_try, "HTTP 503"), base=1, cap=30
    )
    stop = threading.Event()

    started = time.monotonic()
    probe = outage.acquire(stop)

    assert probe is True
    assert time.monotonic() - started >= 0.25
    assert outage.state().since == since
    outage.failed(TransientError("HTTP 503"), probe)
    state = outage.state()
    # The next wait is as long as the outage has lasted, capped: 30 s.
    assert 29 <= (state.next_try_at - datetime.now(UTC)).total_seconds() <= 30


def test_a_stop_ends_the_wait_for_a_probe():
    outage = Outage(
        limit_seconds=1000,
        state=OutageState(datetime.now(UTC), datetime.now(UTC) + timedelta(seconds=60), "x"),
    )
    stop = threading.Event()
    threading.Timer(0.1, stop.set).start()

    assert outage.acquire(stop) is None


def test_results_waiting_in_a_batch_do_not_hold_calls_back():
    """`concurrency` calls stay in flight while finished results wait for their batch (issue
    31, point 6: they used to count against it, so a call waited for the batch's hand-over),
    and never more than that; at most `concurrency + batch` items are started and not yet
    handed over."""
    from inference.client import run_bounded

    lock = threading.Lock()
    fifth_started = threading.Event()
    state = {"running": 0, "peak": 0, "started": 0, "handed": 0, "most_unhanded": 0}
    seen_at_fifth: dict[str, int] = {}

    def work(key, slow, stop):
        with lock:
            state["running"] += 1
            state["started"] += 1
            state["peak"] = max(state["peak"], state["running"])
            state["most_unhanded"] = max(state["most_unhanded"], state["started"] - state["handed"])
            if state["started"] == 5:
                seen_at_fifth.update(state)
                fifth_started.set()
        if slow:  # held until a fifth call starts (at most 5 s)
            fifth_started.wait(5)
        with lock:
            state["running"] -= 1
        return key

    def on_results(results):
        with lock:
            state["handed"] += len(results)

    # A quick item and three held ones fill the 4 slots; the quick one's result then waits for
    # its batch (2 results, or 10 s) while the fifth call goes out.
    items = [(0, False), (1, True), (2, True), (3, True)] + [(key, False) for key in range(4, 9)]
    complete = run_bounded(
        items,
        work,
        on_results=on_results,
        unfinished=lambda result: False,
        concurrency=4,
        batch=2,
        batch_seconds=10.0,
    )

    assert complete
    assert state["handed"] == 9
    assert seen_at_fifth["handed"] == 0  # it went out before the first result was handed over
    assert seen_at_fifth["running"] == 4  # beside the three held ones
    assert state["peak"] == 4
    assert state["most_unhanded"] <= 4 + 2
