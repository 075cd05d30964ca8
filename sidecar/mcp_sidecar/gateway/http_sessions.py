"""The gateway's handshake-era HTTP sessions (one `Mcp-Session-Id` per host): a bounded table that
no host can fill to keep the others out.

The SDK's session manager refuses a new session (503) while `max_sessions` are open, and keeps an
idle one for its whole idle limit: 128 `initialize` requests never used again locked every new
host out for a day. Here a new session always gets in: when the table is full, the session that
never called anything goes first (the oldest such), then the one idle longest; one that never
called anything is also ended after `UNUSED_IDLE_S` without a request in flight. A session is
"used" from its first request other than `initialize` and `notifications/initialized`.

Built on the SDK manager's admission (under its lock), its discard (every way a session ends) and
its table of open sessions, which it keeps private: `connections/sdk_shim.py` (`SessionManagerHooks`)
gives them public names, and tests/unit/connections/test_sdk_shim.py pins them.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from mcp_sidecar.connections.sdk_shim import SessionManagerHooks, host_connection

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.lowlevel.server import Server
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import Message, Receive, Scope, Send

log = logging.getLogger(__name__)

MAX_SESSIONS = 128
"""Sessions kept at once (each holds a host's tools, about 85 KB)."""
SESSION_IDLE_S = 24 * 60 * 60
"""A used session idle this long (no request, no open stream) ends: a day, since a person leaves
an assistant's conversation open for hours; a session holds only its activated ids."""
UNUSED_IDLE_S = 60.0
"""A session that never called anything ends after this long without a request in flight."""
SWEEP_S = 5.0
"""How often sessions that never called anything are looked at."""
_OPENING = frozenset({"initialize", "notifications/initialized"})
_SESSION_HEADER = b"mcp-session-id"


@dataclass
class _Use:
    used: bool = False
    in_flight: int = 0
    last: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class SessionLimits:
    max_sessions: int = MAX_SESSIONS
    idle_s: float = SESSION_IDLE_S
    unused_idle_s: float = UNUSED_IDLE_S
    sweep_s: float = SWEEP_S


class SessionTable(SessionManagerHooks):
    """The SDK's session manager, making room for every new session instead of refusing it."""

    def __init__(
        self, server: Server[Any], security: TransportSecuritySettings, limits: SessionLimits | None = None
    ) -> None:
        self.limits = limits or SessionLimits()
        super().__init__(
            server,
            security_settings=security,
            session_idle_timeout=self.limits.idle_s,
            max_sessions=self.limits.max_sessions,
        )
        self._use: dict[str, _Use] = {}

    # -- what each session does -------------------------------------------------------------

    async def handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Every HTTP request: a known session's is counted in flight; an opening one's answer names
        the session it opened."""
        given = next((v for k, v in scope.get("headers", ()) if k == _SESSION_HEADER), None)
        use = self._use.get(given.decode("latin-1")) if given is not None else None
        if use is None:
            await super().handle_request(scope, receive, self._learning(send))
            return
        use.in_flight += 1
        use.last = time.monotonic()
        try:
            await super().handle_request(scope, receive, send)
        finally:
            use.in_flight -= 1
            use.last = time.monotonic()

    def _learning(self, send: Send) -> Send:
        async def answered(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = next((v for k, v in message.get("headers", ()) if k.lower() == _SESSION_HEADER), None)
                if opened is not None:
                    self._use.setdefault(opened.decode("latin-1"), _Use())
            await send(message)

        return answered

    async def mark_used(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Server middleware: a request other than the opening ones makes its session used."""
        if ctx.method not in _OPENING:
            session_id = host_connection(ctx).session_id
            use = self._use.get(session_id) if session_id is not None else None
            if use is not None:
                use.used = True
        return await call_next(ctx)

    # -- making room ------------------------------------------------------------------------

    def before_admission(self) -> None:
        while len(self.session_ids()) >= self.limits.max_sessions and (victim := self._victim()) is not None:
            kind = "idle longest" if self._use[victim].used else "never used"
            self._end(victim, f"to make room for a new one ({kind})")

    def _victim(self) -> str | None:
        """The session to end first: never used before used, idle before busy, then the longest idle."""
        known = [sid for sid in self.session_ids() if sid in self._use]
        if not known:
            return None  # only sessions whose opening request is still being answered

        def order(sid: str) -> tuple[bool, bool, float]:
            use = self._use[sid]
            return use.used, use.in_flight > 0, use.last

        return min(known, key=order)

    def _end(self, session_id: str, why: str) -> None:
        """Forget the session now (so the next admission sees the room), terminate it in the background:
        its host's tools go, as when the host ends it; its id answers 404 from now on."""
        self._use.pop(session_id, None)
        log.info("gateway: HTTP session ended %s", why)
        self.end_session(session_id)

    def session_discarded(self, session_id: str) -> None:
        self._use.pop(session_id, None)

    # -- sessions that never called anything ------------------------------------------------

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with super().run(), anyio.create_task_group() as sweeping:
            sweeping.start_soon(self._sweep)
            try:
                yield
            finally:
                sweeping.cancel_scope.cancel()

    async def _sweep(self) -> None:
        while True:
            await anyio.sleep(self.limits.sweep_s)
            self.sweep(time.monotonic())

    def sweep(self, now: float) -> None:
        """End every session that never called anything and had no request in flight for `unused_idle_s`."""
        for session_id, use in list(self._use.items()):
            if not use.used and use.in_flight == 0 and now - use.last >= self.limits.unused_idle_s:
                self._end(session_id, f"after {self.limits.unused_idle_s:g} s without calling anything")


__all__ = ["MAX_SESSIONS", "SESSION_IDLE_S", "UNUSED_IDLE_S", "SessionLimits", "SessionTable"]
