"""The rate limiter (inference/pacing.py): slots one interval apart on the monotonic clock, no
burst after an idle spell, shared safely by many threads, and a wait that gives way to a stop;
and the engine's attempt loop paced by it."""

import itertools
import threading
import time

import pytest

from inference.client import Backoff, Outage, Reply, UnusableReply, ask_until_usable
from inference.pacing import RateLimiter

pytestmark = pytest.mark.unit


class FakeClock:
    """A monotonic clock the test moves; `sleep` moves it (as if the whole wait passed)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        self.slept.append(seconds)
        self.now += seconds
        return stop.is_set()


def test_slots_are_one_interval_apart_and_an_idle_limiter_does_not_save_them_up():
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)

    assert [limiter.reserve() for _ in range(3)] == [100.0, 101.0, 102.0]
    clock.now = 110.0  # idle for a while: the next call goes at once, the one after waits
    assert [limiter.reserve() for _ in range(2)] == [110.0, 111.0]


def test_wait_sleeps_until_the_slot_on_the_monotonic_clock():
    clock = FakeClock()
    limiter = RateLimiter(120, clock=clock, sleep=clock.sleep)  # one call every 0.5 s

    assert [limiter.wait() for _ in range(4)] == [True] * 4
    assert clock.slept == [0.5, 0.5, 0.5]
    assert clock.now == 101.5


def test_a_limit_is_a_positive_number():
    with pytest.raises(ValueError, match="positive number of calls a minute, not 0"):
        RateLimiter(0)


def test_many_threads_never_start_two_calls_closer_than_the_interval():
    limiter = RateLimiter(6000)  # 10 ms apart
    starts: list[float] = []
    lock = threading.Lock()

    def call() -> None:
        assert limiter.wait()
        with lock:
            starts.append(time.monotonic())

    threads = [threading.Thread(target=call) for _ in range(40)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    starts.sort()
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    assert len(starts) == 40
    # Each start is at or after its slot, and slots are 10 ms apart: the 40 calls span at
    # least 39 intervals (a thread woken late only widens a gap).
    assert starts[-1] - began >= 39 * 0.01 - 0.002
    assert sum(gap < 0.005 for gap in gaps) <= 2  # scheduler jitter, never a burst


def test_a_stop_ends_the_wait_at_once():
    limiter = RateLimiter(1)  # the second call's slot is a minute away
    assert limiter.wait()
    stop = threading.Event()
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(limiter.wait(stop)))
    waiter.start()
    time.sleep(0.05)
    stop.set()
    waiter.join(timeout=2)

    assert not waiter.is_alive()
    assert result == [False]


def test_the_attempt_loop_paces_every_call_and_a_stop_makes_none():
    limiter = RateLimiter(1200)  # 50 ms apart
    calls: list[float] = []

    def call() -> Reply:
        calls.append(time.monotonic())
        return Reply(text=None, prompt_tokens=1, completion_tokens=1, latency_ms=0)

    def interpret(reply: Reply) -> str:
        raise UnusableReply("no text")

    asked = ask_until_usable(
        call,
        interpret,
        max_attempts=4,
        backoff=Backoff(base=0.0),
        outage=Outage(limit_seconds=5),
        limiter=limiter,
    )

    assert (asked.attempts, asked.calls, asked.value) == (4, 4, None)
    gaps = [later - earlier for earlier, later in itertools.pairwise(calls)]
    assert min(gaps) >= 0.045

    stop = threading.Event()
    stop.set()
    calls.clear()
    stopped = ask_until_usable(
        call,
        interpret,
        max_attempts=4,
        backoff=Backoff(base=0.0),
        outage=Outage(limit_seconds=5),
        stop=stop,
        limiter=limiter,
    )
    assert (stopped.calls, calls) == (0, [])
