"""Benchmark: a newcomer's hosted request in `make run`, from submit to its place on the board.

    make run        # in one terminal, in this checkout
    .venv/bin/python bench/demo_hosted.py [--site http://127.0.0.1:8000]
                                          [--model standin-clinicalqa-good] [--timeout 600]

Against the instance `make run` serves from this checkout (its database, the development
settings): makes a new account with an API token (as the account page would), then, over the
REST API only, submits a hosted evaluation of the demo's stand-in model (docs/hosted.md, "The
demo"), follows the request until it ends, and reads the Community board until the entry is on
it. The demo's own four requests are queued when `make run` starts; the figures say how long
the newcomer's request waited behind them (queued), ran (asking the questions) and took from
its end to a board row (scoring and the board's recompute). Prints one line per figure, then
one JSON line with all of them; exits non-zero if the request failed or never reached the
board.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCHMARK = "clinicalqa"


def newcomer_token() -> str:
    """A fresh account and its API token, in the database `make run` uses."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from accounts.services import create_api_token

    user = get_user_model().objects.create_user(f"newcomer-{secrets.token_hex(3)}")
    return create_api_token(user, name="bench/demo_hosted.py")[1]


def call(site: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        site.rstrip("/") + "/api/v1" + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default="http://127.0.0.1:8000")
    parser.add_argument("--standin-model-url", default="http://127.0.0.1:8766/v1")
    parser.add_argument("--model", default="standin-clinicalqa-good")
    parser.add_argument("--timeout", type=float, default=600)
    options = parser.parse_args()

    token = newcomer_token()
    name = f"Newcomer-{secrets.token_hex(3)}"
    submitted = time.perf_counter()
    status, body = call(
        options.site,
        f"/benchmarks/{BENCHMARK}/hosted/",
        token,
        {
            "model_name": name,
            "institution": "Newcomer lab",
            "contact_email": "newcomer@example.org",
            "model_url": "https://example.org/newcomer",
            "base_url": options.standin_model_url,
            "model": options.model,
            # The model facts the benchmark asks for (demo-good's, which the stand-in plays).
            "type": "fine-tuned",
            "parameters": "13",
            "licence": "mit",
            "precision": "float16",
            "domain_specific": "yes",
        },
    )
    if status != 201:
        print(f"the request was refused: HTTP {status} {body}", file=sys.stderr)
        return 1
    request_id = body["id"]
    started = ended = None
    deadline = submitted + options.timeout
    while time.perf_counter() < deadline:
        body = call(options.site, f"/benchmarks/{BENCHMARK}/hosted/{request_id}/", token)[1]
        if body["status"] != "queued" and started is None:
            started = time.perf_counter()
        if body["status"] in ("done", "failed", "cancelled"):
            ended = time.perf_counter()
            break
        time.sleep(0.2)
    if ended is None or body["status"] != "done":
        print(f"the request did not finish: {body.get('status')} {body.get('message')}")
        return 1
    on_board = None
    while time.perf_counter() < deadline:
        rows = call(
            options.site, f"/benchmarks/{BENCHMARK}/rankings/?board=community&q={name}", token
        )[1]["results"]
        if rows:
            on_board = time.perf_counter()
            break
        time.sleep(0.2)
    if on_board is None:
        print("the entry never reached the Community board", file=sys.stderr)
        return 1

    figures = {
        "queued_s": round(started - submitted, 2),
        "asking_s": round(ended - started, 2),
        "to_board_s": round(on_board - ended, 2),
        "submit_to_board_s": round(on_board - submitted, 2),
        "questions": body["items_total"],
        "rank": rows[0].get("rank"),
    }
    print(f"queued behind the demo's requests: {figures['queued_s']} s")
    print(f"asking {figures['questions']} questions: {figures['asking_s']} s")
    print(f"from the request's end to its board row: {figures['to_board_s']} s")
    print(f"submit to board: {figures['submit_to_board_s']} s (rank {figures['rank']})")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
