"""Talking to an OpenAI-compatible chat endpoint at scale: the client (`ChatClient`), the
split of failures, the attempt loop (`ask_until_usable`), the run-wide outage (`Outage`) and
bounded concurrency (`run_bounded`). No Django here. Its users say only what an answer means:
the judge (`judging.client.judge_many`: a verdict), the re-run and hosted evaluation
(`inference.answering.answer_many`: any text); docs/inference.md.

`ChatClient` speaks the chat completions API itself over `inference.transport`, which holds
the rules for calling a URL someone else chose: no redirect followed, the address checked
where the connection is made, a wall-clock deadline per call, a bounded reply. Everything it
hands on that came from the endpoint (the answer, an error's text) has the call's key masked
(`inference.masking`), and the tokens it reports are never fewer than the text it sent and
received implies, whatever the endpoint claims (`CHARS_PER_TOKEN`).

Transport failures (429, 5xx, timeouts, refused or dropped connections) say the endpoint is
unreachable for now, not that an item is bad, so they cost no attempt: an `Outage` shared by
the run holds every call back and probes with growing waits until the endpoint answers again
(or a time limit passes). Only answers count as attempts, and only an item whose every answer
was unusable fails.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from . import guard
from .masking import mask_secrets
from .pacing import RateLimiter

MAX_BACKOFF_SECONDS = 60.0
# How long an endpoint may stay unreachable before a run gives up (PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS
# and its per-kind variants for stored jobs, `inference.settings`); the longest wait between two
# probes during an outage.
DEFAULT_OUTAGE_LIMIT_SECONDS = 1800.0
OUTAGE_PROBE_CAP_SECONDS = 30.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
# The longest answer a caller takes when it names no limit of its own (a judge's verdict is a
# few hundred characters; a benchmark's answers are bounded by its max_prediction_chars).
DEFAULT_MAX_ANSWER_CHARS = 100_000
# A reply's body may be this many bytes per character of the longest answer (JSON's escape of
# a character outside the BMP, a surrogate pair, is 12 bytes), plus the envelope's.
BYTES_PER_ANSWER_CHAR = 12
ENVELOPE_BYTES = 64 * 1024
# The tokens charged for a call are at least one per this many characters sent (the message's
# text) and received (the answer, or the bytes read of an over-long one), whatever the
# endpoint's usage says: the token cap holds against an endpoint that under-reports.
CHARS_PER_TOKEN = 6
# An endpoint's reported usage above this is not believed (it would overflow the counters).
MAX_REPORTED_TOKENS = 10_000_000
SHOWN_ERROR_CHARS = 200


class EndpointError(Exception):
    """The endpoint refused the request in a way no retry fixes (a bad key, an unknown model,
    a wrong URL, a redirect, an address Podium does not call): the whole run stops with this
    message. `status` is the HTTP status of the refusal (None when it was not one), so a user
    can name it in its own words (hosted evaluation: "the endpoint refused the API key")."""

    def __init__(self, message: str = "", *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Redirected(EndpointError):
    """The endpoint answered with a redirect, which Podium never follows."""


class AddressNotAllowed(EndpointError):
    """The endpoint's host is on an address Podium's workers do not call."""


class TransientError(Exception):
    """A failure worth retrying; `retry_after` is the server's Retry-After, in seconds."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Reply:
    """One answered call: the answer's text (None: no text in the reply, or an over-long one),
    the tokens charged for it, how long it took. `overlong` says why an answer was set aside
    for its length ("": it was not): such a reply is final for its item, not retried (at
    temperature 0 the model would answer the same)."""

    text: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    overlong: str = ""


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    """How to call one endpoint. `allow_private`: whether its host may be on a loopback,
    private or link-local address (checked at every connection, `inference.transport`);
    `max_answer_chars`: the longest answer taken (None: `DEFAULT_MAX_ANSWER_CHARS`), which
    also bounds how much of a reply is read."""

    base_url: str
    model: str
    api_key: str
    temperature: float = 0.0
    timeout_seconds: float = 30.0
    concurrency: int = 10
    max_attempts: int = 5
    allow_private: bool = False
    max_answer_chars: int | None = None


class ChatClient:
    """One user message in (text, or a list of content parts such as images), the answer text
    and token usage out; errors classified. `endpoint_name` and `key_hint` word the refusal: each
    user names its endpoint (`judging.client.JudgeClient`, `inference.answering.ModelClient`).
    Each call has the config's timeout as its wall-clock deadline."""

    endpoint_name = "endpoint"
    key_hint = "the API key named in the endpoint's configuration"

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self._url = config.base_url.rstrip("/") + "/chat/completions"
        self._headers = [
            (b"Content-Type", b"application/json"),
            (b"Accept", b"application/json"),
            (b"User-Agent", b"Podium"),
        ]
        if config.api_key:
            self._headers.append((b"Authorization", f"Bearer {config.api_key}".encode()))
        self._secrets = [config.api_key] if config.api_key else []
        self._max_chars = config.max_answer_chars or DEFAULT_MAX_ANSWER_CHARS
        self._max_bytes = self._max_chars * BYTES_PER_ANSWER_CHAR + ENVELOPE_BYTES
        from . import transport  # here: httpcore2 takes ~0.27 s to import (issue 16)

        self._transport = transport.Transport(
            allow_private=config.allow_private, max_connections=config.concurrency
        )

    def mask(self, text: str) -> str:
        """`text` with this client's key masked (`inference.masking`)."""
        return mask_secrets(text, self._secrets)

    def complete(self, content: str | list[dict[str, Any]]) -> Reply:
        body = json.dumps(
            {
                "model": self.config.model,
                "messages": [{"role": "user", "content": content}],
                "temperature": self.config.temperature,
            }
        ).encode()
        sent_tokens = math.ceil(_text_chars(content) / CHARS_PER_TOKEN)
        timeout = self.config.timeout_seconds
        started = time.monotonic()
        try:
            with guard.bounded_call(timeout):
                response = self._transport.post(
                    self._url,
                    headers=self._headers,
                    body=body,
                    max_bytes=self._max_bytes,
                    timeout=timeout,
                )
        except guard.ReplyTooLarge as error:
            return Reply(
                None,
                sent_tokens,
                math.ceil(error.limit / CHARS_PER_TOKEN),
                _elapsed_ms(started),
                overlong=f"the answer was longer than {self._max_chars:,} characters, the "
                "most this benchmark takes (reading stopped there)",
            )
        except guard.CallCancelled:
            raise
        except guard.AddressRefused as error:
            raise AddressNotAllowed(
                f"the {self.endpoint_name} is not called: {self.mask(str(error))}"
            ) from None
        except (guard.DeadlinePassed, _httpcore_timeouts()):
            raise TransientError(f"no answer within {timeout:g} s") from None
        except _httpcore_errors() as error:
            raise TransientError(f"connection failed: {self.mask(str(error))}") from None
        latency_ms = _elapsed_ms(started)
        if response.status >= 300:
            raise self._refusal(response)
        return self._reply(response.body, sent_tokens, latency_ms)

    def _reply(self, raw: bytes, sent_tokens: int, latency_ms: int) -> Reply:
        """The answer's text and the tokens charged, from a 2xx body."""
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        text = None
        usage: dict[str, Any] = {}
        if isinstance(data, dict):
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            choices = data.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                message = choices[0].get("message")
                if isinstance(message, dict) and isinstance(message.get("content"), str):
                    text = message["content"]
        received = len(text) if text is not None else len(raw)
        prompt_tokens = max(_reported(usage.get("prompt_tokens")), sent_tokens)
        completion_tokens = max(
            _reported(usage.get("completion_tokens")), math.ceil(received / CHARS_PER_TOKEN)
        )
        if text is not None and len(text) > self._max_chars:
            return Reply(
                None,
                prompt_tokens,
                completion_tokens,
                latency_ms,
                overlong=f"the answer was {len(text):,} characters long, longer than "
                f"{self._max_chars:,}, the most this benchmark takes",
            )
        return Reply(
            None if text is None else self.mask(text), prompt_tokens, completion_tokens, latency_ms
        )

    def _refusal(self, response: Any) -> Exception:
        """The exception for a status of 300 or more, its text masked."""
        status = response.status
        if status < 400:
            location = self.mask(response.headers.get("location", "")[:SHOWN_ERROR_CHARS])
            return Redirected(
                f"the {self.endpoint_name} answered with a redirect (HTTP {status}) to "
                f"{location or 'an unnamed address'}; Podium follows no redirect: give its "
                "final URL",
                status=status,
            )
        detail = f"HTTP {status}"
        message = _error_message(response.body)
        if message:
            detail += f": {self.mask(message[:SHOWN_ERROR_CHARS])}"
        if status in RETRYABLE_STATUS or status >= 500:
            return TransientError(detail, retry_after=retry_after_seconds(response.headers))
        hint = {
            401: f" (check {self.key_hint})",
            403: " (the key may lack access to this model)",
            404: " (check the base URL and the model name)",
        }.get(status, "")
        return EndpointError(
            f"the {self.endpoint_name} refused the request: {detail}{hint}", status=status
        )

    def close(self) -> None:
        self._transport.close()


def _httpcore_timeouts() -> type[Exception]:
    import httpcore2  # imported by the transport already (see ChatClient.__init__)

    return httpcore2.TimeoutException


def _httpcore_errors() -> tuple[type[Exception], ...]:
    import httpcore2  # imported by the transport already

    return (httpcore2.NetworkError, httpcore2.ProtocolError)


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _text_chars(content: str | list[dict[str, Any]]) -> int:
    """The characters of a message's text (its text parts; images are not counted)."""
    if isinstance(content, str):
        return len(content)
    return sum(len(part.get("text") or "") for part in content if part.get("type") == "text")


def _reported(value: Any) -> int:
    """A usage count as the endpoint reported it, if it is believable (else 0)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return min(value, MAX_REPORTED_TOKENS)
    return 0


def _error_message(raw: bytes) -> str:
    """What an error reply says: OpenAI's `{"error": {"message"}}` (or a top-level
    "message"), else its text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text
    error = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    return text


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
    `backoff` before the next attempt; an over-long reply (`Reply.overlong`) ends the item's
    attempts. With a `limiter` every call (a probe too) waits for its slot first
    (`inference.pacing`). Once `stop` is set a call blocked on the network ends within
    `guard.POLL_SECONDS` and the item is handed back unfinished. `EndpointError` propagates. The judge
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
            # A draining stop (`StopEvent`) lets a call already sent finish; its abort cuts it.
            with guard.stoppable(getattr(stop, "abort", stop)):
                reply = call()
        except TransientError as failure:
            outage.failed(failure, probe)
            error = str(failure)
            continue
        except guard.CallCancelled:
            outage.released(probe)
            break
        except BaseException:
            outage.released(probe)
            raise
        outage.answered(probe)
        attempts += 1
        prompt_tokens += reply.prompt_tokens
        completion_tokens += reply.completion_tokens
        if reply.overlong:
            # Final: at temperature 0 the model would answer the same, at the same cost.
            return Asked(
                None, None, attempts, calls, prompt_tokens, completion_tokens, reply.overlong
            )
        try:
            value = interpret(reply)
        except UnusableReply as failure:
            error = str(failure)
        else:
            return Asked(value, reply, attempts, calls, prompt_tokens, completion_tokens, "")
        if attempts < max_attempts and stop.wait(backoff.delay(attempts)):
            break
    return Asked(None, None, attempts, calls, prompt_tokens, completion_tokens, error)


class StopEvent(threading.Event):
    """`run_bounded`'s stop: set, no new question starts and the waits before a call give up;
    `abort` set too, a call on the network is cut (`guard.stoppable`)."""

    def __init__(self) -> None:
        super().__init__()
        self.abort = threading.Event()


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
    should_abort: Callable[[], bool] | None = None,
) -> bool:
    """Run `work(key, payload, stop)` for each pending item with at most `concurrency` in
    flight; `on_results` runs in the calling thread with finished results, in batches of up to
    `batch` (or whatever finished within `batch_seconds`). At most `concurrency` calls are in
    flight whatever waits in a batch (results waiting there used to count against it, which
    kept a fifth of a judge's calls from going out: issue 31, point 6), and at most
    `concurrency + batch` items are started but not yet handed over: a crash repeats at most
    that many. `tick` runs at least every `tick_seconds`;
    once `should_stop()` is true no new item starts, `stop` is set (work should give up its
    waits), and a result `unfinished(result)` says was cut short is dropped (its item stays
    pending). Returns True when every item was handed over. `EndpointError` stops the run:
    items in flight finish first, then it is raised. Every user of the engine runs through
    this.

    With `should_abort`, a stop drains: the calls already sent finish and their answers are
    kept (a time slice's end, a token cap: an answer the endpoint is already computing is paid
    for, and cutting it meant asking that question again in the next slice), and only
    `should_abort()` (a cancel) or an `EndpointError` cuts the calls on the network
    (`stop.abort`, which `ask_until_usable` watches). Without it every stop cuts them."""
    stop = StopEvent()
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
                if should_abort is None:
                    stop.abort.set()
            if should_abort is not None and not stop.abort.is_set() and should_abort():
                stop.set()
                stop.abort.set()
            while (
                not exhausted
                and not stop.is_set()
                and len(in_flight) < concurrency
                and len(in_flight) + len(finished) < concurrency + batch
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
                    stop.abort.set()
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
