"""A stand-in LLM judge: a tiny OpenAI-compatible HTTP server with deterministic verdicts.

Tests and the demo talk to it exactly as they would to a real judge model (the real `openai`
client, over HTTP), so the client code under test is the production code. It is NOT a model: each
verdict is a hash of the prompt, which makes a run reproducible, and fault switches (`Faults`)
inject the failures a real provider produces (429 bursts with Retry-After, 500s, prose instead of
scores, dropped connections, hangs, out-of-range scores).

The chat completions server is the engine's (`inference.standin.ChatStandin`); what is the
judge's is the verdict and which fault a request gets. Stdlib only and no Django imports, so it
can run anywhere: in a test thread, or in the foreground through `manage.py standin_judge`.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass

from inference.standin import (
    DROP,
    ChatRequest,
    ChatStandin,
    Completion,
    Response,
    rate_limited,
    server_error,
)

from .standin_pairwise import pairwise_reply

ASPECTS = ("R2", "R3", "R8", "R5", "R4")
MODEL_ID = "standin-judge"
FAULT_KINDS = ("429", "500", "malformed", "drop", "hang", "out_of_range")
MALFORMED_REPLY = "The prediction looks reasonable overall."
OUT_OF_RANGE_SCORE = 7


def deterministic_verdict(prompt: str) -> dict[str, int]:
    """Each aspect's score in 1..5, a pure function of the aspect and the prompt text."""
    return {
        aspect: 1
        + int.from_bytes(hashlib.sha256(f"{aspect}\n{prompt}".encode()).digest()[:8], "big") % 5
        for aspect in ASPECTS
    }


def verdict_text(scores: dict[str, int]) -> str:
    """The reply a well-behaved judge gives: one `ASPECT: score` line per aspect, in ASPECTS order."""
    return "\n".join(f"{aspect}: {scores[aspect]}" for aspect in ASPECTS)


@dataclass
class Faults:
    """Failure switches, read once per request, so tests may replace or edit them between runs.

    Precedence per request: `burst_429`, then `fail_first`, then the `rate_*` draws (429, 500,
    malformed, drop in that order), else a good verdict. The draws hash (seed, prompt, that
    prompt's request number), so a run is reproducible whatever the thread scheduling.
    """

    latency: float = 0.0
    burst_429: int = 0
    retry_after: float | None = None
    fail_first: int = 0
    fail_kind: str = "500"
    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_malformed: float = 0.0
    rate_drop: float = 0.0
    seed: int = 0
    hang_seconds: float = 5.0

    def __post_init__(self) -> None:
        if self.fail_kind not in FAULT_KINDS:
            raise ValueError(f"fail_kind must be one of {FAULT_KINDS}, not {self.fail_kind!r}")

    def outcome(self, prompt: str, *, request_number: int, prompt_request_number: int) -> str:
        """What to do with a request: "ok" or one of FAULT_KINDS.

        `request_number` counts valid requests since the last reset (1-based), and
        `prompt_request_number` counts this prompt's requests since the last reset (1-based).
        """
        if request_number <= self.burst_429:
            return "429"
        if prompt_request_number <= self.fail_first:
            return self.fail_kind
        digest = hashlib.sha256(f"{self.seed}\n{prompt_request_number}\n{prompt}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        threshold = 0.0
        for kind, rate in (
            ("429", self.rate_429),
            ("500", self.rate_500),
            ("malformed", self.rate_malformed),
            ("drop", self.rate_drop),
        ):
            threshold += rate
            if draw < threshold:
                return kind
        return "ok"


class StandinJudge(ChatStandin):
    """The server: `with StandinJudge(faults=Faults(...)) as judge: OpenAI(base_url=judge.base_url)`.

    Counters (`calls`, `prompt_calls`, `successes`) are kept under one lock; `reset_counters()`
    zeroes them, which also restarts `burst_429` and the per-prompt `fail_first` counts. A
    prompt is a string: content parts get a 400.
    """

    thread_name = "standin-judge"
    server_version = "StandinJudge/1.0"
    accepts_parts = False

    def __init__(self, host: str = "127.0.0.1", port: int = 0, faults: Faults | None = None):
        super().__init__(host=host, port=port)
        self.faults = faults if faults is not None else Faults()
        self._valid_calls = 0
        self._prompt_calls: Counter[str] = Counter()
        self._successes = 0

    # Counters

    @property
    def calls(self) -> int:
        """Every POST to /v1/chat/completions, whatever its outcome (400s included)."""
        return self.chat_calls

    @property
    def prompt_calls(self) -> Counter[str]:
        """A copy: prompt text -> number of requests received for it."""
        with self._lock:
            return Counter(self._prompt_calls)

    @property
    def successes(self) -> int:
        """Requests answered with a well-formed, in-range verdict."""
        with self._lock:
            return self._successes

    def reset_counters(self) -> None:
        self.reset_chat_calls()
        with self._lock:
            self._valid_calls = 0
            self._prompt_calls.clear()
            self._successes = 0

    def configure(self, faults: Faults) -> None:
        """Swap in new fault switches and reset the counters, so bursts start afresh."""
        with self._lock:
            self.faults = faults
        self.reset_counters()

    # Answering

    def model_ids(self) -> list[str]:
        return [MODEL_ID]

    def respond(self, request: ChatRequest, number: int) -> Response:
        prompt = request.text
        with self._lock:
            self._valid_calls += 1
            self._prompt_calls[prompt] += 1
            request_number, prompt_request_number = self._valid_calls, self._prompt_calls[prompt]
        faults = self.faults  # one snapshot per request: tests may swap it meanwhile
        outcome = faults.outcome(
            prompt, request_number=request_number, prompt_request_number=prompt_request_number
        )
        if faults.latency > 0:
            time.sleep(faults.latency)
        if outcome == "429":
            return rate_limited("Rate limit reached (stand-in judge).", faults.retry_after)
        if outcome == "500":
            return server_error("The stand-in judge failed on purpose.")
        if outcome == "drop":
            return DROP
        if outcome == "malformed":
            return Completion(MALFORMED_REPLY)
        if outcome == "out_of_range":
            return Completion(
                verdict_text({**deterministic_verdict(prompt), "R3": OUT_OF_RANGE_SCORE})
            )
        if outcome == "hang":
            time.sleep(faults.hang_seconds)
        # Counted before the reply goes out, so a client that has its answer sees the count;
        # taken back (`undelivered`) if the client left before it could be delivered.
        with self._lock:
            self._successes += 1
        # A pairwise battle prompt gets the pairwise mode's reply (standin_pairwise.py).
        text = pairwise_reply(prompt) or verdict_text(deterministic_verdict(prompt))
        return Completion(text, tag="verdict")

    def undelivered(self, request: ChatRequest, response: Completion) -> None:
        if response.tag == "verdict":
            with self._lock:
                self._successes -= 1
