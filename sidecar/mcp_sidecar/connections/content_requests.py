"""Requests on one live session: tool calls, resource reads, prompts and completions.

Every answer is redacted here, whole, before anything shapes, cuts or spills it: the values
the connection gave its server (`LiveSession.redaction`) become `***` (`output/redact.py`),
and the answer says how many were replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_sidecar.connections import task_calls
from mcp_sidecar.connections.client_hooks import ANSWER_TIMEOUT_S
from mcp_sidecar.connections.errors import ToolCallAnswer, reported_tool_error
from mcp_sidecar.connections.questions import CallQuestions
from mcp_sidecar.connections.sdk_streams import cancelled_by_caller
from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.protocol.errors import Diagnostic, fail

if TYPE_CHECKING:
    from mcp import MCPError

    from mcp_sidecar.connections.live_session import ErrorCodes, LiveSession

RESOURCE_NOT_FOUND = -32002
"""The MCP specification's JSON-RPC code for a resource that does not exist."""
ERROR_MESSAGE_CHARS = 2_000
"""A server's JSON-RPC error message kept as a failed call's content, at most."""
MAX_ERROR_MESSAGE_CHARS = 1024 * 1024
"""How much of a JSON-RPC error message is sanitised and redacted before it is cut."""
URL_ELICITATION_REQUIRED = -32042
"""MCP's error for a call that needs the person to finish a step in the browser first."""
MAX_URL_ELICITATIONS = 3
NO_SDK_LIMIT_S = 24 * 3600.0
"""The SDK's own limit for a call, beyond ours: ours stops while a person answers, the SDK's cannot."""
PAUSED_POLL_S = 0.5
MAX_PAUSE_S = 2 * ANSWER_TIMEOUT_S
"""A call's time limit stops while its server's questions are open, for this long at most."""

ProgressSink = Callable[[float | None, float | None, str | None], None]
"""(progress, total, message) of a running call; progress None is a status report alone."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ContentAnswer:
    """A read, prompt or completion as the server answered it (dumped), redacted."""

    result: dict[str, Any]
    redacted: int = 0
    """How many of the server's secret values were replaced by `***`."""


def _redacted(session: LiveSession, dumped: dict[str, Any]) -> ContentAnswer:
    result, count = session.redaction.value(dumped)
    return ContentAnswer(result, count)


async def read_resource(session: LiveSession, uri: str, operation: str) -> ContentAnswer:
    """One `resources/read`, always on the wire (the client has no cache), whole before returning."""
    if "resources" not in session.capabilities:
        raise fail("resources_unsupported", operation, "The server does not offer resources.", session.server)
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

    codes: ErrorCodes = {
        RESOURCE_NOT_FOUND: ("resource_not_found", "The server has no resource at that URI."),
        INVALID_PARAMS: ("resource_not_found", "The server could not read that URI."),
        METHOD_NOT_FOUND: ("resources_unsupported", "The server does not serve resources/read."),
    }
    try:
        with session.in_flight():
            result = await session.client.read_resource(uri, cache_mode="bypass")
    except (asyncio.CancelledError, Exception) as exc:
        raise await session.mapped_failure(exc, operation, codes) from None
    return _redacted(session, result.model_dump(by_alias=True, mode="json", exclude_none=True))


async def get_prompt(session: LiveSession, name: str, arguments: dict[str, str], operation: str) -> ContentAnswer:
    """One `prompts/get`, whole: `{description?, messages}` as the server sent them (dumped).

    A result the SDK cannot validate (a role other than user/assistant, an unknown content
    block) is refused as `prompt_unsupported` without closing the session.
    """
    if "prompts" not in session.capabilities:
        raise fail("prompt_not_found", operation, "The server does not offer prompts.", session.server)
    import pydantic
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

    codes: ErrorCodes = {
        INVALID_PARAMS: ("prompt_invalid", "The server rejected the prompt's name or arguments."),
        METHOD_NOT_FOUND: ("prompt_not_found", "The server does not serve prompts/get."),
    }
    try:
        with session.in_flight():
            result = await session.client.get_prompt(name, arguments or None)
    except pydantic.ValidationError:
        message = "The server's prompt does not fit MCP prompt messages (role user or assistant, known content)."
        raise fail("prompt_unsupported", operation, message, session.server) from None
    except (asyncio.CancelledError, Exception) as exc:
        raise await session.mapped_failure(exc, operation, codes) from None
    return _redacted(session, result.model_dump(by_alias=True, mode="json", exclude_none=True))


async def complete(
    session: LiveSession,
    reference: tuple[Literal["template", "prompt"], str],
    argument: tuple[str, str],
    context: dict[str, str],
    operation: str,
) -> ContentAnswer:
    """`completion/complete` for one template variable or prompt argument: `{values, total?, hasMore?}`."""
    if "completions" not in session.capabilities:
        raise fail("completions_unsupported", operation, "The server does not offer completions.", session.server)
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND, PromptReference, ResourceTemplateReference

    kind, name = reference
    ref = ResourceTemplateReference(uri=name) if kind == "template" else PromptReference(name=name)
    codes: ErrorCodes = {
        INVALID_PARAMS: ("completion_invalid", "The server rejected the completion request."),
        METHOD_NOT_FOUND: ("completions_unsupported", "The server does not serve completion/complete."),
    }
    try:
        result = await session.client.complete(
            ref, {"name": argument[0], "value": argument[1]}, context_arguments=context or None
        )
    except (asyncio.CancelledError, Exception) as exc:
        raise await session.mapped_failure(exc, operation, codes) from None
    completion = result.completion
    out: dict[str, Any] = {"values": list(completion.values)}
    if completion.total is not None:
        out["total"] = completion.total
    if completion.has_more is not None:
        out["hasMore"] = completion.has_more
    return _redacted(session, out)


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A `tools/call` the server answered: its result (dumped), and a `tool_error` diagnostic when it failed."""

    result: dict[str, Any]
    diagnostic: Diagnostic | None = None
    elicitations: tuple[dict[str, Any], ...] = ()
    """An `elicitation_required` answer: each URL step the server asked for, and what came of it."""
    redacted: int = 0
    """How many of the server's secret values were replaced by `***`."""


class _LimitReached(Exception):
    """Our own time limit for a call ran out (time a person spent answering left out)."""


async def within_limit(
    session: LiveSession, work: Awaitable[T], timeout_s: float, followed: task_calls.FollowedCall | None = None
) -> T:
    """`work`'s result, cancelled past `timeout_s`, not counting time the server's questions were open.

    `work` runs in the caller's own task (a task of its own would cost a task and two turns of the
    event loop per call): a timer looks at the limit when it may have passed and cancels this task
    if it has, the way `asyncio.timeout` does, telling that cancellation from the caller's own. A
    call the server turned into a task (`followed`) stops this limit: the task keeps its own."""
    limit = _Limit(session, timeout_s)
    if followed is not None:
        followed.release = limit.stop
    try:
        return await work
    except asyncio.CancelledError:
        if limit.reached():
            raise _LimitReached from None
        raise
    finally:
        limit.stop()


class _Limit:
    """The timer of `within_limit`: armed for when the limit could run out, again while a person answers."""

    def __init__(self, session: LiveSession, timeout_s: float) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._loop = asyncio.get_running_loop()
        self._human = session.hooks.human if session.hooks is not None else None
        self._timeout_s = timeout_s
        self._start = self._loop.time()
        self._spent = self._human.spent() if self._human is not None else 0.0
        self._cancelled = False
        self._handle: asyncio.TimerHandle | None = self._loop.call_at(self._start + timeout_s, self._check)

    def _check(self) -> None:
        human = self._human
        asking = human is not None and human.asking
        elapsed = self._loop.time() - self._start
        used = elapsed - ((human.spent() - self._spent) if human is not None else 0.0)
        # Questions may pause the limit, but not for ever: a server that keeps asking
        # could otherwise hold a call open without end.
        if (used >= self._timeout_s and not asking) or elapsed >= self._timeout_s + MAX_PAUSE_S:
            self._handle = None
            self._cancelled = True
            self._task.cancel()
            return
        self._handle = self._loop.call_later(PAUSED_POLL_S if asking else self._timeout_s - used, self._check)

    def reached(self) -> bool:
        """After a CancelledError: whether it was this limit's (and no one else's) cancellation."""
        return self._cancelled and self._task.uncancel() == 0

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


async def _in_flight(session: LiveSession, work: Awaitable[T], questions: CallQuestions) -> T:
    with session.in_flight(questions):
        return await work


def redacting(session: LiveSession, progress: ProgressSink | None) -> ProgressSink | None:
    """`progress` with each message's secret values replaced (the server's log redaction)."""
    if progress is None or session.hooks is None:
        return progress
    redact = session.hooks.log.redact

    def report(value: float | None, total: float | None, message: str | None) -> None:
        progress(value, total, redact(message) if message else message)

    return report


def _progress_callback(progress: ProgressSink | None) -> Any:
    if progress is None:
        return None

    async def report(value: float, total: float | None, message: str | None) -> None:
        progress(value, total, message)

    return report


async def call_tool(
    session: LiveSession,
    name: str,
    arguments: dict[str, Any],
    timeout_s: float,
    operation: str,
    progress: ProgressSink | None = None,
) -> ToolAnswer:
    """One `tools/call`, with the tool's own time limit; a tool error is a result (`isError`).

    Both ways a server can say its tool failed are results with a `tool_error` diagnostic: an
    `isError` result, and a JSON-RPC error answer (whose message becomes the content, as the
    server's own text); the session stays open either way. The time limit stops while the
    server waits for the person to answer one of its questions. A tool the server runs as a task
    (`task_calls.py`) answers the same way, with the task's final result. Questions of the
    server's declined unshown, past their limits (`questions.py`), are told in a last text block.
    """
    questions = CallQuestions()
    answer = await _call_tool(session, name, arguments, timeout_s, operation, progress, questions)
    note = questions.note()
    if note is not None:
        answer.result["content"] = [*answer.result.get("content", []), {"type": "text", "text": note}]
    return answer


async def _call_tool(
    session: LiveSession,
    name: str,
    arguments: dict[str, Any],
    timeout_s: float,
    operation: str,
    progress: ProgressSink | None,
    questions: CallQuestions,
) -> ToolAnswer:
    as_task = task_calls.runs_as_task(session, name)
    progress = redacting(session, progress)
    # A 2026-07-28 server may answer with a task (the extension): its resolver follows it with these.
    human = session.hooks.human if session.hooks is not None else None
    followed = task_calls.FollowedCall(session.server, timeout_s, progress, human)
    entered = task_calls.FOLLOWED.set(followed)
    call = _in_flight(
        session,
        task_calls.call_as_task(session, name, arguments, timeout_s, progress)
        if as_task
        else session.client.call_tool(
            name,
            arguments,
            read_timeout_seconds=NO_SDK_LIMIT_S,
            progress_callback=_progress_callback(progress),
        ),
        questions,
    )
    try:
        # A task keeps a time limit of its own (its TTL may lengthen it), paused the same way.
        result = await (call if as_task else within_limit(session, call, timeout_s, followed))
    except task_calls.TaskMisbehaved as exc:
        raise fail("protocol_error", operation, f"The server's task {exc}.", session.server) from None
    except _LimitReached:
        from mcp import MCPError
        from mcp_types import REQUEST_TIMEOUT

        raise await session.failed(
            MCPError(REQUEST_TIMEOUT, f"Request 'tools/call' timed out after {timeout_s}s"), operation
        ) from None
    except asyncio.CancelledError:
        if cancelled_by_caller():
            raise
        # The SDK can cancel a waiter whose connection is torn down under it (seen on HTTP).
        raise await session.failed(ConnectionError(), operation) from None
    except Exception as exc:
        from mcp import MCPError

        if isinstance(exc, MCPError) and exc.code == URL_ELICITATION_REQUIRED and _offers_urls(session):
            with session.in_flight(questions):  # the call it belongs to is still ours
                return await _url_steps(session, exc, operation)
        if isinstance(exc, MCPError):
            return await _answered_with_error(session, exc, operation)
        if isinstance(exc, RuntimeError):
            raise fail(
                "protocol_error",
                operation,
                "The tool's result does not match its declared output schema.",
                session.server,
            ) from None
        raise await session.failed(exc, operation) from None
    finally:
        task_calls.FOLLOWED.reset(entered)
    dumped, count = session.redaction.value(result.model_dump(by_alias=True, mode="json", exclude_none=True))
    dumped.setdefault("isError", False)
    if dumped["isError"] is True:
        return ToolAnswer(dumped, reported_tool_error(operation, session.server), redacted=count)
    return ToolAnswer(dumped, redacted=count)


async def _answered_with_error(session: LiveSession, exc: MCPError, operation: str) -> ToolAnswer:
    """A JSON-RPC error: the server's answer (a failed call, as a result) or a failed connection (raised)."""
    error = await session.failed(ToolCallAnswer(exc.code), operation)
    if error.diagnostic.code != "tool_error":
        raise error from None
    # Untrusted server text, placed in the content by us: sanitised, on one line (a JSON-RPC
    # message is one sentence; newlines could forge rows below a CLI's ✘ line), without the
    # server's secrets (replaced before the cut, which would keep a secret's start), bounded,
    # never in the diagnostic.
    whole, count = session.redaction.text(one_line(exc.message[:MAX_ERROR_MESSAGE_CHARS]))
    message = whole[:ERROR_MESSAGE_CHARS] + ("…" if len(whole) > ERROR_MESSAGE_CHARS else "")
    text = message.strip() or f"JSON-RPC error {exc.code}"
    content = {"content": [{"type": "text", "text": text}], "isError": True}
    return ToolAnswer(content, error.diagnostic, redacted=count)


def _offers_urls(session: LiveSession) -> bool:
    return session.hooks is not None and session.hooks.offer.elicitation_url


async def _url_steps(session: LiveSession, exc: MCPError, operation: str) -> ToolAnswer:
    """`-32042`: ask the person about each URL step and answer at once, never retrying.

    The step is done later, in the browser; the server's completion notice then reaches the
    editor as `mcp/elicitationComplete`, and the person calls again.
    """
    hooks = session.hooks
    assert hooks is not None
    data = exc.data if isinstance(exc.data, dict) else {}
    asked = data.get("elicitations")
    steps: list[dict[str, Any]] = []
    for item in asked[:MAX_URL_ELICITATIONS] if isinstance(asked, list) else []:
        url, message, eid = (
            item.get(k) if isinstance(item, dict) else None for k in ("url", "message", "elicitationId")
        )
        if not isinstance(url, str) or not isinstance(eid, str):
            continue
        action, shown = await hooks.ask_url(message if isinstance(message, str) else "", url, eid)
        if shown is None:
            continue  # refused unseen (logged): nothing of it is repeated in the result
        completed = action == "accept" and hooks.is_completed(eid)
        steps.append({"elicitationId": eid, "url": shown, "action": action, "completed": completed})
    if not steps:
        return await _answered_with_error(session, exc, operation)
    text = _steps_text(steps)
    diag = fail(
        "elicitation_required",
        operation,
        "The server needs the person to finish a step in the browser before this call.",
        session.server,
    ).diagnostic
    return ToolAnswer({"content": [{"type": "text", "text": text}], "isError": True}, diag, tuple(steps))


def _steps_text(steps: list[dict[str, Any]]) -> str:
    """What came of the steps, in our words: a step that was not accepted asks nobody to do anything."""
    if not all(step["action"] == "accept" for step in steps):
        return "The server needed a step in the browser first; it was not accepted, so the tool did not run."
    if all(step["completed"] for step in steps):
        return "The server needed a step in the browser first, and it is done: call the tool again."
    return "The server needed a step in the browser first; it is not done yet. Finish it, then call the tool again."


async def roots_changed(session: LiveSession) -> None:
    """`notifications/roots/list_changed` (handshake era); a closed session is not told."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in 2026-07-28, current in the handshake era
        with contextlib.suppress(Exception):
            await session.client.session.send_roots_list_changed()
