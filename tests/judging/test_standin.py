"""The stand-in judge, driven by the real openai client over HTTP on 127.0.0.1."""

import http.client
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from openai import OpenAI

from judging.standin import (
    ASPECTS,
    Faults,
    StandinJudge,
    deterministic_verdict,
    verdict_text,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def judge() -> Iterator[StandinJudge]:
    with StandinJudge() as running:
        yield running


def client_for(judge: StandinJudge, *, timeout: float = 20.0) -> OpenAI:
    return OpenAI(base_url=judge.base_url, api_key="unused", max_retries=0, timeout=timeout)


def ask(client: OpenAI, prompt: str) -> str:
    completion = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": prompt}], temperature=0
    )
    return completion.choices[0].message.content


def parse_scores(text: str) -> dict[str, int]:
    return {aspect: int(score) for aspect, score in re.findall(r"^(R\d): (\d+)$", text, re.M)}


def test_deterministic_verdict_scores_every_aspect_in_range():
    scores = deterministic_verdict("a prompt")

    assert list(scores) == list(ASPECTS)
    assert all(1 <= score <= 5 for score in scores.values())
    assert scores == deterministic_verdict("a prompt")
    assert verdict_text({"R2": 4, "R3": 3, "R8": 5, "R5": 4, "R4": 5}) == (
        "R2: 4\nR3: 3\nR8: 5\nR5: 4\nR4: 5"
    )


def test_good_verdict_is_the_deterministic_one_with_usage(judge):
    prompt = "Judge this caption: a chest X-ray with a small effusion."
    completion = client_for(judge).chat.completions.create(
        model="judge-model",
        messages=[
            {"role": "system", "content": "You are a judge."},
            {"role": "user", "content": "an earlier turn"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": prompt},
        ],
        temperature=0,
    )

    content = completion.choices[0].message.content
    assert parse_scores(content) == deterministic_verdict(prompt)
    assert content == verdict_text(deterministic_verdict(prompt))
    assert completion.model == "judge-model"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.id == "chatcmpl-1"
    prompt_tokens, completion_tokens = len(prompt) // 4, len(content) // 4
    assert (
        completion.usage.prompt_tokens,
        completion.usage.completion_tokens,
        completion.usage.total_tokens,
    ) == (prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)
    assert (judge.calls, judge.successes) == (1, 1)


def test_verdicts_and_fault_draws_agree_across_two_servers():
    prompts = [f"prompt {i}" for i in range(20)]

    def run() -> list[str]:
        with StandinJudge(faults=Faults(rate_500=0.5, seed=7)) as judge:
            client = client_for(judge)
            outcomes = []
            for prompt in prompts:
                try:
                    outcomes.append(ask(client, prompt))
                except openai.InternalServerError:
                    outcomes.append("500")
            return outcomes

    first, second = run(), run()

    assert first == second
    assert 0 < first.count("500") < len(prompts)
    assert [o for o in first if o != "500"] == [
        verdict_text(deterministic_verdict(p))
        for p, o in zip(prompts, first, strict=True)
        if o != "500"
    ]


def test_burst_429_carries_retry_after_then_succeeds(judge):
    judge.configure(Faults(burst_429=2, retry_after=0.2))
    client = client_for(judge)

    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as caught:
            ask(client, "p")
        headers = caught.value.response.headers
        assert (headers["retry-after"], headers["retry-after-ms"]) == ("0.2", "200")
        assert caught.value.body["code"] == "rate_limit_exceeded"

    assert ask(client, "p") == verdict_text(deterministic_verdict("p"))
    assert (judge.calls, judge.successes) == (3, 1)


def test_429_without_retry_after_sends_no_header(judge):
    judge.faults = Faults(burst_429=1)

    with pytest.raises(openai.RateLimitError) as caught:
        ask(client_for(judge), "p")

    assert "retry-after" not in caught.value.response.headers


def test_fail_first_500_fails_each_prompt_once(judge):
    judge.faults = Faults(fail_first=1, fail_kind="500")
    client = client_for(judge)

    for prompt in ("a", "b"):
        with pytest.raises(openai.InternalServerError) as caught:
            ask(client, prompt)
        assert caught.value.status_code == 500
        assert ask(client, prompt) == verdict_text(deterministic_verdict(prompt))

    assert judge.prompt_calls == Counter({"a": 2, "b": 2})
    assert judge.successes == 2


def test_fail_first_malformed_answers_prose(judge):
    judge.faults = Faults(fail_first=1, fail_kind="malformed")
    client = client_for(judge)

    reply = ask(client, "p")

    assert "R2:" not in reply
    assert reply == "The prediction looks reasonable overall."
    assert ask(client, "p") == verdict_text(deterministic_verdict("p"))
    assert judge.successes == 1


def test_fail_first_out_of_range_scores_r3_seven(judge):
    judge.faults = Faults(fail_first=1, fail_kind="out_of_range")

    reply = ask(client_for(judge), "p")

    assert "R3: 7" in reply
    assert parse_scores(reply) == {**deterministic_verdict("p"), "R3": 7}
    assert judge.successes == 0


def test_fail_first_drop_closes_the_connection(judge):
    judge.faults = Faults(fail_first=1, fail_kind="drop")
    client = client_for(judge)

    with pytest.raises(openai.APIConnectionError) as caught:
        ask(client, "p")

    assert not isinstance(caught.value, openai.APITimeoutError)
    assert ask(client, "p") == verdict_text(deterministic_verdict("p"))


def test_fail_first_hang_times_the_client_out(judge):
    # A hang far longer than the client's timeout: the client gave up rather than waited for
    # the answer. (A 1 s hang and "under 0.9 s" before, which a loaded machine missed.)
    judge.faults = Faults(fail_first=1, fail_kind="hang", hang_seconds=60.0)

    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        ask(client_for(judge, timeout=0.3), "p")

    assert time.monotonic() - started < 60.0
    assert ask(client_for(judge), "p") == verdict_text(deterministic_verdict("p"))


def test_rate_draws_follow_precedence_order():
    faults = Faults(rate_429=0.25, rate_500=0.25, rate_malformed=0.25, rate_drop=0.25, seed=3)

    outcomes = Counter(
        faults.outcome(f"p{i}", request_number=i + 1, prompt_request_number=1) for i in range(200)
    )

    assert set(outcomes) == {"429", "500", "malformed", "drop"}
    assert Faults(burst_429=1, fail_first=1).outcome(
        "p", request_number=1, prompt_request_number=1
    ) == ("429")
    assert Faults(fail_first=1, rate_429=1.0).outcome(
        "p", request_number=1, prompt_request_number=1
    ) == ("500")


def test_unknown_fail_kind_is_refused():
    with pytest.raises(ValueError, match="fail_kind"):
        Faults(fail_kind="teapot")


def test_counters_under_twenty_concurrent_threads(judge):
    client = client_for(judge)
    prompts = [f"prompt {i % 10}" for i in range(60)]

    with ThreadPoolExecutor(max_workers=20) as pool:
        replies = list(pool.map(lambda prompt: ask(client, prompt), prompts))

    assert replies == [verdict_text(deterministic_verdict(p)) for p in prompts]
    assert (judge.calls, judge.successes) == (60, 60)
    assert judge.prompt_calls == Counter({f"prompt {i}": 6 for i in range(10)})

    judge.reset_counters()
    assert (judge.calls, judge.successes, judge.prompt_calls) == (0, 0, Counter())


def test_latency_is_honoured(judge):
    judge.faults = Faults(latency=0.2)

    started = time.monotonic()
    reply = ask(client_for(judge), "p")

    # Not before the latency; how much later is the machine's load, not the stand-in's.
    assert time.monotonic() - started >= 0.2
    assert reply == verdict_text(deterministic_verdict("p"))
    assert judge.calls == 1


def raw_request(
    judge: StandinJudge, method: str, path: str, body: bytes | None = None
) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", judge.port, timeout=2)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_bad_json_is_a_400_in_openai_shape(judge):
    status, payload = raw_request(judge, "POST", "/v1/chat/completions", b"{not json")

    assert status == 400
    assert payload["error"]["type"] == "invalid_request_error"
    assert payload["error"]["code"] is None
    assert judge.calls == 1
    assert judge.prompt_calls == Counter()


def test_missing_messages_is_a_400(judge):
    status, payload = raw_request(
        judge, "POST", "/v1/chat/completions", json.dumps({"model": "m"}).encode()
    )

    assert (status, payload["error"]["type"]) == (400, "invalid_request_error")
    assert "messages" in payload["error"]["message"]


def test_unknown_path_is_a_404(judge):
    status, payload = raw_request(judge, "POST", "/v1/embeddings", b"{}")

    assert (status, payload["error"]["type"]) == (404, "invalid_request_error")
    assert judge.calls == 0


def test_models_lists_the_standin(judge):
    models = client_for(judge).models.list()

    assert [(m.id, m.owned_by) for m in models.data] == [("standin-judge", "podium")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_management_command_serves_until_sigterm(repo_root: Path):
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "standin_judge", "--port", str(port)],
        cwd=repo_root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(timeout=10), "the command printed nothing"
        line = process.stdout.readline().strip()
        assert line == (
            "Stand-in judge (deterministic verdicts, NOT a real LLM) listening on "
            f"http://127.0.0.1:{port}/v1"
        )
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        assert ask(client, "p") == verdict_text(deterministic_verdict("p"))
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)

    assert (process.returncode, stderr) == (0, "")
