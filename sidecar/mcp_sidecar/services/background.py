"""Background calls: a client's tool call that runs past its threshold stops holding the caller's turn.

A call that may go to the background runs as a job of its own. When it ends within the client's
threshold (`after`, seconds; None: never) its caller gets the result as ever. When it runs past
the threshold (a task its server made of it as any other call: a quick task is no reason to make
the caller ask again), the caller is answered at once with the call's view (its id, `running`)
and the job goes on: its progress is kept (the latest value, total and message) and sent to the
client at most once per PROGRESS_EVERY_S (`mcp/call/progress`), its end is told
(`mcp/call/finished`), and its result is kept until it is fetched, once (`result`: the editor's
`mcp/calls/result`, a model's `mcp_tools {"result": id}`), or its session or client ends, which
cancels what still runs.

What is kept is bounded: a result is shaped like any call's (output limits, the whole of a large
one in a spill file), and at most MAX_CALLS calls are kept per client; a call past that many runs
in the foreground, as if no threshold were set. One client's calls are its own (a `BackgroundCalls`
per `ClientContext`); a model sees only its session's.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from mcp_sidecar import tasks
from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, diagnostic, fail
from mcp_sidecar.services.notifier import Notify

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import BackgroundCallView, CallProgress, CallToolResult

log = logging.getLogger(__name__)

DEFAULT_AFTER_S = 120.0
"""An editor's threshold unless it sets `initializationOptions.backgroundAfterSeconds` (the gateway's
`--background-after`): a call still running after two minutes goes to the background."""
MAX_CALLS = 32
"""Calls kept per client, running or finished and not yet fetched."""
PROGRESS_EVERY_S = 1.0
"""A background call's progress reaches the client at most this often (a server may flood it)."""
MAX_WAIT_S = 60.0
"""The longest a fetch waits for a running call."""
MESSAGE_CHARS = 200

ProgressSink = Callable[[float | None, float | None, str | None], None]
"""A call's progress: its value, total and message (`connections/content_requests.py`'s own)."""
Status = Literal["running", "completed", "failed", "cancelled"]
Work = Callable[[ProgressSink | None], Awaitable["CallToolResult"]]
"""The call, given the sink its progress goes to (None: nobody follows it): its result, or a SidecarError."""


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class BackgroundCall:
    call_id: str
    tool: str
    session: str
    started_at: str = field(default_factory=_stamp)
    ended_at: str | None = None
    job: asyncio.Task[CallToolResult | SidecarError] | None = None
    """The call; a SidecarError is its result too (a call that fails is no failed task to log)."""
    cancelled: bool = False
    progress: float | None = None
    total: float | None = None
    message: str | None = None
    sent_at: float | None = None
    """When its progress was last sent."""

    @property
    def status(self) -> Status:
        job = self.job
        if job is None or not job.done():
            return "running"
        if self.cancelled or job.cancelled():
            return "cancelled"
        if job.exception() is not None:
            return "failed"
        ended = job.result()
        return "failed" if isinstance(ended, SidecarError) or ended["isError"] else "completed"

    def view(self) -> BackgroundCallView:
        out: BackgroundCallView = {
            "callId": self.call_id,
            "tool": self.tool,
            "session": self.session,
            "status": self.status,
            "startedAt": self.started_at,
        }
        if self.ended_at is not None:
            out["endedAt"] = self.ended_at
        progress: CallProgress = {}
        if self.progress is not None:
            progress["progress"] = self.progress
        if self.total is not None:
            progress["total"] = self.total
        if self.message:
            progress["message"] = self.message
        if progress:
            out["progress"] = progress
        return out

    def outcome(self) -> CallToolResult | Diagnostic | None:
        """The finished call's result, its failure's diagnostic, or None (running or cancelled)."""
        job = self.job
        if job is None or not job.done() or job.cancelled():
            return None
        exc = job.exception()
        if exc is not None:
            return diagnostic("operation_failed", "call", f"The call failed ({type(exc).__name__}).")
        ended = job.result()
        return ended.diagnostic if isinstance(ended, SidecarError) else ended


class BackgroundCalls:
    """One client's background calls, by id."""

    def __init__(
        self, notify: Notify, after: float | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._notify = notify
        self._clock = clock
        self.after = after
        """The threshold in seconds; None: calls never go to the background (a headless run's default)."""
        self._calls: dict[str, BackgroundCall] = {}

    async def run(
        self, tool: str, session: str, work: Work, progress: ProgressSink | None
    ) -> CallToolResult | BackgroundCall:
        """The call's result when it ends within the threshold, else the call, gone to the background."""
        if self.after is None:
            return await work(progress)
        if len(self._calls) >= MAX_CALLS:
            log.info("background calls: %d kept already; this call holds its caller", MAX_CALLS)
            return await work(progress)
        call = BackgroundCall(f"call-{secrets.token_hex(6)}", tool, session)

        def sink(value: float | None, total: float | None, message: str | None) -> None:
            self._progressed(call, value, total, message)
            if call.call_id not in self._calls and progress is not None:
                progress(value, total, message)

        async def job() -> CallToolResult | SidecarError:
            try:
                return await work(sink)
            except SidecarError as exc:
                return exc

        running = call.job = tasks.spawn(job(), "background-call")
        try:
            await asyncio.wait({running}, timeout=self.after)
        except asyncio.CancelledError:
            running.cancel()
            raise
        if running.done():
            ended = running.result()
            if isinstance(ended, SidecarError):
                raise ended
            return ended
        self._calls[call.call_id] = call
        running.add_done_callback(lambda _: self._finished(call))
        log.info("background calls: %s goes on in the background as %s", one_line(tool)[:80], call.call_id)
        self._notify(methods.CALL_BACKGROUND, call.view())
        return call

    def _progressed(self, call: BackgroundCall, value: float | None, total: float | None, message: str | None) -> None:
        if value is not None and math.isfinite(value):
            call.progress = value
        if total is not None and math.isfinite(total):
            call.total = total
        if message:
            call.message = one_line(message)[:MESSAGE_CHARS]
        if call.call_id not in self._calls:
            return
        now = self._clock()
        if call.sent_at is None or now - call.sent_at >= PROGRESS_EVERY_S:
            call.sent_at = now
            self._notify(methods.CALL_PROGRESS, call.view())

    def _finished(self, call: BackgroundCall) -> None:
        call.ended_at = _stamp()
        if self._calls.get(call.call_id) is call:
            self._notify(methods.CALL_FINISHED, call.view())

    def _get(self, call_id: str, session: str | None, operation: str) -> BackgroundCall:
        call = self._calls.get(call_id)
        if call is None or (session is not None and call.session != session):
            raise fail("call_not_found", operation, f"No background call {one_line(call_id)[:40]!r} is kept.")
        return call

    def list(self, session: str | None = None) -> list[BackgroundCallView]:
        """The calls kept, running or finished, oldest first; a session's alone when it is given."""
        return [c.view() for c in self._calls.values() if session is None or c.session == session]

    def cancel(self, call_id: str, session: str | None = None, operation: str = "calls cancel") -> BackgroundCallView:
        """Cancel a running call (its server is told, as for any cancelled call); a finished one stays as it is."""
        call = self._get(call_id, session, operation)
        if call.job is not None and not call.job.done():
            call.cancelled = True
            call.job.cancel()
        return call.view()

    async def result(
        self, call_id: str, wait: float, session: str | None = None, operation: str = "calls result"
    ) -> tuple[BackgroundCallView, CallToolResult | Diagnostic | None]:
        """The call's view and, once it has ended, its outcome, released (delivered once). Waits up to
        `wait` seconds (at most MAX_WAIT_S) for a running call; a call still running is kept."""
        call = self._get(call_id, session, operation)
        job = call.job
        if job is not None and not job.done() and wait > 0:
            await asyncio.wait({job}, timeout=min(wait, MAX_WAIT_S))
        if job is not None and not job.done():
            return call.view(), None
        if call.ended_at is None:
            call.ended_at = _stamp()  # its done callback has not run yet
        self._calls.pop(call.call_id, None)
        return call.view(), call.outcome()

    def end_session(self, session: str) -> int:
        """The session ended: its calls are released, the running ones cancelled. How many there were."""
        ended = [c for c in self._calls.values() if c.session == session]
        for call in ended:
            self._release(call)
        return len(ended)

    def close(self) -> None:
        """The client is gone: every call is released, the running ones cancelled."""
        for call in list(self._calls.values()):
            self._release(call)

    def _release(self, call: BackgroundCall) -> None:
        del self._calls[call.call_id]
        if call.job is not None and not call.job.done():
            call.cancelled = True
            call.job.cancel()


__all__ = ["DEFAULT_AFTER_S", "MAX_CALLS", "BackgroundCall", "BackgroundCalls", "ProgressSink"]
