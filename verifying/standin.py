"""A stand-in model server: a tiny OpenAI-compatible HTTP server that answers vision chat
requests from a lookup table, for tests and demos of the re-run.

The re-run talks to it exactly as to a real model (the `openai` client, over HTTP). A request's
key is `request_key(text, image_urls)`: the sha256 of its text parts and all its image data
URLs (`content_key` of a message's content), so a test can build the table from a submission's
predictions and the media it expects to be sent; an unknown key gets `DEFAULT_ANSWER`. The re-run itself never uses `request_key`.
Fault switches: `latency` (seconds per request) and `fail_first` (the first n requests of each
key get a 500); `api_key` (set: a request without it gets a 401, as from a provider).
`authorizations` records every request's Authorization header, so a test can see which key
reached it. The chat completions server is the engine's (`inference.standin.ChatStandin`);
stdlib only, no Django, like `judging.standin`.

With `models` (model name -> request key -> answer) it serves several models, as the demo's
stand-in does (`verifying/demo.py`, `manage.py standin_model`); a request for a model it does
not serve gets a 404, as from a real server. Like a model at temperature 0, it gives one
request one answer, however often and in whatever order it is asked. It is NOT a real model:
it only plays back predictions.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inference.standin import (
    ChatRequest,
    ChatStandin,
    Completion,
    Response,
    model_not_found,
    server_error,
)

DEFAULT_ANSWER = "I cannot tell."


def request_key(text: str, image_urls: Sequence[str]) -> str:
    digest = hashlib.sha256(text.encode())
    for url in image_urls:
        digest.update(b"\n")
        digest.update(url.encode())
    return digest.hexdigest()


def content_key(content: str | Sequence[Mapping[str, Any]]) -> str:
    """The key of a request whose last user message has `content` (a string, or parts in the
    vision format), as the server computes it: its text parts joined by newlines, and its image
    URLs in order."""
    if isinstance(content, str):
        return request_key(content, ())
    texts = [part["text"] for part in content if part.get("type") == "text"]
    images = [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]
    return request_key("\n".join(texts), images)


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    model: str
    text: str
    image_urls: tuple[str, ...]
    key: str = field(default="")


class StandinModel(ChatStandin):
    """`with StandinModel(table) as model: OpenAI(base_url=model.base_url)`."""

    thread_name = "standin-model"
    server_version = "StandinModel/1.0"

    def __init__(
        self,
        table: Mapping[str, str] | None = None,
        *,
        models: Mapping[str, Mapping[str, str]] | None = None,
        latency: float = 0.0,
        fail_first: int = 0,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host=host, port=port, api_key=api_key)
        self.table = dict(table or {})
        self.models = None if models is None else {name: dict(t) for name, t in models.items()}
        self.latency = latency
        self.fail_first = fail_first
        self._received: list[Received] = []
        self._key_calls: Counter[str] = Counter()

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return list(self._received)

    @property
    def key_calls(self) -> Counter[str]:
        """A copy: request key -> number of requests received for it."""
        with self._lock:
            return Counter(self._key_calls)

    @property
    def authorizations(self) -> list[str]:
        """The Authorization header of every POST received ("" when absent), in order."""
        return [request.authorization for request in self.requests if request.method == "POST"]

    def model_ids(self) -> list[str]:
        return sorted(self.models) if self.models is not None else []

    def answer(self, request: Received) -> str | None:
        """The answer to a request; None when it asks for a model this stand-in does not
        serve (only with `models`)."""
        if self.models is None:
            return self.table.get(request.key, DEFAULT_ANSWER)
        table = self.models.get(request.model)
        if table is None:
            return None
        return table.get(request.key, DEFAULT_ANSWER)

    def respond(self, request: ChatRequest, number: int) -> Response:
        received = Received(
            request.model,
            request.text,
            request.image_urls,
            request_key(request.text, request.image_urls),
        )
        with self._lock:
            self._received.append(received)
            self._key_calls[received.key] += 1
            key_number = self._key_calls[received.key]
        if self.latency > 0:
            time.sleep(self.latency)
        if key_number <= self.fail_first:
            return server_error("failed on purpose")
        answer = self.answer(received)
        if answer is None:
            served = ", ".join(sorted(self.models or {}))
            return model_not_found(
                f"The model {request.model!r} does not exist here; this stand-in serves {served}."
            )
        return Completion(answer)
