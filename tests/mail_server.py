"""A real SMTP server on loopback for the tests whose mail leaves another process (a worker
started by `start_cluster`, whose Django cannot share pytest's in-memory outbox). Point the
process's SMTP mailer at it with ``EMAIL_HOST=127.0.0.1`` and ``EMAIL_PORT=<port>``; every
message it accepts is kept, parsed, in `messages`.

Just the commands Django's SMTP backend sends without TLS or a login (EHLO or HELO, MAIL, RCPT,
DATA, RSET, NOOP, QUIT), stdlib only; anything else is answered 502 so a change in what the
client sends shows up as a refused email (kept on the notification) rather than silence.
"""

from __future__ import annotations

import socketserver
import threading
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from types import TracebackType


class _Session(socketserver.StreamRequestHandler):
    server: _Server

    def reply(self, line: str) -> None:
        self.wfile.write(line.encode("ascii") + b"\r\n")

    def handle(self) -> None:
        self.reply("220 127.0.0.1 Podium test SMTP server")
        while line := self.rfile.readline():
            command = line.decode("ascii", "replace").strip()
            verb = command[:4].upper()
            if verb == "EHLO":
                self.wfile.write(b"250-127.0.0.1\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n")
            elif verb in ("HELO", "MAIL", "RCPT", "RSET", "NOOP"):
                self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 End data with <CR><LF>.<CR><LF>")
                self.server.keep(self._data())
                self.reply("250 OK: queued")
            elif verb == "QUIT":
                self.reply("221 Bye")
                return
            else:
                self.reply(f"502 Command not implemented: {command[:40]}")

    def _data(self) -> bytes:
        lines = []
        while (line := self.rfile.readline()) not in (b".\r\n", b".\n", b""):
            lines.append(line[1:] if line.startswith(b"..") else line)  # RFC 5321 4.5.2
        return b"".join(lines)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Session)
        self.messages: list[EmailMessage] = []
        self.lock = threading.Lock()

    def keep(self, data: bytes) -> None:
        message = message_from_bytes(data, policy=policy.default)
        assert isinstance(message, EmailMessage)
        with self.lock:
            self.messages.append(message)


class MailServer:
    """``with MailServer() as mail:`` an SMTP server on ``mail.port`` until the block ends."""

    def __init__(self) -> None:
        self._server = _Server()
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> MailServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def messages(self) -> list[EmailMessage]:
        """The messages received so far, oldest first (a copy)."""
        with self._server.lock:
            return list(self._server.messages)

    def wait_for(self, count: int, timeout: float) -> list[EmailMessage]:
        """The messages once there are at least `count`; AssertionError after `timeout` s."""
        deadline = time.monotonic() + timeout
        while len(received := self.messages) < count:
            if time.monotonic() > deadline:
                subjects = [message["Subject"] for message in received]
                raise AssertionError(f"{count} emails expected within {timeout} s; got {subjects}")
            time.sleep(0.1)
        return received
