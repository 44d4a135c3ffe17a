"""The arena's use of the inference engine (`inference.client`): a battle prompt in, a verdict
reading out. What is the arena's own is what an answer means: the benchmark plugin's
`read_verdict` ("first", "second" or "tie"; a reply naming none is an unusable attempt). The
transport, the retries, the outage and the bounded concurrency are the engine's, and the
client is the judge's (`judging.client.JudgeClient`, whose refusals name the judge endpoint).
No Django here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from inference.client import (
    DEFAULT_OUTAGE_LIMIT_SECONDS,
    Backoff,
    ChatClient,
    Outage,
    Reply,
    UnusableReply,
    ask_until_usable,
    run_bounded,
)
from judging.client import ENDPOINT_NAME

ReadVerdict = Callable[[str], "str | None"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What became of one judge call: the verdict's reading (None once every attempt was
    unusable), the reply that held it, attempts and HTTP calls, tokens over all of them, the
    reply's latency and the last error."""

    key: int
    reading: str | None
    answer: str
    attempts: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    error: str


def read_one(
    key: int,
    prompt: str,
    *,
    client: ChatClient,
    read_verdict: ReadVerdict,
    max_attempts: int,
    backoff: Backoff,
    outage: Outage,
    stop: threading.Event | None = None,
) -> Reading:
    """Ask until the reply holds a verdict `read_verdict` can read
    (`inference.client.ask_until_usable`)."""

    def interpret(reply: Reply) -> str:
        reading = read_verdict(reply.text or "")
        if reading is None:
            raise UnusableReply(f"no verdict in the reply: {(reply.text or '')[:200]!r}")
        return reading

    asked = ask_until_usable(
        lambda: client.complete(prompt),
        interpret,
        max_attempts=max_attempts,
        backoff=backoff,
        outage=outage,
        stop=stop,
    )
    reply = asked.reply
    return Reading(
        key,
        asked.value,
        (reply.text or "") if reply is not None else "",
        asked.attempts,
        asked.calls,
        asked.prompt_tokens,
        asked.completion_tokens,
        reply.latency_ms if reply is not None else 0,
        asked.error,
    )


def read_many(
    pending: Iterable[tuple[int, str]],
    *,
    client: ChatClient,
    read_verdict: ReadVerdict,
    on_readings: Callable[[list[Reading]], None],
    concurrency: int,
    max_attempts: int,
    batch: int = 1,
    backoff: Backoff | None = None,
    outage: Outage | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    tick: Callable[[], None] = lambda: None,
    tick_seconds: float = 1.0,
) -> bool:
    """Judge `(key, prompt)` pairs through `inference.client.run_bounded` (its contract: bounded
    concurrency, batches handed to `on_readings` in the calling thread, at most `concurrency`
    plus a batch of calls repeated after a crash, `EndpointError` raised once the calls in flight finish).
    One `outage` is shared by all calls."""
    backoff = backoff or Backoff()
    outage = outage or Outage(
        limit_seconds=DEFAULT_OUTAGE_LIMIT_SECONDS, base=backoff.base, endpoint_name=ENDPOINT_NAME
    )

    def work(key: int, prompt: str, stop: threading.Event) -> Reading:
        return read_one(
            key,
            prompt,
            client=client,
            read_verdict=read_verdict,
            max_attempts=max_attempts,
            backoff=backoff,
            outage=outage,
            stop=stop,
        )

    return run_bounded(
        pending,
        work,
        on_results=on_readings,
        unfinished=lambda reading: reading.reading is None and reading.attempts < max_attempts,
        concurrency=concurrency,
        batch=batch,
        should_stop=should_stop,
        tick=tick,
        tick_seconds=tick_seconds,
        thread_name="battle",
    )
