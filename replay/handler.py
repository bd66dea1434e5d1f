"""The HTTP side: turn a socket request into an IncomingRequest and write the Answer."""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler
from typing import Protocol, cast
from urllib.parse import parse_qs, unquote, urlsplit

from replay.answer import Answer
from replay.matching import IncomingRequest


class Replaying(Protocol):
    """What the handler asks of the replay server (replay.server.ReplayServer): stated here
    so that the handler needs nothing from the module that starts it."""

    stopping: threading.Event

    def answer(self, request: IncomingRequest) -> Answer: ...

    def control(self, method: str, action: str, body: bytes) -> Answer: ...


class _Serving(Protocol):
    replay: Replaying


access_log = logging.getLogger("replay.access")

CONTROL_PREFIX = "__replay__"


class ReplayHandler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, so stop() leaves no idle keep-alive
    # sockets behind and a truncated body ends with a plain close.
    protocol_version = "HTTP/1.0"
    server_version = "gpurent-replay/1"

    @property
    def replay(self) -> Replaying:
        return cast(_Serving, self.server).replay

    def do_GET(self) -> None:
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def dispatch(self) -> None:
        split = urlsplit(self.path)
        first, _, rest = split.path.lstrip("/").partition("/")
        body = self.read_body()
        if first == CONTROL_PREFIX:
            self.send(self.replay.control(self.command, rest.strip("/"), body))
            return
        if first == "robots.txt" and not rest:
            # Scrapy asks the host root for robots.txt; providers share this host,
            # so there is nothing to serve: 404 means "allow all".
            provider, path = "", "/robots.txt"
        else:
            provider, path = unquote(first), "/" + unquote(rest)
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        json_body, json_ok = IncomingRequest.parse_json(body)
        request = IncomingRequest(
            method=self.command,
            provider=provider,
            path=path,
            query=parse_qs(split.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in headers.items()},
            body=body,
            json_body=json_body,
            json_ok=json_ok,
        )
        answer = self.replay.answer(request)
        self.send(answer)

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self.read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():  # trailers
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()  # CRLF after each chunk

    def send(self, answer: Answer) -> None:
        if answer.delay_s and self.replay.stopping.wait(answer.delay_s):
            return  # server stopping: drop the connection rather than answer late
        try:
            self.send_response(answer.status)
            extra = {name.lower() for name in answer.headers}
            if "content-type" not in extra:  # a recording's own header wins
                self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            # One request per connection: say so, or clients may reuse a socket we close.
            self.send_header("Connection", "close")
            for name, value in answer.headers.items():
                if name.lower() not in ("content-length", "connection"):
                    self.send_header(name, value)
            self.end_headers()
            if self.command == "HEAD":
                return
            if answer.truncate_at is None:
                self.wfile.write(answer.body)
                return
            self.wfile.write(answer.body[: answer.truncate_at])
            self.wfile.flush()
            # Close now: the client has been promised more bytes than it will get.
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its timeout fired during a delay)

    def log_message(self, format: str, *args: object) -> None:
        access_log.info("%s %s", self.address_string(), format % args)
