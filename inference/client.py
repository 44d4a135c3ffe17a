"""Talking to an OpenAI-compatible chat endpoint at scale: the transport (`ChatClient`), the
split of failures, the attempt loop (`ask_until_usable`), the run-wide outage (`Outage`) and
bounded concurrency (`run_bounded`). No Django here. Its users say only what an answer means:
the judge (`judging.client.judge_many`: a verdict), the re-run and hosted evaluation
(`inference.answering.answer_many`: any text); docs/inference.md.

The openai client's own retries are switched off (`max_retries=0`): transport failures (429, 5xx,
timeouts, refused or dropped connections) say the endpoint is unreachable for now, not that an
item is bad, so they cost no attempt: an `Outage` shared by the run holds every call back and
probes with growing waits until the endpoint answers again (or a time limit passes). Only
answers count as attempts, and only an item whose every answer was unusable fails.

`openai` is imported by the first `ChatClient`, not with this module: it takes ~0.3 s, and
every process imports this module at start-up (issue 16) while only the judge, the re-run and
hosted evaluation talk to an endpoint.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .pacing import RateLimiter

if TYPE_CHECKING:
    import openai

MAX_BACKOFF_SECONDS = 60.0
# How long an endpoint may stay unreachable before a run gives up (PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS
# and its per-kind variants for stored jobs, `inference.settings`); the longest wait between two
# probes during an outage.
DEFAULT_OUTAGE_LIMIT_SECONDS = 1800.0
OUTAGE_PROBE_CAP_SECONDS = 30.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


class EndpointError(Exception):
    """The endpoint refused the request in a way no retry fixes (a bad key, an unknown model,
    a wrong URL): the whole run stops with this message. `status` is the HTTP status of the
    refusal (None when it was not one), so a user can name it in its own words (hosted
    evaluation: "the endpoint refused the API key")."""

    def __init__(self, message: str = "", *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientError(Exception):
    """A failure worth retrying; `retry_after` is the server's Retry-After, in seconds."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Reply:
    text: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    base_url: str
    model: str
    api_key: str
    temperature: float = 0.0
    timeout_seconds: float = 30.0
    concurrency: int = 10
    max_attempts: int = 5


class ChatClient:
    """One user message in (text, or a list of content parts such as images), the answer text
    and token usage out; errors classified. `endpoint_name` and `key_hint` word the refusal: each
    user names its endpoint (`judging.client.JudgeClient`, `inference.answering.ModelClient`)."""

    endpoint_name = "endpoint"
    key_hint = "the API key named in the endpoint's configuration"

    def __init__(self, config: EndpointConfig) -> None:
        import openai  # here: see the module docstring

        self.config = config
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "unused",
            max_retries=0,
            timeout=config.timeout_seconds,
        )

    def complete(self, content: str | list[dict[str, Any]]) -> Reply:
        openai = self._openai
        started = time.monotonic()
        try:
            response = self._client.chat.completions.create(
                model=self.config.model,
                messages=[{"role": "user", "content": content}],
                temperature=self.config.temperature,
            )
        except openai.APITimeoutError:
            raise TransientError(f"no answer within {self.config.timeout_seconds:g} s") from None
        except openai.APIConnectionError as error:
            raise TransientError(f"connection failed: {error}") from None
        except openai.APIStatusError as error:
            raise _classify(error, self.endpoint_name, self.key_hint) from None
        latency_ms = round((time.monotonic() - started) * 1000)
        usage = getattr(response, "usage", None)
        choices = getattr(response, "choices", None) or []
        text = choices[0].message.content if choices else None
        return Reply(
            text=text,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            latency_ms=latency_ms,
        )

    def close(self) -> None:
        self._client.close()


def _classify(error: openai.APIStatusError, endpoint_name: str, key_hint: str) -> Exception:
    status = error.status_code
    detail = f"HTTP {status}"
    message = getattr(error, "message", "") or ""
    if message:
        detail += f": {message[:200]}"
    if status in RETRYABLE_STATUS or status >= 500:
        return TransientError(detail, retry_after=retry_after_seconds(error.response.headers))
    hint = {
        401: f" (check {key_hint})",
        403: " (the key may lack access to this model)",
        404: " (check the base URL and the model name)",
    }.get(status, "")
    return EndpointError(f"the {endpoint_name} refused the request: {detail}{hint}", status=status)


def retry_after_seconds(headers: object) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (a number; an HTTP date is ignored)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return min(seconds, MAX_BACKOFF_SECONDS)
    return None


# --- asking many questions ------------------------------------------------------------------


@dataclass
class Backoff:
    """Exponential backoff with full jitter: attempt n waits up to base x 2^(n-1) seconds
    (capped), or the server's Retry-After when it sent one."""

    base: float = 1.0
    cap: float = 16.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return retry_after
        return random.uniform(0, min(self.cap, self.base * 2 ** (attempt - 1)))


class EndpointUnreachable(EndpointError):
    """The endpoint stayed unreachable (only transient failures) for longer than the outage
    limit: the run stops with this message, and what it had not asked stays pending."""


class UnusableReply(Exception):
    """The endpoint answered, but not with something the caller can use (a verdict without a
    valid score, a reply without text): a failed attempt."""


@dataclass(frozen=True, slots=True)
class OutageState:
    """An outage as it is persisted between time slices: since when the endpoint has only failed
    transiently, when the next probe goes, the last transient error. `since` None: reachable."""

    since: datetime | None = None
    next_try_at: datetime | None = None
    last_error: str = ""


def _now() -> datetime:
    return datetime.now(UTC)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


class Outage:
    """The endpoint's reachability, shared by every worker thread of one run.

    A transient failure (connection refused or dropped, timeout, 429, 5xx) says the endpoint is
    unreachable, not that the item is bad: no attempt is charged for it. From the first one
    until the next success the run backs off as a whole: no new call starts except one probe at
    a time, each after a wait as long as the outage has lasted so far (at least `base`, at most
    `cap` seconds, or the server's Retry-After), so probes come at roughly base, 2 base, 4 base
    ... seconds into the outage. Any answer ends the outage. Once it has lasted `limit_seconds`,
    `acquire` raises `EndpointUnreachable`. `state` resumes an outage a previous time slice
    persisted (then its clock and next probe carry on)."""

    def __init__(
        self,
        *,
        limit_seconds: float,
        base: float = 1.0,
        cap: float = 30.0,
        state: OutageState | None = None,
        endpoint_name: str = "endpoint",
    ) -> None:
        self.limit_seconds = limit_seconds
        self.base = base
        self.cap = cap
        self.endpoint_name = endpoint_name
        state = state or OutageState()
        self._since = state.since
        self._next_try = state.next_try_at or state.since
        self._last_error = state.last_error
        self._probing = False
        self._condition = threading.Condition()

    def state(self) -> OutageState:
        with self._condition:
            if self._since is None:
                return OutageState()
            return OutageState(self._since, self._next_try, self._last_error)

    def acquire(self, stop: threading.Event) -> bool | None:
        """Wait until a call may start: False when the endpoint is reachable, True when this
        call is the probe, None when `stop` was set meanwhile."""
        with self._condition:
            while True:
                if stop.is_set():
                    return None
                if self._since is None:
                    return False
                now = _now()
                down_for = (now - self._since).total_seconds()
                if down_for >= self.limit_seconds:
                    raise EndpointUnreachable(self._limit_message(down_for))
                if not self._probing and self._next_try is not None and now >= self._next_try:
                    self._probing = True
                    return True
                wait = self.limit_seconds - down_for
                if not self._probing and self._next_try is not None:
                    wait = min(wait, (self._next_try - now).total_seconds())
                # Short waits: a set `stop` is noticed quickly (Event and Condition do not mix).
                self._condition.wait(timeout=max(0.001, min(wait, 0.2)))

    def answered(self, probe: bool) -> None:
        """The endpoint answered (whatever the answer): the outage, if any, is over."""
        with self._condition:
            if probe:
                self._probing = False
            if self._since is not None:
                self._since = self._next_try = None
                self._last_error = ""
                self._condition.notify_all()

    def failed(self, error: TransientError, probe: bool) -> None:
        """A transient failure: the outage starts (or goes on) and the next probe is set."""
        with self._condition:
            now = _now()
            self._last_error = str(error)[:500]
            if self._since is None:
                self._since = now
                self._next_try = now + timedelta(seconds=self._delay(0.0, error.retry_after))
            elif probe:
                down_for = (now - self._since).total_seconds()
                self._next_try = now + timedelta(seconds=self._delay(down_for, error.retry_after))
            if probe:
                self._probing = False
            self._condition.notify_all()

    def released(self, probe: bool) -> None:
        """The call ended otherwise (a refusal that stops the run): let another probe go."""
        if probe:
            with self._condition:
                self._probing = False
                self._condition.notify_all()

    def _delay(self, down_for: float, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return min(self.cap, max(self.base, down_for))

    def _limit_message(self, down_for: float) -> str:
        assert self._since is not None
        return (
            f"The {self.endpoint_name} was unreachable from {self._since:%Y-%m-%d %H:%M} UTC for "
            f"{_duration(down_for)} (the limit is {_duration(self.limit_seconds)}): "
            f"{self._last_error or 'no answer'}"
        )


@dataclass(frozen=True, slots=True)
class Asked[T]:
    """What one question came to: the usable value (None once every attempt failed or the run
    stopped), the reply that held it, attempts charged (answered calls only), HTTP calls made,
    tokens over all of them, the last error."""

    value: T | None
    reply: Reply | None
    attempts: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    error: str


def ask_until_usable[T](
    call: Callable[[], Reply],
    interpret: Callable[[Reply], T],
    *,
    max_attempts: int,
    backoff: Backoff,
    outage: Outage,
    stop: threading.Event | None = None,
    limiter: RateLimiter | None = None,
) -> Asked[T]:
    """Call until `interpret(reply)` returns a value (it raises `UnusableReply` for a reply it
    cannot use) or `max_attempts` answered calls were unusable. Transient failures are not
    attempts: they go to `outage`, which holds every call back while the endpoint is down (and
    raises `EndpointUnreachable` once it has been down too long). An unusable reply waits
    `backoff` before the next attempt. With a `limiter` every call (a probe too) waits for its
    slot first (`inference.pacing`). `EndpointError` propagates. The judge
    (`judging.client.judge_one`) and the re-run and hosted evaluation
    (`inference.answering.answer_one`) all ask through this."""
    stop = stop or threading.Event()
    attempts = calls = prompt_tokens = completion_tokens = 0
    error = ""
    while attempts < max_attempts:
        probe = outage.acquire(stop)
        if probe is None:
            break
        if limiter is not None and not limiter.wait(stop):
            outage.released(probe)
            break
        try:
            calls += 1
            reply = call()
        except TransientError as failure:
            outage.failed(failure, probe)
            error = str(failure)
            continue
        except BaseException:
            outage.released(probe)
            raise
        outage.answered(probe)
        attempts += 1
        prompt_tokens += reply.prompt_tokens
        completion_tokens += reply.completion_tokens
        try:
            value = interpret(reply)
        except UnusableReply as failure:
            error = str(failure)
        else:
            return Asked(value, reply, attempts, calls, prompt_tokens, completion_tokens, "")
        if attempts < max_attempts and stop.wait(backoff.delay(attempts)):
            break
    return Asked(None, None, attempts, calls, prompt_tokens, completion_tokens, error)


def run_bounded[K, P, R](
    pending: Iterable[tuple[K, P]],
    work: Callable[[K, P, threading.Event], R],
    *,
    on_results: Callable[[list[R]], None],
    unfinished: Callable[[R], bool],
    concurrency: int,
    batch: int = 1,
    batch_seconds: float = 0.1,
    should_stop: Callable[[], bool] = lambda: False,
    tick: Callable[[], None] = lambda: None,
    tick_seconds: float = 1.0,
    thread_name: str = "worker",
) -> bool:
    """Run `work(key, payload, stop)` for each pending item with at most `concurrency` in
    flight; `on_results` runs in the calling thread with finished results, in batches of up to
    `batch` (or whatever finished within `batch_seconds`). Results waiting in a batch count
    against `concurrency`, so at any moment at most `concurrency` items are started but not yet
    handed over: a crash repeats at most that many. `tick` runs at least every `tick_seconds`;
    once `should_stop()` is true no new item starts, `stop` is set (work should give up its
    waits), and a result `unfinished(result)` says was cut short is dropped (its item stays
    pending). Returns True when every item was handed over. `EndpointError` stops the run:
    items in flight finish first, then it is raised. Every user of the engine runs through
    this."""
    stop = threading.Event()
    items: Iterator[tuple[K, P]] = iter(pending)
    in_flight: set[Future[R]] = set()
    finished: list[R] = []
    oldest = 0.0
    exhausted = False
    fatal: EndpointError | None = None

    def hand_over() -> None:
        nonlocal finished
        if finished:
            ready, finished = finished, []
            on_results(ready)

    with ThreadPoolExecutor(
        max_workers=max(1, concurrency), thread_name_prefix=thread_name
    ) as pool:
        while True:
            if fatal is None and not stop.is_set() and should_stop():
                stop.set()
            while (
                not exhausted and not stop.is_set() and len(in_flight) + len(finished) < concurrency
            ):
                try:
                    key, payload = next(items)
                except StopIteration:
                    exhausted = True
                    break
                in_flight.add(pool.submit(work, key, payload, stop))
            if not in_flight:
                hand_over()
                break
            timeout = tick_seconds
            if finished:
                timeout = max(0.0, min(timeout, oldest + batch_seconds - time.monotonic()))
            done, in_flight = wait(in_flight, timeout=timeout, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    result = future.result()
                except EndpointError as error:
                    fatal = fatal or error
                    stop.set()
                    continue
                if stop.is_set() and unfinished(result):
                    continue  # cut short by a stop (or a fatal error), not failed: it stays pending
                if not finished:
                    oldest = time.monotonic()
                finished.append(result)
            if finished and (
                len(finished) >= batch
                or time.monotonic() - oldest >= batch_seconds
                or not in_flight
            ):
                hand_over()
            tick()
    if fatal is not None:
        raise fatal
    return exhausted and not stop.is_set()
