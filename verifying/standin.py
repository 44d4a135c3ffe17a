"""A stand-in model server: a tiny OpenAI-compatible HTTP server that answers vision chat
requests from a lookup table, for tests and demos of the re-run.

The re-run talks to it exactly as to a real model (the `openai` client, over HTTP). A request's
key is `request_key(text, image_urls)`: the sha256 of its text parts and all its image data
URLs (`content_key` of a message's content), so a test can build the table from a submission's
predictions and the media it expects to be sent; an unknown key gets `DEFAULT_ANSWER`. The re-run itself never uses `request_key`.
Fault switches: `latency` (seconds per request) and `fail_first` (the first n requests of each
key get a 500). `authorizations` records every request's Authorization header, so a test can
see which key reached it. Stdlib only, no Django, like `judging.standin`.

With `models` (model name -> request key -> answer) it serves several models, as the demo's
stand-in does (`verifying/demo.py`, `manage.py standin_model`); a request for a model it does
not serve gets a 404, as from a real server. Like a model at temperature 0, it gives one
request one answer, however often and in whatever order it is asked. It is NOT a real model:
it only plays back predictions.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

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


class StandinModel:
    """`with StandinModel(table) as model: OpenAI(base_url=model.base_url)`."""

    def __init__(
        self,
        table: Mapping[str, str] | None = None,
        *,
        models: Mapping[str, Mapping[str, str]] | None = None,
        latency: float = 0.0,
        fail_first: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.table = dict(table or {})
        self.models = None if models is None else {name: dict(t) for name, t in models.items()}
        self.latency = latency
        self.fail_first = fail_first
        self.host = host
        self.port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._received: list[Received] = []
        self._key_calls: Counter[str] = Counter()
        self._authorizations: list[str] = []

    def start(self) -> StandinModel:
        self._server = _Server((self.host, self.port), _Handler)
        self._server.model = self
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="standin-model",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = self._thread = None

    def __enter__(self) -> StandinModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://{self.host}:{self._server.server_address[1]}/v1"

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
        """The Authorization header of every request received ("" when absent), in order."""
        with self._lock:
            return list(self._authorizations)

    def _note(self, request: Received) -> int:
        with self._lock:
            self._received.append(request)
            self._key_calls[request.key] += 1
            return self._key_calls[request.key]

    def answer(self, request: Received) -> str | None:
        """The answer to a request; None when it asks for a model this stand-in does not
        serve (only with `models`)."""
        if self.models is None:
            return self.table.get(request.key, DEFAULT_ANSWER)
        table = self.models.get(request.model)
        if table is None:
            return None
        return table.get(request.key, DEFAULT_ANSWER)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    model: StandinModel


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        with self.server.model._lock:
            self.server.model._authorizations.append(self.headers.get("Authorization", ""))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"Unknown path {self.path}"}})
            return
        try:
            request = _parse(body)
        except ValueError as error:
            self._send(400, {"error": {"message": str(error), "type": "invalid_request_error"}})
            return
        stand_in = self.server.model
        number = stand_in._note(request)
        if stand_in.latency > 0:
            time.sleep(stand_in.latency)
        if number <= stand_in.fail_first:
            self._send(500, {"error": {"message": "failed on purpose", "type": "server_error"}})
            return
        answer = stand_in.answer(request)
        if answer is None:
            served = ", ".join(sorted(stand_in.models or {}))
            self._send(
                404,
                {
                    "error": {
                        "message": f"The model {request.model!r} does not exist here; this "
                        f"stand-in serves {served}.",
                        "type": "invalid_request_error",
                        "code": "model_not_found",
                    }
                },
            )
            return
        tokens = max(1, len(request.text) // 4)
        self._send(
            200,
            {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": tokens,
                    "completion_tokens": max(1, len(answer) // 4),
                    "total_tokens": tokens + max(1, len(answer) // 4),
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True


def _parse(body: bytes) -> Received:
    """The model, the text parts (joined by newlines) and the image URLs of the last user
    message; its content may be a string or a list of parts (the vision format)."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("The request body is not valid JSON.") from None
    if not isinstance(request, dict) or not isinstance(request.get("model"), str):
        raise ValueError("Missing required parameter: 'model'.")
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        raise ValueError("'messages' must contain a message with role 'user'.")
    content = users[-1].get("content")
    texts: list[str] = []
    images: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                raise ValueError("Each content part must be an object.")
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
                url = part["image_url"].get("url")
                if not isinstance(url, str):
                    raise ValueError("An image_url part needs a url.")
                images.append(url)
            else:
                raise ValueError(f"Unsupported content part {part.get('type')!r}.")
    else:
        raise ValueError("The user message's content must be a string or a list of parts.")
    text = "\n".join(texts)
    return Received(request["model"], text, tuple(images), request_key(text, images))
