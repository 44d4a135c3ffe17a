"""Asking a model many questions with bounded concurrency, retries and backoff, as the judge
does (`judging.client`): the same `ChatClient` transport with the openai library's own retries
off, the same `Backoff`, the same split of failures into `TransientError` (retried) and
`EndpointError` (stops the run). No Django here.

What differs from the judge: a question is a vision message (frames as image parts, then the
text), and any text is an acceptable answer; an item whose attempts all fail is handed over
with `answer=None` and becomes an empty prediction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from judging.client import (
    Backoff,
    ChatClient,
    Reply,
    TransientError,
    run_bounded,
)

# A question's message content, built only when it is about to be sent (frames are read then).
Content = list[dict[str, Any]]


class ModelClient(ChatClient):
    """`ChatClient` with the model's message: one user message whose content is a list of
    parts (OpenAI's vision format); refusals name the model endpoint."""

    endpoint_name = "model endpoint"
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
    stop: threading.Event | None = None,
) -> Answer:
    """Ask until an answer arrives or the attempts run out. A reply without text counts as a
    failed attempt. `EndpointError` propagates."""
    calls = prompt_tokens = completion_tokens = 0
    error = ""
    for attempt in range(1, max_attempts + 1):
        retry_after = None
        try:
            calls += 1
            reply = client.ask(content)
        except TransientError as failure:
            error, retry_after = str(failure), failure.retry_after
        else:
            prompt_tokens += reply.prompt_tokens
            completion_tokens += reply.completion_tokens
            if reply.text is not None:
                return Answer(key, reply.text, attempt, calls, prompt_tokens, completion_tokens, "")
            error = "the reply held no message text"
        if attempt < max_attempts:
            delay = backoff.delay(attempt, retry_after)
            if stop is not None:
                if stop.wait(delay):
                    break
            else:
                time.sleep(delay)
    return Answer(key, None, calls, calls, prompt_tokens, completion_tokens, error)


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
    should_stop: Callable[[], bool] = lambda: False,
    tick: Callable[[], None] = lambda: None,
    tick_seconds: float = 1.0,
) -> bool:
    """Ask `(key, build_content)` questions with at most `concurrency` in flight (content is
    built, i.e. frames read, only when a question starts). Same contract as
    `judging.client.judge_many`: answers are handed to `on_answers` in the calling thread, in
    batches; answers waiting in a batch count against `concurrency`, so a crash repeats at most
    that many questions; `tick` runs at least every `tick_seconds`; once `should_stop()` is
    true no new question starts. Returns True when every question was handed over.
    `EndpointError` stops the run: questions in flight finish first, then it is raised."""
    backoff = backoff or Backoff()

    def work(key: int, build: Callable[[], Content], stop: threading.Event) -> Answer:
        return answer_one(
            key, build(), client=client, max_attempts=max_attempts, backoff=backoff, stop=stop
        )

    return run_bounded(
        pending,
        work,
        on_results=on_answers,
        unfinished=lambda answer: answer.answer is None,
        concurrency=concurrency,
        batch=batch,
        batch_seconds=batch_seconds,
        should_stop=should_stop,
        tick=tick,
        tick_seconds=tick_seconds,
        thread_name="rerun",
    )
