"""A stand-in LLM judge: a tiny OpenAI-compatible HTTP server with deterministic verdicts.

Tests and the demo talk to it exactly as they would to a real judge model (the real `openai`
client, over HTTP), so the client code under test is the production code. It is NOT a model: each
verdict is a hash of the prompt, which makes a run reproducible, and fault switches (`Faults`)
inject the failures a real provider produces (429 bursts with Retry-After, 500s, prose instead of
scores, dropped connections, hangs, out-of-range scores).

Stdlib only and no Django imports, so it can run anywhere: in a test thread, or in the foreground
through `manage.py standin_judge`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

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


class StandinJudge:
    """The server: `with StandinJudge(faults=Faults(...)) as judge: OpenAI(base_url=judge.base_url)`.

    Counters (`calls`, `prompt_calls`, `successes`) are kept under one lock; `reset_counters()`
    zeroes them, which also restarts `burst_429` and the per-prompt `fail_first` counts.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, faults: Faults | None = None):
        self.host = host
        self.faults = faults if faults is not None else Faults()
        self._requested_port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._calls = 0
        self._valid_calls = 0
        self._prompt_calls: Counter[str] = Counter()
        self._successes = 0

    # Lifecycle

    def start(self) -> StandinJudge:
        """Bind the socket and serve in a daemon thread; returns self."""
        if self._server is not None:
            raise RuntimeError("the stand-in judge is already running")
        self._server = _Server((self.host, self._requested_port), _Handler)
        self._server.judge = self
        # A short poll interval keeps stop() fast (shutdown() waits for the next poll).
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="standin-judge",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: close the listening socket and cut open connections (requests still
        sleeping are abandoned). `start()` may serve again on the same port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._server.close_connections()
        if self._thread is not None:
            self._thread.join()
        self._server = None
        self._thread = None

    def __enter__(self) -> StandinJudge:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            return self._requested_port
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        # A wildcard bind address is not something a client can connect to.
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{host}:{self.port}/v1"

    # Counters

    @property
    def calls(self) -> int:
        """Every POST to /v1/chat/completions, whatever its outcome (400s included)."""
        with self._lock:
            return self._calls

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
        with self._lock:
            self._calls = 0
            self._valid_calls = 0
            self._prompt_calls.clear()
            self._successes = 0

    def configure(self, faults: Faults) -> None:
        """Swap in new fault switches and reset the counters, so bursts start afresh."""
        with self._lock:
            self.faults = faults
        self.reset_counters()

    # Used by the request handler

    def _count_call(self) -> int:
        with self._lock:
            self._calls += 1
            return self._calls

    def _count_prompt(self, prompt: str) -> tuple[int, int]:
        with self._lock:
            self._valid_calls += 1
            self._prompt_calls[prompt] += 1
            return self._valid_calls, self._prompt_calls[prompt]

    def _count_success(self, delta: int = 1) -> None:
        with self._lock:
            self._successes += delta


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Clients run 50+ concurrent connections; the default backlog of 5 would refuse some.
    request_queue_size = 128
    judge: StandinJudge

    def server_activate(self) -> None:
        super().server_activate()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Cut every kept-alive connection, so a stopped judge is down for its clients too
        (their pooled connections would otherwise still be served)."""
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _BadRequest(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keeps connections alive, which the openai client's pool expects.
    protocol_version = "HTTP/1.1"
    server: _Server
    server_version = "StandinJudge/1.0"
    # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms per response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # Routing

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [{"id": MODEL_ID, "object": "model", "owned_by": "podium"}],
                },
            )
        else:
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")

    def do_POST(self) -> None:
        body = self._read_body()
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")
            return
        judge = self.server.judge
        call_number = judge._count_call()
        try:
            model, prompt = _parse_chat_request(body)
        except _BadRequest as error:
            self._send_error(400, str(error), "invalid_request_error")
            return
        request_number, prompt_request_number = judge._count_prompt(prompt)
        faults = judge.faults  # one snapshot per request: tests may swap it meanwhile
        outcome = faults.outcome(
            prompt, request_number=request_number, prompt_request_number=prompt_request_number
        )
        if faults.latency > 0:
            time.sleep(faults.latency)
        if outcome == "429":
            self._send_error(
                429,
                "Rate limit reached (stand-in judge).",
                "rate_limit_exceeded",
                code="rate_limit_exceeded",
                headers=_retry_after_headers(faults.retry_after),
            )
        elif outcome == "500":
            self._send_error(500, "The stand-in judge failed on purpose.", "server_error")
        elif outcome == "drop":
            self._drop()
        elif outcome == "malformed":
            self._send_completion(call_number, model, prompt, MALFORMED_REPLY)
        elif outcome == "out_of_range":
            scores = {**deterministic_verdict(prompt), "R3": OUT_OF_RANGE_SCORE}
            self._send_completion(call_number, model, prompt, verdict_text(scores))
        else:
            if outcome == "hang":
                time.sleep(faults.hang_seconds)
            # A pairwise battle prompt gets the pairwise mode's reply (standin_pairwise.py).
            text = pairwise_reply(prompt) or verdict_text(deterministic_verdict(prompt))
            # Counted before the reply goes out, so a client that has its answer sees the
            # count; taken back if the client left before it could be delivered.
            judge._count_success()
            if not self._send_completion(call_number, model, prompt, text):
                judge._count_success(-1)

    # Responses

    def _read_body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        return self.rfile.read(length) if length > 0 else b""

    def _send_completion(self, call_number: int, model: str, prompt: str, text: str) -> bool:
        prompt_tokens = max(1, len(prompt) // 4)
        completion_tokens = max(1, len(text) // 4)
        return self._send_json(
            200,
            {
                "id": f"chatcmpl-{call_number}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _send_error(
        self,
        status: int,
        message: str,
        error_type: str,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> bool:
        payload = {"error": {"message": message, "type": error_type, "code": code}}
        return self._send_json(status, payload, headers=headers)

    def _send_json(
        self, status: int, payload: dict[str, Any], *, headers: dict[str, str] | None = None
    ) -> bool:
        """Write a JSON response; False when the client has already gone (e.g. it timed out)."""
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True
            return False
        return True

    def _drop(self) -> None:
        """Close the connection without a byte of response, as a crashing proxy would."""
        self.close_connection = True
        with contextlib.suppress(OSError):  # the client may have gone already
            self.connection.shutdown(socket.SHUT_RDWR)


def _retry_after_headers(retry_after: float | None) -> dict[str, str]:
    if retry_after is None:
        return {}
    # OpenAI sends both; clients prefer the millisecond one when present.
    return {
        "Retry-After": f"{retry_after:g}",
        "retry-after-ms": str(round(retry_after * 1000)),
    }


def _parse_chat_request(body: bytes) -> tuple[str, str]:
    """The request's model and prompt (the content of its last user message)."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise _BadRequest("The request body is not valid JSON.") from None
    if not isinstance(request, dict):
        raise _BadRequest("The request body must be a JSON object.")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise _BadRequest("Missing required parameter: 'model'.")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _BadRequest("Missing required parameter: 'messages'.")
    user_messages = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    if not user_messages:
        raise _BadRequest("'messages' must contain a message with role 'user'.")
    prompt = user_messages[-1].get("content")
    if not isinstance(prompt, str):
        raise _BadRequest("The last user message's 'content' must be a string.")
    return model, prompt
