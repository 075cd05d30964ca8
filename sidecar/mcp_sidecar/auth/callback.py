"""The loopback listener that receives the browser's OAuth redirect.

A deliberately tiny HTTP/1.1 server on 127.0.0.1: it hands the full URL of the first
`GET /callback?...` whose `state` is the pending login's to the waiting login, and closes.
A callback with another state (or none, or before the login has a state) gets a 400 and the
listener keeps waiting: any local process or web page can send a request to the port, and
must not end a login by doing so. Anything else gets a 404. It never echoes the query
(which holds the authorization code) into the page or a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import secrets
from urllib.parse import parse_qs

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 16 * 1024
READ_TIME_LIMIT_S = 10.0

_DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>mcp-sidecar</title>"
    "<p>Authorization received. You can close this window and return to your editor.</p>"
)


class CallbackPortInUse(Exception):
    pass


class CallbackListener:
    def __init__(self, port: int) -> None:
        self.port = port
        self.received: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None
        self._state: str | None = None

    def expect_state(self, state: str) -> None:
        """The `state` of the authorization request just made: only its callback is taken."""
        self._state = state

    async def start(self) -> None:
        try:
            # SO_REUSEADDR: a previous login's connections in TIME_WAIT must not block the port (a live
            # listener still does, on Linux).
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                raise CallbackPortInUse() from None
            raise

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
        if not self.received.done():
            self.received.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIME_LIMIT_S)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            writer.close()
            return
        if len(head) > MAX_REQUEST_BYTES:
            await self._answer(writer, 431, "Request too large.")
            return
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET" or not parts[1].startswith("/callback"):
            await self._answer(writer, 404, "Not found.")
            return
        target = parts[1]
        path = target.split("?", 1)[0]
        if path != "/callback":
            await self._answer(writer, 404, "Not found.")
            return
        if self.received.done():
            await self._answer(writer, 410, "This login has already received its answer.")
            return
        if not self._is_pending_state(target):
            log.info("OAuth callback ignored: its state is not the pending login's")
            await self._answer(writer, 400, "This address does not belong to the pending login.")
            return
        self.received.set_result(f"http://127.0.0.1:{self.port}{target}")
        await self._answer(writer, 200, _DONE_PAGE, html=True)

    def _is_pending_state(self, target: str) -> bool:
        query = target.split("?", 1)[1] if "?" in target else ""
        states = parse_qs(query).get("state", [])
        expected = self._state
        if expected is None or len(states) != 1:
            return False
        return secrets.compare_digest(states[0].encode(), expected.encode())  # bytes: any text compares

    @staticmethod
    async def _answer(writer: asyncio.StreamWriter, status: int, body: str, html: bool = False) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 410: "Gone", 431: "Request Header Fields Too Large"}[
            status
        ]
        data = body.encode()
        kind = "text/html; charset=utf-8" if html else "text/plain; charset=utf-8"
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {len(data)}\r\n"
            "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        with contextlib.suppress(Exception):
            await writer.drain()
        writer.close()


__all__ = ["CallbackListener", "CallbackPortInUse"]
