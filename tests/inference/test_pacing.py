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
    """40 threads at once: the slots they reserve are at least one interval apart (the lock
    hands out each once), and no thread's call starts before its slot. When a thread wakes
    after its slot is the scheduler's business (a late one only delays its own call), so the
    test reads the slots, not the gaps between wake-ups, which the machine's load moves."""
    limiter = RateLimiter(6000)  # 10 ms apart
    reserve = limiter.reserve
    calls: list[tuple[float, float]] = []  # (slot, when the call started)
    lock = threading.Lock()
    slot_of: dict[int, float] = {}

    def reserving() -> float:
        slot = reserve()
        slot_of[threading.get_ident()] = slot
        return slot

    limiter.reserve = reserving  # type: ignore[method-assign]

    def call() -> None:
        assert limiter.wait()
        started = time.monotonic()
        with lock:
            calls.append((slot_of[threading.get_ident()], started))

    threads = [threading.Thread(target=call) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    slots = sorted(slot for slot, _ in calls)
    assert len(slots) == 40
    # One interval apart, or more where a thread came to reserve after the next free slot had
    # passed (an idle limiter saves nothing up); never closer.
    assert all(later - earlier >= 0.01 - 1e-9 for earlier, later in itertools.pairwise(slots))
    assert all(started >= slot for slot, started in calls)


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
