"""The engine's chat completions stand-in (`inference.standin`), driven by the engine's own
clients over loopback HTTP: what a reply, a refusal, a dropped connection and a key check come
to on the client's side, and every malformed request refused with its reason."""

import json
import threading

import pytest
from openai import OpenAI

from inference.answering import ModelClient, answer_one
from inference.client import (
    Backoff,
    EndpointConfig,
    EndpointError,
    Outage,
    TransientError,
)
from inference.standin import (
    DROP,
    BadRequest,
    ChatRequest,
    ChatStandin,
    Completion,
    model_not_found,
    parse_chat_request,
)
from judging.client import JudgeClient

pytestmark = pytest.mark.integration


class Scripted(ChatStandin):
    """Answers "echo" with the request's text and image count; other models by their name."""

    def __init__(self, **options):
        super().__init__(**options)
        self.seen: list[tuple[ChatRequest, int]] = []

    def model_ids(self):
        return ["echo", "silent", "gone"]

    def respond(self, request, number):
        self.seen.append((request, number))
        if request.model == "silent":
            return Completion(None)
        if request.model == "gone":
            return model_not_found(f"no model {request.model!r} here")
        if request.model == "drop":
            return DROP
        return Completion(f"{request.text} [{len(request.image_urls)} images]")


def config(standin, model="echo", api_key="") -> EndpointConfig:
    return EndpointConfig(
        base_url=standin.base_url,
        model=model,
        api_key=api_key,
        timeout_seconds=5,
        allow_private=True,  # the stand-in is on loopback
    )


VISION = [
    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
    {"type": "text", "text": "What is shown?"},
    {"type": "text", "text": "One word."},
]


def test_a_vision_question_is_answered_with_its_usage_and_number():
    with Scripted() as standin:
        client = ModelClient(config(standin))
        try:
            reply = client.ask(VISION)
        finally:
            client.close()

    assert reply.text == "What is shown?\nOne word. [1 images]"
    assert (reply.prompt_tokens, reply.completion_tokens) == (
        len("What is shown?\nOne word.") // 4,
        len(reply.text) // 4,
    )
    ((request, number),) = standin.seen
    assert (request.model, request.image_urls, request.content, number) == (
        "echo",
        ("data:image/jpeg;base64,AAAA",),
        VISION,
        1,
    )
    assert standin.chat_calls == 1


def test_with_an_api_key_a_wrong_key_is_refused_naming_the_endpoint_and_the_key():
    with Scripted(api_key="right") as standin:
        model, judge = (
            ModelClient(config(standin, api_key="wrong")),
            JudgeClient(config(standin, api_key="wrong")),
        )
        good = ModelClient(config(standin, api_key="right"))
        try:
            with pytest.raises(EndpointError) as model_refused:
                model.ask("hello")
            with pytest.raises(EndpointError) as judge_refused:
                judge.complete("hello")
            answered = good.ask("hello")
        finally:
            for client in (model, judge, good):
                client.close()

    assert str(model_refused.value) == (
        "the model endpoint refused the request: HTTP 401: Incorrect API key "
        "provided (stand-in). (check the API key named in the model endpoint)"
    )
    assert str(judge_refused.value).startswith("the judge endpoint refused the request: HTTP 401")
    assert answered.text == "hello [0 images]"
    assert [request.authorization for request in standin.requests] == [
        "Bearer wrong",
        "Bearer wrong",
        "Bearer right",
    ]
    assert len(standin.seen) == 1  # a refused key never reaches `respond`


def test_an_unknown_model_is_a_refusal_and_a_drop_a_transient_failure():
    with Scripted() as standin:
        gone, dropped = ModelClient(config(standin, "gone")), ModelClient(config(standin, "drop"))
        try:
            with pytest.raises(
                EndpointError, match=r"HTTP 404: .*check the base URL and the model"
            ):
                gone.ask("q")
            with pytest.raises(TransientError, match="connection failed"):
                dropped.ask("q")
        finally:
            gone.close()
            dropped.close()


def test_a_reply_without_text_is_an_unusable_attempt_every_time():
    with Scripted() as standin:
        client = ModelClient(config(standin, "silent"))
        try:
            answer = answer_one(
                7,
                "q",
                client=client,
                max_attempts=3,
                backoff=Backoff(base=0.001),
                outage=Outage(limit_seconds=5),
                stop=threading.Event(),
            )
        finally:
            client.close()

    assert (answer.answer, answer.attempts, answer.calls, answer.error) == (
        None,
        3,
        3,
        "the reply held no message text",
    )


def test_the_model_list_and_an_unknown_path():
    with Scripted() as standin:
        listed = OpenAI(base_url=standin.base_url, api_key="x", max_retries=0).models.list()
        embeddings = OpenAI(base_url=standin.base_url, api_key="x", max_retries=0)
        with pytest.raises(Exception) as refused:  # noqa: PT011 (openai's NotFoundError below)
            embeddings.embeddings.create(model="echo", input="x")

    assert [model.id for model in listed.data] == ["echo", "silent", "gone"]
    assert (refused.value.status_code, refused.value.body["message"]) == (
        404,
        "Unknown path /v1/embeddings",
    )
    assert standin.chat_calls == 0


def body(**request) -> bytes:
    return json.dumps(request).encode()


USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("raw", "parts", "message"),
    [
        (b"{not json", True, "The request body is not valid JSON."),
        (b"[1]", True, "The request body must be a JSON object."),
        (body(messages=USER), True, "Missing required parameter: 'model'."),
        (body(model="m"), True, "Missing required parameter: 'messages'."),
        (
            body(model="m", messages=[{"role": "system", "content": "x"}]),
            True,
            "'messages' must contain a message with role 'user'.",
        ),
        (
            body(
                model="m", messages=[{"role": "user", "content": [{"type": "text", "text": "x"}]}]
            ),
            False,
            "The last user message's 'content' must be a string.",
        ),
        (
            body(model="m", messages=[{"role": "user", "content": 3}]),
            True,
            "The user message's content must be a string or a list of parts.",
        ),
        (
            body(model="m", messages=[{"role": "user", "content": ["x"]}]),
            True,
            "Each content part must be an object.",
        ),
        (
            body(
                model="m",
                messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
            ),
            True,
            "An image_url part needs a url.",
        ),
        (
            body(model="m", messages=[{"role": "user", "content": [{"type": "audio"}]}]),
            True,
            "Unsupported content part 'audio'.",
        ),
    ],
)
def test_every_malformed_request_is_refused_with_its_reason(raw, parts, message):
    with pytest.raises(BadRequest) as refused:
        parse_chat_request(raw, parts=parts)

    assert str(refused.value) == message


def test_the_last_user_message_is_the_question():
    request = parse_chat_request(
        body(
            model="m",
            messages=[
                {"role": "user", "content": "earlier"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "now"},
            ],
        ),
        parts=False,
    )

    assert (request.model, request.text, request.image_urls) == ("m", "now", ())
