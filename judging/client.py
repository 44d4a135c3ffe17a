"""Talking to an OpenAI-compatible chat endpoint, and judging many prompts with bounded
concurrency, retries and backoff. No Django here: the `score` command judges files with it, and
`judging.services` drives it for stored jobs.

The openai client's own retries are switched off (`max_retries=0`): one attempt budget per item
covers both transport failures (429, 5xx, timeouts, dropped connections) and answers that do not
hold a valid verdict, which the library cannot recognise, and every attempt is counted.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import openai

from benchmark.scoring.judge import Rubric, VerdictError

MAX_BACKOFF_SECONDS = 60.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


class EndpointError(Exception):
    """The endpoint refused the request in a way no retry fixes (a bad key, an unknown model,
    a wrong URL): the whole run stops with this message."""


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
    and token usage out; errors classified. `endpoint_name` and `key_hint` word the refusal."""

    endpoint_name = "judge endpoint"
    key_hint = "the API key named in the endpoint's configuration"

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "unused",
            max_retries=0,
            timeout=config.timeout_seconds,
        )

    def complete(self, content: str | list[dict[str, Any]]) -> Reply:
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
    return EndpointError(f"the {endpoint_name} refused the request: {detail}{hint}")


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


# --- judging many prompts ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one item: its scores (None once every attempt failed), the answer that
    held them, how many attempts and HTTP calls it took, tokens spent over all of them."""

    key: str
    scores: dict[str, int] | None
    answer: str
    attempts: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    error: str


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


def judge_one(
    key: str,
    prompt: str,
    *,
    client: ChatClient,
    rubric: Rubric,
    max_attempts: int,
    backoff: Backoff,
    stop: threading.Event | None = None,
) -> Outcome:
    """Ask until the answer holds a valid verdict or the attempts run out. `EndpointError`
    propagates (no retry fixes it)."""
    calls = prompt_tokens = completion_tokens = 0
    error = ""
    for attempt in range(1, max_attempts + 1):
        retry_after = None
        try:
            calls += 1
            reply = client.complete(prompt)
        except TransientError as failure:
            error, retry_after = str(failure), failure.retry_after
        else:
            prompt_tokens += reply.prompt_tokens
            completion_tokens += reply.completion_tokens
            try:
                scores = rubric.parse(reply.text)
            except VerdictError as failure:
                error = f"unreadable verdict ({failure}): {(reply.text or '')[:200]!r}"
            else:
                return Outcome(
                    key,
                    scores,
                    reply.text or "",
                    attempt,
                    calls,
                    prompt_tokens,
                    completion_tokens,
                    reply.latency_ms,
                    "",
                )
        if attempt < max_attempts:
            delay = backoff.delay(attempt, retry_after)
            if stop is not None:
                if stop.wait(delay):
                    break
            else:
                time.sleep(delay)
    return Outcome(key, None, "", calls, calls, prompt_tokens, completion_tokens, 0, error)


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
    items in flight finish first, then it is raised. The judge and the re-run share this."""
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
                if stop.is_set() and unfinished(result) and fatal is None:
                    continue  # cut short by a stop, not failed: it stays pending
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


def judge_many(
    pending: Iterable[tuple[str, str]],
    *,
    client: ChatClient,
    rubric: Rubric,
    on_outcomes: Callable[[list[Outcome]], None],
    concurrency: int,
    max_attempts: int,
    batch: int = 1,
    batch_seconds: float = 0.1,
    backoff: Backoff | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    tick: Callable[[], None] = lambda: None,
    tick_seconds: float = 1.0,
) -> bool:
    """Judge `(key, prompt)` pairs through `run_bounded` (its contract: bounded concurrency,
    batches handed to `on_outcomes` in the calling thread, at most `concurrency` calls repeated
    after a crash, `EndpointError` raised once the items in flight finish)."""
    backoff = backoff or Backoff()

    def work(key: str, prompt: str, stop: threading.Event) -> Outcome:
        return judge_one(
            key,
            prompt,
            client=client,
            rubric=rubric,
            max_attempts=max_attempts,
            backoff=backoff,
            stop=stop,
        )

    return run_bounded(
        pending,
        work,
        on_results=on_outcomes,
        unfinished=lambda outcome: outcome.scores is None,
        concurrency=concurrency,
        batch=batch,
        batch_seconds=batch_seconds,
        should_stop=should_stop,
        tick=tick,
        tick_seconds=tick_seconds,
        thread_name="judge",
    )
