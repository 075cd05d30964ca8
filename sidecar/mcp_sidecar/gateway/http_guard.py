"""TCP connections to the gateway's HTTP face that have not shown the token are held briefly, and few.

uvicorn closes a connection idle between two requests (its keep-alive limit), but never one that
has not finished sending a request head: 300 connections that sent nothing used up a
256-descriptor limit, and the gateway could accept nothing more (a host's requests stalled, and
every failed accept was logged). Here:

- a connection waiting for a request head (new, or between two requests) is closed once the head
  is `HEADER_READ_S` late;
- at most `MAX_UNAUTHENTICATED` connections that have not sent a request with the token are kept:
  one more closes the oldest of them (a host's own new connection sends its head at once, so it
  is the newest for the few milliseconds it counts).

The token is still checked on every request by `http.BearerToken`; here it only decides which
connections count as a host's. Built on uvicorn's h11 protocol (pinned by
tests/unit/gateway/test_gateway_http_guards.py): its `cycle`, `headers`, `transport` and `loop`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

HEADER_READ_S = 10.0
"""How long a connection may take to send a request's head (its first, or its next)."""
MAX_UNAUTHENTICATED = 32
"""Connections kept at once that have not sent a request with the token."""
ACCEPT_BATCH = 2 * MAX_UNAUTHENTICATED
"""Connections accepted at a time (the listening socket's backlog too): between two batches the
guard closes what is over its limit, so a flood never holds more descriptors than a few batches."""


@dataclass(frozen=True)
class ConnectionLimits:
    header_read_s: float = HEADER_READ_S
    max_unauthenticated: int = MAX_UNAUTHENTICATED


class ConnectionGuard:
    """The connections of one server that have not shown the token, oldest first."""

    def __init__(self, token_ok: Callable[[bytes | None], bool], limits: ConnectionLimits | None = None) -> None:
        self.token_ok = token_ok
        self.limits = limits or ConnectionLimits()
        self._waiting: dict[GuardedH11, None] = {}
        self._closed = 0

    def arrived(self, connection: GuardedH11) -> None:
        self._waiting[connection] = None
        while len(self._waiting) > self.limits.max_unauthenticated:
            oldest = next(iter(self._waiting))
            del self._waiting[oldest]
            oldest.drop()
            self._closed += 1
            if self._closed == 1 or self._closed % 1000 == 0:  # a flood is logged, not each of it
                limit = self.limits.max_unauthenticated
                log.warning("gateway: %d connections without the token closed (at most %d kept)", self._closed, limit)

    def left(self, connection: GuardedH11) -> None:
        self._waiting.pop(connection, None)

    def protocol(self) -> type[GuardedH11]:
        """uvicorn's `http` protocol class for this server's connections."""
        return type("GuardedH11", (GuardedH11,), {"guard": self})


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a time limit for request heads, counting connections without the token."""

    guard: ClassVar[ConnectionGuard]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_late: asyncio.TimerHandle | None = None
        self.shown_token = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.guard.arrived(self)
        self._await_head()

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        super().data_received(data)
        self._head_if_new(before)

    def on_response_complete(self) -> None:
        before = self.cycle
        super().on_response_complete()  # may start a pipelined request at once
        if not self._head_if_new(before) and self._between_requests() and not self.transport.is_closing():
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self.guard.left(self)
        super().connection_lost(exc)

    def drop(self) -> None:
        """Close the connection (the guard's choice), as uvicorn closes an idle one."""
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()

    # -- request heads ----------------------------------------------------------------------

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _await_head(self) -> None:
        self._stop_waiting()
        self._head_late = self.loop.call_later(self.guard.limits.header_read_s, self._late)

    def _stop_waiting(self) -> None:
        if self._head_late is not None:
            self._head_late.cancel()
            self._head_late = None

    def _late(self) -> None:
        self._head_late = None
        if self._between_requests():
            self.drop()

    def _head_if_new(self, before: object) -> bool:
        """A request's head arrived (a new cycle began): stop waiting; a token makes it a host's."""
        if self.cycle is before or self.cycle is None:
            return False
        self._stop_waiting()
        if not self.shown_token:
            header = next((v for k, v in self.headers if k == b"authorization"), None)
            if self.guard.token_ok(header):
                self.shown_token = True
                self.guard.left(self)
        return True


__all__ = ["HEADER_READ_S", "MAX_UNAUTHENTICATED", "ConnectionGuard", "ConnectionLimits", "GuardedH11"]
