"""The judge's use of the inference engine (`inference.client`): a prompt in, a verdict out.
What is the judge's own is what an answer means (a rubric's scores; an answer without a valid
verdict is an unusable attempt) and how the endpoint is named in messages. The transport,
the retries, the outage and the bounded concurrency are the engine's. No Django here: the
`score` command judges files with it, and `judging.services` drives it for stored jobs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from benchmark.scoring.rubric import Rubric, VerdictError
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

ENDPOINT_NAME = "judge endpoint"


class JudgeClient(ChatClient):
    """`ChatClient` whose refusals name the judge endpoint."""

    endpoint_name = ENDPOINT_NAME


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


def judge_one(
    key: str,
    prompt: str,
    *,
    client: ChatClient,
    rubric: Rubric,
    max_attempts: int,
    backoff: Backoff,
    outage: Outage,
    stop: threading.Event | None = None,
) -> Outcome:
    """Ask until the answer holds a valid verdict (`inference.client.ask_until_usable`)."""

    def interpret(reply: Reply) -> dict[str, int]:
        try:
            return rubric.parse(reply.text)
        except VerdictError as failure:
            raise UnusableReply(
                f"unreadable verdict ({failure}): {(reply.text or '')[:200]!r}"
            ) from None

    asked = ask_until_usable(
        lambda: client.complete(prompt),
        interpret,
        max_attempts=max_attempts,
        backoff=backoff,
        outage=outage,
        stop=stop,
    )
    reply = asked.reply
    return Outcome(
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
    outage: Outage | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    tick: Callable[[], None] = lambda: None,
    tick_seconds: float = 1.0,
) -> bool:
    """Judge `(key, prompt)` pairs through `inference.client.run_bounded` (its contract:
    bounded concurrency, batches handed to `on_outcomes` in the calling thread, at most
    `concurrency` calls repeated after a crash, `EndpointError` raised once the items in flight
    finish). One `outage` is shared by all items (a fresh one with the default limit when none
    is given)."""
    backoff = backoff or Backoff()
    outage = outage or Outage(
        limit_seconds=DEFAULT_OUTAGE_LIMIT_SECONDS, base=backoff.base, endpoint_name=ENDPOINT_NAME
    )

    def work(key: str, prompt: str, stop: threading.Event) -> Outcome:
        return judge_one(
            key,
            prompt,
            client=client,
            rubric=rubric,
            max_attempts=max_attempts,
            backoff=backoff,
            outage=outage,
            stop=stop,
        )

    return run_bounded(
        pending,
        work,
        on_results=on_outcomes,
        unfinished=lambda outcome: outcome.scores is None and outcome.attempts < max_attempts,
        concurrency=concurrency,
        batch=batch,
        batch_seconds=batch_seconds,
        should_stop=should_stop,
        tick=tick,
        tick_seconds=tick_seconds,
        thread_name="judge",
    )
