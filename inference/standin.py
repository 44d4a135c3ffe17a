"""OpenAI's chat completions on loopback: what the engine's stand-ins share (the judge model,
`judging.standin`; a submitted model, `verifying.standin`; hosted evaluation's models).

A `ChatStandin` parses `POST /v1/chat/completions` into a `ChatRequest` (the model, the last
user message's text parts and image URLs), hands it to its `respond` with the request's number,
and sends back what that returns: a `Completion` in OpenAI's shape with token usage, a
`Failure` (an error status in OpenAI's shape, with headers such as Retry-After), or `DROP`
(the connection closed without a byte). Those are the fault hooks: a subclass decides per
request which one to give. `GET /v1/models` lists `model_ids()`; with `api_key` set, a request
without `Authorization: Bearer <api_key>` is refused with a 401 as a provider refuses a wrong
key. Every malformed request gets a 400 in OpenAI's shape, naming what is wrong.

Stdlib only, no Django (`core.standin` is the HTTP scaffolding), like every stand-in.
"""

from __future__ import annotations

import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from core.standin import StandinHandler, StandinServer

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"


def completion_body(
    number: int, model: str, text: str | None, prompt_tokens: Any, completion_tokens: Any
) -> dict[str, Any]:
    """A chat completion in OpenAI's shape: one choice with `text`, and the usage given (a
    hostile stand-in in the tests reports what it likes there)."""
    total = (
        prompt_tokens + completion_tokens
        if isinstance(prompt_tokens, int) and isinstance(completion_tokens, int)
        else 0
    )
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": total,
        },
    }


class BadRequest(ValueError):
    """The request is not one the chat completions API takes; the message says why."""


@dataclass(frozen=True)
class ChatRequest:
    """The parts of a chat request a stand-in answers from: the model asked for, the last user
    message's content (a string, or parts in OpenAI's vision format), its text parts joined by
    newlines, its image URLs in order, and the Authorization header."""

    model: str
    content: str | list[dict[str, Any]]
    text: str
    image_urls: tuple[str, ...]
    authorization: str = ""


@dataclass(frozen=True)
class Completion:
    """An answer: `text` as the assistant message's content (None: a reply without text).
    `tag` is the subclass's own note, handed back to `undelivered`."""

    text: str | None
    tag: str = ""


@dataclass(frozen=True)
class Failure:
    """An error reply in OpenAI's shape: `{"error": {"message", "type", "code"}}`."""

    status: int
    message: str
    type: str
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP: Final = _Drop()
Response = Completion | Failure | _Drop


def retry_after_headers(retry_after: float | None) -> dict[str, str]:
    """Retry-After as OpenAI sends it: both headers (clients prefer the millisecond one)."""
    if retry_after is None:
        return {}
    return {
        "Retry-After": f"{retry_after:g}",
        "retry-after-ms": str(round(retry_after * 1000)),
    }


def rate_limited(message: str, retry_after: float | None = None) -> Failure:
    return Failure(
        429,
        message,
        "rate_limit_exceeded",
        code="rate_limit_exceeded",
        headers=retry_after_headers(retry_after),
    )


def server_error(message: str) -> Failure:
    return Failure(500, message, "server_error")


def model_not_found(message: str) -> Failure:
    return Failure(404, message, "invalid_request_error", code="model_not_found")


def parse_chat_request(body: bytes, *, parts: bool = True) -> ChatRequest:
    """The model and the last user message of a chat request body; `BadRequest` naming what is
    wrong. `parts` False: the content must be a string (a text-only endpoint)."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("The request body is not valid JSON.") from None
    if not isinstance(request, dict):
        raise BadRequest("The request body must be a JSON object.")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("Missing required parameter: 'model'.")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("Missing required parameter: 'messages'.")
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        raise BadRequest("'messages' must contain a message with role 'user'.")
    content = users[-1].get("content")
    if isinstance(content, str):
        return ChatRequest(model, content, content, ())
    if not parts:
        raise BadRequest("The last user message's 'content' must be a string.")
    if not isinstance(content, list):
        raise BadRequest("The user message's content must be a string or a list of parts.")
    texts: list[str] = []
    images: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            raise BadRequest("Each content part must be an object.")
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
            url = part["image_url"].get("url")
            if not isinstance(url, str):
                raise BadRequest("An image_url part needs a url.")
            images.append(url)
        else:
            raise BadRequest(f"Unsupported content part {part.get('type')!r}.")
    return ChatRequest(model, content, "\n".join(texts), tuple(images))


class ChatHandler(StandinHandler):
    """Routes a `ChatStandin`'s requests: the chat path, the model list, a 404 for the rest."""

    def do_GET(self) -> None:  # noqa: N802 (http.server calls do_<METHOD>)
        if self.path.rstrip("/") == MODELS_PATH:
            data = [
                {"id": name, "object": "model", "owned_by": "podium"}
                for name in self.owner.model_ids()
            ]
            self.send_json(200, {"object": "list", "data": data})
        else:
            self._error(Failure(404, f"Unknown path {self.path}", "invalid_request_error"))

    def do_POST(self) -> None:  # noqa: N802
        body = self.read_body()
        if self.path.rstrip("/") != CHAT_PATH:
            self._error(Failure(404, f"Unknown path {self.path}", "invalid_request_error"))
            return
        standin: ChatStandin = self.owner
        number = standin._count_chat_call()
        authorization = self.headers.get("Authorization", "")
        if standin.api_key is not None and not hmac.compare_digest(
            authorization.encode(), f"Bearer {standin.api_key}".encode()
        ):
            self._error(
                Failure(
                    401,
                    "Incorrect API key provided (stand-in).",
                    "invalid_request_error",
                    code="invalid_api_key",
                )
            )
            return
        try:
            parsed = parse_chat_request(body, parts=standin.accepts_parts)
        except BadRequest as error:
            self._error(Failure(400, str(error), "invalid_request_error"))
            return
        request = ChatRequest(
            parsed.model, parsed.content, parsed.text, parsed.image_urls, authorization
        )
        response = standin.respond(request, number)
        if isinstance(response, Failure):
            self._error(response)
        elif isinstance(response, Completion):
            if not self._completion(number, request, response.text):
                standin.undelivered(request, response)
        else:
            self.drop()

    def _completion(self, number: int, request: ChatRequest, text: str | None) -> bool:
        prompt_tokens = max(1, len(request.text) // 4)
        completion_tokens = max(1, len(text or "") // 4)
        return self.send_json(
            200, completion_body(number, request.model, text, prompt_tokens, completion_tokens)
        )

    def _error(self, failure: Failure) -> bool:
        payload = {
            "error": {"message": failure.message, "type": failure.type, "code": failure.code}
        }
        return self.send_json(failure.status, payload, headers=failure.headers)


class ChatStandin(StandinServer):
    """An OpenAI-compatible chat endpoint on loopback; subclasses answer in `respond`.
    `chat_calls` counts every POST to the chat path, whatever became of it (400s included);
    `base_url` is what an OpenAI client is given."""

    handler = ChatHandler
    thread_name: ClassVar[str] = "standin-chat"
    server_version: ClassVar[str] = "StandinChat/1.0"
    # False: a text-only endpoint (the judge) refuses content parts with a 400.
    accepts_parts: ClassVar[bool] = True

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, api_key: str | None = None):
        super().__init__(host=host, port=port)
        self.api_key = api_key
        self._chat_calls = 0

    @property
    def base_url(self) -> str:
        return f"{self.address}/v1"

    @property
    def chat_calls(self) -> int:
        with self._lock:
            return self._chat_calls

    def reset_chat_calls(self) -> None:
        with self._lock:
            self._chat_calls = 0

    def model_ids(self) -> list[str]:
        """What `GET /v1/models` lists."""
        return []

    def respond(self, request: ChatRequest, number: int) -> Response:
        """The reply to a well-formed request; `number` counts chat requests from 1 (since
        the last `reset_chat_calls`). Runs in the request's thread: it may sleep."""
        raise NotImplementedError

    def undelivered(self, request: ChatRequest, response: Completion) -> None:
        """A completion could not be delivered (the client had gone): undo what `respond`
        counted for it."""

    def _count_chat_call(self) -> int:
        with self._lock:
            self._chat_calls += 1
            return self._chat_calls
