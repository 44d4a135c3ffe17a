"""Asking a model every question: the re-run of a verification and hosted evaluation both send
a benchmark's questions to a model endpoint through this, unchanged (docs/inference.md). It is
the engine's (`inference.client`) with what a model's answer means: a question is a vision
message (media as image parts, then the text), any text is an acceptable answer, and an item
whose attempts all fail is handed over with `answer=None` (its caller makes it an empty
prediction). Transient failures cost no attempt (the shared `Outage` backs off and probes);
`EndpointError` stops the run. No Django here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from benchmark import media

from .client import (
    DEFAULT_OUTAGE_LIMIT_SECONDS,
    Backoff,
    ChatClient,
    Outage,
    Reply,
    UnusableReply,
    ask_until_usable,
    run_bounded,
)
from .pacing import RateLimiter

# A question's message content (`benchmark.media`), built only when it is about to be sent (its
# media are read then).
Content = media.Content
ENDPOINT_NAME = "model endpoint"


class ModelClient(ChatClient):
    """`ChatClient` with the model's message: one user message whose content is a list of
    parts (OpenAI's vision format); refusals name the model endpoint."""

    endpoint_name = ENDPOINT_NAME
    key_hint = "the API key named in the model endpoint"

    def ask(self, content: Content) -> Reply:
        return self.complete(content)


@dataclass(frozen=True, slots=True)
class Answer:
    """What became of one question: the answer (None once every attempt failed), attempts and
    HTTP calls, tokens spent over all of them, the last error."""

    key: int
    answer: str | None
    attempts: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    error: str


def answer_one(
    key: int,
    content: Content,
    *,
    client: ModelClient,
    max_attempts: int,
    backoff: Backoff,
    outage: Outage,
    stop: threading.Event | None = None,
    limiter: RateLimiter | None = None,
) -> Answer:
    """Ask until an answer arrives (`inference.client.ask_until_usable`: transient failures cost
    no attempt, the shared `outage` holds calls back while the endpoint is down; a `limiter`
    paces every call). A reply without text counts as a failed attempt. `EndpointError`
    propagates."""

    def interpret(reply: Reply) -> str:
        if reply.text is None:
            raise UnusableReply("the reply held no message text")
        return reply.text

    asked = ask_until_usable(
        lambda: client.ask(content),
        interpret,
        max_attempts=max_attempts,
        backoff=backoff,
        outage=outage,
        stop=stop,
        limiter=limiter,
    )
    return Answer(
        key,
        asked.value,
        asked.attempts,
        asked.calls,
        asked.prompt_tokens,
        asked.completion_tokens,
        asked.error,
    )


def answer_many(
    pending: Iterable[tuple[int, Callable[[], Content]]],
    *,
    client: ModelClient,
    on_answers: Callable[[list[Answer]], None],
    concurrency: int,
    max_attempts: int,
    batch: int = 1,
    batch_seconds: float = 0.1,
    backoff: Backoff | None = None,
    outage: Outage | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    should_abort: Callable[[], bool] | None = None,
    tick: Callable[[], None] = lambda: None,
    tick_seconds: float = 1.0,
    thread_name: str = "answer",
    limiter: RateLimiter | None = None,
) -> bool:
    """Ask `(key, build_content)` questions with at most `concurrency` in flight (content is
    built, i.e. frames read, only when a question starts), through
    `inference.client.run_bounded`: answers are handed to `on_answers` in the calling thread, in
    batches of at most `batch`, so a crash repeats at most `concurrency + batch` questions; `tick` runs at least every `tick_seconds`; once `should_stop()` is
    true no new question starts (with `should_abort`, the calls already sent finish and are
    kept; only `should_abort()` cuts them: `run_bounded`). Returns True when every question
    was handed over.
    `EndpointError` stops the run: questions in flight finish first, then it is raised.
    `thread_name` names the worker threads (the re-run's are "rerun"). A `limiter` shared by
    every thread paces the calls (hosted evaluation's requests per minute, `inference.pacing`)."""
    backoff = backoff or Backoff()
    outage = outage or Outage(
        limit_seconds=DEFAULT_OUTAGE_LIMIT_SECONDS,
        base=backoff.base,
        endpoint_name=ENDPOINT_NAME,
    )

    def work(key: int, build: Callable[[], Content], stop: threading.Event) -> Answer:
        return answer_one(
            key,
            build(),
            client=client,
            max_attempts=max_attempts,
            backoff=backoff,
            outage=outage,
            stop=stop,
            limiter=limiter,
        )

    return run_bounded(
        pending,
        work,
        on_results=on_answers,
        unfinished=lambda answer: answer.answer is None and answer.attempts < max_attempts,
        concurrency=concurrency,
        batch=batch,
        batch_seconds=batch_seconds,
        should_stop=should_stop,
        should_abort=should_abort,
        tick=tick,
        tick_seconds=tick_seconds,
        thread_name=thread_name,
    )
