"""Benchmark: what a hostile endpoint gets out of Podium's client (issue 31), against real
servers on loopback (tests/hostile_endpoint.py), no database.

    .venv/bin/python bench/hostile.py [--deadline 5] [--calls 5] [--json]

- A dripping endpoint (a byte every 0.2 s, headers and all: each byte well inside any read
  timeout): how long each call under a `--deadline` s deadline lasts. Target: the deadline.
- A giant endpoint (500,000-character answers, with and without a Content-Length) under the
  shipped benchmarks' 20,000-character limit: what the client hands on (the answer set aside as
  over-long, nothing of it kept), the most it may read (20,000 x 12 + 64 KiB bytes) and what
  the server managed to write before the client stopped reading (socket buffers included).
- A run stopped mid-call (the end of a time slice) against the dripping endpoint under a
  60 s deadline: how long after the stop the call ends. Target: within a fraction of a second.

With --json a JSON line with every figure comes last.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inference.client import (  # noqa: E402
    BYTES_PER_ANSWER_CHAR,
    ENVELOPE_BYTES,
    Backoff,
    ChatClient,
    EndpointConfig,
    Outage,
    TransientError,
    ask_until_usable,
)
from tests.hostile_endpoint import Drip, Giant, GiantUndeclared, HostileEndpoint  # noqa: E402

LIMIT_CHARS = 20_000


def client(base_url: str, timeout: float, **options) -> ChatClient:
    return ChatClient(
        EndpointConfig(
            base_url=base_url,
            model="m",
            api_key="sk-bench",
            allow_private=True,
            timeout_seconds=timeout,
            **options,
        )
    )


def drip_calls(deadline: float, calls: int) -> list[float]:
    took = []
    with HostileEndpoint(Drip(interval=0.2)) as endpoint:
        for _ in range(calls):
            started = time.monotonic()
            with contextlib.suppress(TransientError):  # the deadline's "no answer within"
                client(endpoint.base_url, deadline).complete("Which instrument?")
            took.append(time.monotonic() - started)
    return took


def giant_call(kind: type[Giant]) -> dict:
    giant = kind(chars=500_000)
    with HostileEndpoint(giant) as endpoint:
        started = time.monotonic()
        reply = client(endpoint.base_url, 30.0, max_answer_chars=LIMIT_CHARS).complete("x")
        took = time.monotonic() - started
    return {
        "kept_chars": len(reply.text or ""),
        "overlong": bool(reply.overlong),
        "server_wrote_bytes": giant.sent[0] if giant.sent else 0,
        "seconds": round(took, 3),
    }


def stopped_call() -> float:
    stop = threading.Event()
    with HostileEndpoint(Drip(interval=0.2)) as endpoint:
        chat = client(endpoint.base_url, 60.0)
        stopped_at: list[float] = []

        def set_stop() -> None:
            stopped_at.append(time.monotonic())
            stop.set()

        threading.Timer(1.0, set_stop).start()
        ask_until_usable(
            lambda: chat.complete("Which instrument?"),
            lambda reply: reply.text,
            max_attempts=1,
            backoff=Backoff(),
            outage=Outage(limit_seconds=120),
            stop=stop,
        )
        return time.monotonic() - stopped_at[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deadline", type=float, default=5.0)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    drips = drip_calls(args.deadline, args.calls)
    print(
        f"dripping endpoint, {args.deadline:g} s deadline: {len(drips)} calls, longest "
        f"{max(drips):.3f} s, shortest {min(drips):.3f} s (the drip would take ~60 s)"
    )
    bound = LIMIT_CHARS * BYTES_PER_ANSWER_CHAR + ENVELOPE_BYTES
    giants = {"declared": giant_call(Giant), "undeclared": giant_call(GiantUndeclared)}
    for name, figures in giants.items():
        print(
            f"giant endpoint ({name} length): answer kept {figures['kept_chars']:,} chars "
            f"(over-long: {figures['overlong']}), read at most {bound:,} bytes, the server "
            f"wrote {figures['server_wrote_bytes']:,} of ~500,100 bytes, {figures['seconds']} s"
        )
    after_stop = stopped_call()
    print(f"a run stopped mid-call: the call ended {after_stop:.3f} s after the stop")
    if args.json:
        print(
            json.dumps(
                {
                    "deadline_s": args.deadline,
                    "drip_longest_call_s": round(max(drips), 3),
                    "giant_read_bound_bytes": bound,
                    "giant": giants,
                    "stopped_call_ended_after_s": round(after_stop, 3),
                }
            )
        )


if __name__ == "__main__":
    main()
