"""Tool calls that the server runs as a task (MCP 2025-11-25, `basic/utilities/tasks`).

A tool whose descriptor says `execution.taskSupport: "required"` or `"optional"` is called as a
task when the server declares `tasks.requests.tools.call` (the specification forbids tasks on a
server that does not, whatever the tool says; such a call goes out as an ordinary one and gets the
server's own answer). `tools/call` then carries `task: {ttl}` and the server answers at once with a
task; the sidecar polls `tasks/get` at the server's `pollInterval` (at least 250 ms, at most 5 s,
1 s when it gives none), reports each new status through the call's progress sink, and once the
task is `completed`, `failed` or `cancelled` (or `input_required`, when the server waits on
`tasks/result` to ask its questions) fetches `tasks/result`: the same `CallToolResult`, or the same
JSON-RPC error, an ordinary call would have had, shaped by the caller exactly as one.

The time limit is the call's (`timeoutMs`), or the task's TTL when that is longer, at most an
hour (a TTL of null, unlimited, counts as the hour); like an ordinary call's, it stops while the
server waits for the person to answer one of its questions (`ClientHooks.human`). A call
cancelled by its caller, or out of time, sends `tasks/cancel` (the server's answer is logged);
the task is never started again.

The SDK (mcp 2.3) knows the task types but sends none of these requests: `tasks/*` go out through
`ClientSession.send_request`, and the first `tools/call`, whose answer is a task rather than a
`CallToolResult` the SDK would validate, unvalidated (`sdk_shim.send_unvalidated`, through the
session's dispatcher: private API, pinned by `tests/unit/connections/test_sdk_shim.py`).

Modern (2026-07-28) sessions have tasks only as an extension (`io.modelcontextprotocol/tasks`,
SEP-2663): the server decides per call, the answer is a task or the result. `follow_task` below
follows such a task to its end (no `tasks/result`: the last `tasks/get` carries the result or the
error; questions come as `inputRequests` and are answered with `tasks/update`); the SDK's side of
it, the extension the sessions declare and its requests, is `task_extension.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mcp_sidecar import long_calls, tasks
from mcp_sidecar.output.sanitize import one_line

if TYPE_CHECKING:
    from mcp.shared.dispatcher import CallOptions
    from mcp_types import CallToolResult

    from mcp_sidecar.connections.client_hooks import HumanTime
    from mcp_sidecar.connections.content_requests import ProgressSink
    from mcp_sidecar.connections.live_session import LiveSession

log = logging.getLogger(__name__)
T = TypeVar("T")

POLL_FLOOR_S = 0.25
POLL_CEILING_S = 5.0
POLL_DEFAULT_S = 1.0
"""Between two `tasks/get` when the server suggests no `pollInterval`."""
LIMIT_CEILING_S = 3600.0
"""A task's TTL lengthens the call's time limit up to this, never further."""
CANCEL_TIMEOUT_S = 5.0
"""How long a `tasks/cancel` may take; it is sent and forgotten, the call is over."""
SDK_LIMIT_S = 24 * 3600.0
"""The SDK's own limit for `tasks/get` and `tasks/result`; ours is kept by `run_task`, paused
while a person answers, which the SDK's cannot be."""
SHOWN_ID_CHARS = 100
"""A task id is the server's text: logged escaped (`%r`) and cut to this."""
PAUSED_POLL_S = 0.5
"""How often a request waiting past the time limit looks again whether a question is still open."""
TERMINAL = frozenset({"completed", "failed", "cancelled"})
RESULT_READY = TERMINAL | {"input_required"}
"""Statuses after which `tasks/result` is fetched: it answers at once, or blocks until the end while
the server asks its questions (elicitation, sampling) through the session's callbacks."""
STATUSES = TERMINAL | {"working", "input_required"}
SHOWN_MESSAGE_CHARS = 300
"""A task's status message is reported on one line, cut to this."""
MAX_INPUT_ROUNDS = 20
"""How many rounds of new questions one task may ask (2026-07-28 `inputRequests`), at most."""


@dataclass(frozen=True, slots=True)
class TaskState:
    """What the server said about a task: `tasks/get`, the `tools/call` answer, `tasks/cancel`."""

    task_id: str
    status: str
    message: str | None = None
    ttl_ms: int | None = None
    poll_ms: int | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    """2026-07-28: the questions outstanding while `input_required`, by the server's keys."""
    result: dict[str, Any] | None = None
    """2026-07-28: a `completed` task's result, as the call would have answered it."""
    error: dict[str, Any] | None = None
    """2026-07-28: a `failed` task's JSON-RPC error."""


class TaskWire(Protocol):
    """The requests of one task-augmented call (the SDK's, or a test's fake)."""

    async def create(self, ttl_ms: int, timeout_s: float) -> TaskState | CallToolResult:
        """`tools/call` with `task`; a server that runs the call at once answers its result instead."""
        ...

    async def get(self, task_id: str) -> TaskState: ...

    async def result(self, task_id: str) -> CallToolResult: ...

    async def cancel(self, task_id: str, timeout_s: float) -> TaskState: ...


def runs_as_task(session: LiveSession, name: str) -> bool:
    """Whether `name` is called as a task: it may run as one, and the server takes task-augmented calls."""
    if session.tool_tasks.get(name) not in ("optional", "required"):
        return False
    capabilities = session.client.server_capabilities
    requests = getattr(getattr(capabilities, "tasks", None), "requests", None)
    return getattr(getattr(requests, "tools", None), "call", None) is not None


def poll_interval_s(poll_ms: int | None) -> float:
    if poll_ms is None:
        return POLL_DEFAULT_S
    return min(max(poll_ms / 1000, POLL_FLOOR_S), POLL_CEILING_S)


def time_limit_s(timeout_s: float, ttl_ms: int | None) -> float:
    """The call's time limit, or the task's TTL when longer (null: unlimited), at most LIMIT_CEILING_S."""
    ttl_s = LIMIT_CEILING_S if ttl_ms is None else min(ttl_ms / 1000, LIMIT_CEILING_S)
    return max(timeout_s, ttl_s)


class TaskTimedOut(Exception):
    """The task did not end within the call's time limit (it was cancelled on the server)."""


async def run_task(
    wire: TaskWire,
    timeout_s: float,
    progress: ProgressSink | None,
    *,
    server: str = "",
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    paused: Callable[[], bool] = lambda: False,
) -> CallToolResult:
    """Create the task, poll it to its end, and fetch its result; cancel it if the caller gives up.

    `clock` is the time that counts against the limit (it stands still while `paused()`, a
    question to the person open). Raises TaskTimedOut at the time limit, and re-raises the
    caller's cancellation, both after sending `tasks/cancel`; the server's JSON-RPC errors
    (`MCPError`) pass as they are.
    """
    started = clock()
    created = await wire.create(round(timeout_s * 1000), timeout_s)
    if not isinstance(created, TaskState):
        return created  # the server ran it as an ordinary call
    state = created
    limit = TaskLimit(started + time_limit_s(timeout_s, state.ttl_ms), clock, paused)
    log.info("server %s: task %r created (%s)", server, state.task_id[:SHOWN_ID_CHARS], state.status)
    long_calls.task_made()
    try:
        state = await _poll(wire, state, limit, progress, sleep)
        return await limit.bound(wire.result(state.task_id))
    except asyncio.CancelledError:
        tasks.spawn(_cancel(wire, state.task_id, server), f"mcp-task-cancel:{server}")
        raise
    except TaskTimedOut:
        await _cancel(wire, state.task_id, server)
        raise


async def _poll(
    wire: TaskWire,
    state: TaskState,
    limit: TaskLimit,
    progress: ProgressSink | None,
    sleep: Callable[[float], Awaitable[None]],
) -> TaskState:
    """`tasks/get` at the server's pace until the result can be fetched; each change reported once."""
    reporter = StatusReporter(progress)
    while True:
        reporter.report(state)
        if state.status in RESULT_READY:
            return state
        await sleep(min(poll_interval_s(state.poll_ms), max(limit.remaining(), POLL_FLOOR_S)))
        state = await limit.bound(wire.get(state.task_id))


@dataclass(slots=True)
class StatusReporter:
    """A task's status as progress: each change once, a new message before a new status."""

    progress: ProgressSink | None
    reported: tuple[str, str | None] | None = None

    def report(self, state: TaskState) -> None:
        if self.progress is None or (state.status, state.message) == self.reported:
            return
        # A new message, else the new status (a task often ends keeping its last message).
        last = None if self.reported is None else self.reported[1]
        fresh = state.message if state.message and state.message != last else None
        self.reported = (state.status, state.message)
        self.progress(None, None, one_line(fresh)[:SHOWN_MESSAGE_CHARS] if fresh else state.status.replace("_", " "))


@dataclass(frozen=True, slots=True)
class TaskLimit:
    deadline: float
    clock: Callable[[], float]
    paused: Callable[[], bool]

    def remaining(self) -> float:
        """Time left; TaskTimedOut when none is and no question is open."""
        left = self.deadline - self.clock()
        if left <= 0 and not self.paused():
            raise TaskTimedOut
        return left

    async def bound(self, work: Awaitable[T]) -> T:
        """`work`'s result, cancelled once no time is left and no question is open."""
        pending = asyncio.ensure_future(work)
        try:
            while True:
                left = self.remaining()
                wait = PAUSED_POLL_S if self.paused() or left <= 0 else left
                done, _ = await asyncio.wait({pending}, timeout=wait)
                if done:
                    return pending.result()
        finally:
            if not pending.done():
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending


async def _cancel(wire: TaskWire, task_id: str, server: str) -> None:
    """Best effort: the call is over whatever the server answers; its answer is only logged."""
    try:
        answer = await wire.cancel(task_id, CANCEL_TIMEOUT_S)
    except Exception as exc:
        log.info("server %s: task %r: tasks/cancel failed (%s)", server, task_id[:SHOWN_ID_CHARS], type(exc).__name__)
        return
    log.info("server %s: task %r: tasks/cancel answered %s", server, task_id[:SHOWN_ID_CHARS], answer.status)


# -- 2026-07-28: the tasks extension --------------------------------------------------------------


class ModernTaskWire(Protocol):
    """The extension's requests for one task (the SDK's, or a test's fake)."""

    async def get(self, task_id: str) -> TaskState: ...

    async def answer(self, key: str, request: Any) -> Any:
        """One of the server's `inputRequests`, put to the person through the session's callbacks;
        its response as it goes back in `tasks/update`. Raises when no answer can be given."""
        ...

    async def update(self, task_id: str, responses: dict[str, Any]) -> None: ...

    async def cancel(self, task_id: str, timeout_s: float) -> None: ...


class TaskMisbehaved(Exception):
    """The server broke the extension's rules for a task (a status it does not define, a result that
    is no result, questions without end); the message says which, in the server's words never."""


def _nothing() -> None:
    return None


@dataclass(slots=True)
class FollowedCall:
    """The call in flight in this asyncio task, as the extension's resolver (called by the SDK with
    none of it) needs it: set by `content_requests.call_tool` around the SDK's `call_tool`."""

    server: str
    timeout_s: float
    progress: ProgressSink | None
    human: HumanTime | None
    release: Callable[[], None] = field(default=_nothing)
    """Stops the call's own time limit: once the server made a task, the task's limit counts."""


FOLLOWED: ContextVar[FollowedCall | None] = ContextVar("mcp_sidecar_followed_call", default=None)


async def follow_task(
    wire: ModernTaskWire,
    state: TaskState,
    timeout_s: float,
    progress: ProgressSink | None,
    *,
    server: str = "",
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    paused: Callable[[], bool] = lambda: False,
) -> TaskState:
    """Poll a task the server created (`state`) to its end and return that end, its result inside.

    `tasks/get` at the server's `pollIntervalMs` (within POLL_FLOOR_S..POLL_CEILING_S), each new
    status or message reported once through `progress`; new `inputRequests` keys answered (each key
    once) and sent back with `tasks/update`. The time limit is the call's, or the task's TTL when
    longer (as `run_task`'s). The first terminal state ends it: nothing is polled after it, so the
    result is delivered once. The caller's cancellation, the time limit, and any failure before the
    end send `tasks/cancel` (best effort: its answer or error is only logged).
    """
    limit = TaskLimit(clock() + time_limit_s(timeout_s, state.ttl_ms), clock, paused)
    log.info("server %s: task %r created (%s)", server, state.task_id[:SHOWN_ID_CHARS], state.status)
    long_calls.task_made()
    reporter = StatusReporter(progress)
    answered: set[str] = set()
    rounds = 0
    try:
        while True:
            if state.status not in STATUSES:
                raise TaskMisbehaved("reported a status the tasks extension does not define")
            reporter.report(state)
            if state.status in TERMINAL:
                return state
            fresh = {k: v for k, v in state.input_requests.items() if k not in answered}
            if state.status == "input_required" and fresh:
                rounds += 1
                if rounds > MAX_INPUT_ROUNDS:
                    raise TaskMisbehaved(f"asked more than {MAX_INPUT_ROUNDS} rounds of questions")
                responses = {key: await wire.answer(key, request) for key, request in fresh.items()}
                answered.update(fresh)
                await limit.bound(wire.update(state.task_id, responses))
            await sleep(min(poll_interval_s(state.poll_ms), max(limit.remaining(), POLL_FLOOR_S)))
            state = await limit.bound(wire.get(state.task_id))
    except asyncio.CancelledError:
        tasks.spawn(_cancel_modern(wire, state.task_id, server), f"mcp-task-cancel:{server}")
        raise
    except Exception:
        await _cancel_modern(wire, state.task_id, server)
        raise


async def _cancel_modern(wire: ModernTaskWire, task_id: str, server: str) -> None:
    """`tasks/cancel` is an acknowledgement only (the task's state is the next `tasks/get`'s)."""
    shown = task_id[:SHOWN_ID_CHARS]
    try:
        await wire.cancel(task_id, CANCEL_TIMEOUT_S)
    except Exception as exc:
        log.info("server %s: task %r: tasks/cancel failed (%s)", server, shown, type(exc).__name__)
        return
    log.info("server %s: task %r: tasks/cancel acknowledged", server, shown)


# -- the SDK's side -------------------------------------------------------------------------------


async def call_as_task(
    session: LiveSession,
    name: str,
    arguments: dict[str, Any],
    timeout_s: float,
    progress: ProgressSink | None,
) -> CallToolResult:
    """One task-augmented `tools/call` to its final result, checked against the tool's output schema."""
    from mcp import MCPError
    from mcp_types import REQUEST_TIMEOUT

    hooks = session.hooks
    human = hooks.human if hooks is not None else None
    token = f"mcp-sidecar-task-{secrets.token_hex(8)}" if progress is not None and hooks is not None else None
    wire = _SdkWire(session, name, arguments, token)
    if token is not None and hooks is not None and progress is not None:
        # The spec keeps the call's progress token valid for the task's whole life (`_on_message`).
        hooks.task_progress[token] = progress
    try:
        if human is None:
            result = await run_task(wire, timeout_s, progress, server=session.server)
        else:
            result = await run_task(
                wire,
                timeout_s,
                progress,
                server=session.server,
                clock=lambda: time.monotonic() - human.spent(),
                paused=lambda: human.asking,
            )
    except TaskTimedOut:
        raise MCPError(REQUEST_TIMEOUT, "The task did not end within the time limit.") from None
    finally:
        if token is not None and hooks is not None:
            hooks.task_progress.pop(token, None)
    if not result.is_error:
        await session.client.session.validate_tool_result(name, result)
    return result


class _SdkWire:
    def __init__(self, session: LiveSession, name: str, arguments: dict[str, Any], token: str | None) -> None:
        self._client = session.client
        self._name = name
        self._arguments = arguments
        self._token = token

    async def create(self, ttl_ms: int, timeout_s: float) -> TaskState | CallToolResult:
        import mcp_types as types
        from mcp_types import methods

        params: dict[str, Any] = {"name": self._name, "arguments": self._arguments, "task": {"ttl": ttl_ms}}
        if self._token is not None:
            params["_meta"] = {"progressToken": self._token}
        raw = await _send_raw(self._client, "tools/call", params, timeout_s)
        if "task" in raw:
            return _state(types.CreateTaskResult.model_validate(raw, by_name=False).task)
        # A server may run it at once and ignore `task`: then this is the call's own answer.
        methods.validate_server_result("tools/call", self._client.protocol_version or "2025-11-25", raw)
        return types.CallToolResult.model_validate(raw, by_name=False)

    async def get(self, task_id: str) -> TaskState:
        import mcp_types as types

        request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
        answer = await self._client.session.send_request(request, types.GetTaskResult, SDK_LIMIT_S)
        return _state(answer)

    async def result(self, task_id: str) -> CallToolResult:
        import mcp_types as types

        request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
        return await self._client.session.send_request(request, types.CallToolResult, SDK_LIMIT_S)

    async def cancel(self, task_id: str, timeout_s: float) -> TaskState:
        import mcp_types as types

        request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
        answer = await self._client.session.send_request(request, types.CancelTaskResult, timeout_s)
        return _state(answer)


def _state(task: Any) -> TaskState:
    return TaskState(task.task_id, task.status, task.status_message, task.ttl, task.poll_interval)


async def _send_raw(client: Any, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """A request whose answer the SDK must not validate as the method's usual result.

    `ClientSession.send_request` checks a `tools/call` answer against `CallToolResult`, which a
    `CreateTaskResult` is not; its dispatcher sends the same request without that check. The
    handshake-era stamp is only the protocol-version header (HTTP), added here the same way.
    """
    from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

    from mcp_sidecar.connections.sdk_shim import send_unvalidated

    opts: CallOptions = {"timeout": timeout_s}
    if client.protocol_version is not None:
        opts["headers"] = {MCP_PROTOCOL_VERSION_HEADER: client.protocol_version}
    return await send_unvalidated(client.session, method, params, opts)


__all__ = [
    "FOLLOWED",
    "LIMIT_CEILING_S",
    "POLL_CEILING_S",
    "POLL_DEFAULT_S",
    "POLL_FLOOR_S",
    "FollowedCall",
    "ModernTaskWire",
    "StatusReporter",
    "TaskLimit",
    "TaskMisbehaved",
    "TaskState",
    "TaskTimedOut",
    "TaskWire",
    "call_as_task",
    "follow_task",
    "poll_interval_s",
    "run_task",
    "runs_as_task",
    "time_limit_s",
]
