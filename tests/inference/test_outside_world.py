"""The one client every endpoint call goes through, against hostile endpoints on loopback
(issue 31): no redirect followed, the address rule applied to the address actually connected
to (a DNS answer that changes after the form's check included), the call's key masked in
everything it hands on, a reply read only up to its bound, a wall-clock deadline however the
bytes are spaced, a stopped run's call ended at once, and tokens charged whatever the endpoint
reports."""

import socket
import threading
import time

import pytest

from inference import guard
from inference.client import (
    Backoff,
    ChatClient,
    EndpointConfig,
    EndpointError,
    Outage,
    TransientError,
    ask_until_usable,
)
from inference.masking import MIN_MATCH, mask_secrets
from tests.hostile_endpoint import (
    SEND_BUFFER,
    Behaviour,
    Drip,
    EchoKey,
    Giant,
    GiantUndeclared,
    HostileEndpoint,
    LyingUsage,
    Redirect,
    receive_buffer_limit,
)

pytestmark = pytest.mark.integration

KEY = "sk-proj-Zq8vR2mXw4tY6uIo0pLk3jHg5fDs7aQe9bNc1"


def client(base_url: str, **options) -> ChatClient:
    options.setdefault("allow_private", True)  # the hostile endpoints are on loopback
    options.setdefault("timeout_seconds", 5.0)
    return ChatClient(EndpointConfig(base_url=base_url, model="m", api_key=KEY, **options))


def assert_no_part_of_the_key(text: str) -> None:
    for start in range(len(KEY) - MIN_MATCH + 1):
        assert KEY[start : start + MIN_MATCH] not in text


# --- redirects and addresses ------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_says_where_it_pointed(status):
    with (
        HostileEndpoint(Behaviour()) as internal,
        HostileEndpoint(Redirect(internal.base_url, status)) as endpoint,
        pytest.raises(EndpointError) as refused,
    ):
        client(endpoint.base_url).complete("Which instrument?")

    assert refused.value.status == status
    assert str(refused.value) == (
        f"the endpoint answered with a redirect (HTTP {status}) to "
        f"{internal.base_url}/chat/completions; Podium follows no redirect: give its final URL"
    )
    assert len(endpoint.requests) == 1
    assert internal.requests == []


def test_a_private_address_is_refused_where_the_connection_is_made():
    with HostileEndpoint(Behaviour()) as endpoint, pytest.raises(EndpointError) as refused:
        client(endpoint.base_url, allow_private=False).complete("Which instrument?")

    assert "is at 127.0.0.1, an address of a private network" in str(refused.value)
    assert endpoint.requests == []


def test_a_dns_answer_that_changes_after_the_check_is_caught_at_connect_time(monkeypatch):
    """Rebinding: the name resolves to a public address when a form checks it, then to the
    server's own loopback when the worker connects."""
    from hosting.config import endpoint_address_problem

    answers = iter(["93.184.215.14", "127.0.0.1", "127.0.0.1"])
    real = socket.getaddrinfo

    def rebinding(host, port):
        if host != "model.rebind.example":
            return real(host, port, type=socket.SOCK_STREAM)
        address = next(answers)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(guard, "resolve", rebinding)
    with HostileEndpoint(Behaviour()) as endpoint:
        port = endpoint.base_url.rsplit(":", 1)[1].split("/")[0]
        base_url = f"http://model.rebind.example:{port}/v1"
        with monkeypatch.context() as patched:
            patched.setattr("django.conf.settings.PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS", False)
            assert endpoint_address_problem(base_url) == ""  # the form's check passes
        with pytest.raises(EndpointError) as refused:
            client(base_url, allow_private=False).complete("Which instrument?")

    assert "'model.rebind.example' is at 127.0.0.1" in str(refused.value)
    assert endpoint.requests == []


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("127.0.0.1", True),
        ("10.1.2.3", True),
        ("172.16.0.1", True),
        ("192.168.1.1", True),
        ("169.254.169.254", True),  # cloud metadata
        ("100.64.0.1", True),  # carrier-grade NAT
        ("0.0.0.0", True),
        ("224.0.0.1", True),
        ("::1", True),
        ("fe80::1%eth0", True),
        ("fd00::1", True),
        ("::ffff:127.0.0.1", True),
        ("::ffff:10.0.0.1", True),
        ("93.184.215.14", False),
        ("2606:4700::1111", False),
    ],
)
def test_the_address_rule(address, refused):
    assert bool(guard.address_problem(address)) is refused


# --- the key masked ---------------------------------------------------------------------------


def test_a_key_quoted_in_an_error_is_masked_in_the_message():
    with HostileEndpoint(EchoKey()) as endpoint, pytest.raises(EndpointError) as refused:
        client(endpoint.base_url).complete("Which instrument?")

    message = str(refused.value)
    assert message.startswith("the endpoint refused the request: HTTP 401: Invalid API key: ")
    assert "[masked]" in message
    assert_no_part_of_the_key(message)
    assert endpoint.requests[0][1] == f"Bearer {KEY}"  # it was sent, to its own endpoint


def test_a_key_echoed_in_the_answer_is_masked_in_the_answer():
    with HostileEndpoint(EchoKey(in_answer=True)) as endpoint:
        reply = client(endpoint.base_url).complete("Which instrument?")

    assert reply.text == "A. By the way, your key is [masked] ([masked]...)"


def test_masking_covers_the_whole_key_and_any_long_part_and_leaves_the_rest():
    assert mask_secrets(f"a {KEY} b", [KEY]) == "a [masked] b"
    assert mask_secrets(f"...{KEY[-MIN_MATCH:]}", [KEY]) == "...[masked]"
    assert mask_secrets(f"{KEY[5 : 5 + MIN_MATCH]}", [KEY]) == "[masked]"
    shorter = KEY[5 : 5 + MIN_MATCH - 1]
    assert mask_secrets(shorter, [KEY]) == shorter  # too short to tell anything
    assert mask_secrets("nothing secret here", [KEY]) == "nothing secret here"
    assert mask_secrets("no key", []) == "no key"


# --- bounded in size --------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", [Giant, GiantUndeclared])
def test_an_over_long_answer_is_set_aside_and_reading_stops_at_the_bound(behaviour):
    # What the server manages to write is what the client read (at most its bound, 20,000 x 12
    # bytes + 64 KiB) plus what the kernel's buffers took: the server's send buffer is held to
    # 64 KiB, the client's receive buffer may grow to this machine's tcp_rmem limit (a 5 MB
    # answer fitted whole into it once in CI). The answer is 8 MB longer than all of that, so
    # a client that read on to the end would make the server write every byte.
    read_bound = 20_000 * 12 + 65536
    could_be_written = read_bound + receive_buffer_limit() + 4 * SEND_BUFFER
    giant = behaviour(chars=could_be_written + 8_000_000)
    with HostileEndpoint(giant) as endpoint:
        started = time.monotonic()
        reply = client(endpoint.base_url, max_answer_chars=20_000).complete("Describe it.")
        took = time.monotonic() - started

    assert reply.text is None
    assert reply.overlong.startswith("the answer was longer than 20,000 characters")
    assert giant.bytes_sent() < could_be_written
    assert took < 5.0


def test_an_answer_over_the_benchmarks_length_but_inside_the_bound_is_over_long():
    with HostileEndpoint(LyingUsage(chars=30_001)) as endpoint:
        reply = client(endpoint.base_url, max_answer_chars=20_000).complete("Describe it.")

    assert reply.text is None
    assert reply.overlong == (
        "the answer was 30,001 characters long, longer than 20,000, the most this benchmark takes"
    )


def test_an_over_long_answer_ends_its_items_attempts():
    with HostileEndpoint(Giant(chars=100_000)) as endpoint:
        chat = client(endpoint.base_url, max_answer_chars=1_000)
        asked = ask_until_usable(
            lambda: chat.complete("Describe it."),
            lambda reply: reply.text,
            max_attempts=5,
            backoff=Backoff(base=0.01),
            outage=Outage(limit_seconds=30),
        )

    assert asked.value is None
    assert (asked.attempts, asked.calls) == (1, 1)
    assert asked.error.startswith("the answer was longer than 1,000 characters")


# --- bounded in time --------------------------------------------------------------------------


def test_a_dripping_endpoint_gets_the_calls_deadline_not_a_read_timeout_per_byte():
    """Each byte comes 0.2 s after the last, well inside any read timeout; the reply would
    take ~60 s. The call ends at its 1 s deadline (the limit asserted leaves a loaded machine
    room; what matters is that it is not the drip's minute)."""
    with HostileEndpoint(Drip(interval=0.2)) as endpoint:
        started = time.monotonic()
        with pytest.raises(TransientError, match="no answer within 1 s"):
            client(endpoint.base_url, timeout_seconds=1.0).complete("Which instrument?")
        took = time.monotonic() - started

    assert took < 10.0


def test_a_stopped_run_ends_the_call_in_flight():
    """The end of a time slice: the call blocked on a dripping endpoint (deadline 60 s) ends
    soon after `stop` is set, and the item is handed back unfinished (no attempt charged)."""
    stop = threading.Event()
    with HostileEndpoint(Drip(interval=0.2)) as endpoint:
        chat = client(endpoint.base_url, timeout_seconds=60.0)
        threading.Timer(0.5, stop.set).start()
        started = time.monotonic()
        asked = ask_until_usable(
            lambda: chat.complete("Which instrument?"),
            lambda reply: reply.text,
            max_attempts=3,
            backoff=Backoff(base=0.01),
            outage=Outage(limit_seconds=60),
            stop=stop,
        )
        took = time.monotonic() - started

    assert (asked.value, asked.attempts, asked.calls) == (None, 0, 1)
    assert took < 10.0


# --- tokens charged whatever the endpoint says --------------------------------------------------


@pytest.mark.parametrize("reported", [0, -1_000_000, "many", None, 10**30])
def test_tokens_are_charged_for_what_was_sent_and_received_whatever_the_usage_says(reported):
    with HostileEndpoint(
        LyingUsage(chars=6_000, prompt_tokens=reported, completion_tokens=reported)
    ) as endpoint:
        reply = client(endpoint.base_url).complete("x" * 600)

    assert len(reply.text) == 5_999
    assert reply.prompt_tokens >= 100  # at least one token per 6 characters sent
    assert reply.completion_tokens >= 1_000  # and per 6 received
    assert reply.prompt_tokens <= 10_000_000  # an absurd claim is not believed either
    assert reply.completion_tokens <= 10_000_000


def test_an_honest_endpoints_usage_is_charged_as_reported():
    with HostileEndpoint(LyingUsage(chars=60, prompt_tokens=700, completion_tokens=40)) as e:
        reply = client(e.base_url).complete("x" * 600)

    assert (reply.prompt_tokens, reply.completion_tokens) == (700, 40)
