"""The SDK's side of the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on 2026-07-28 sessions.

The sidecar declares the extension in every 2026-07-28 request's client capabilities (the SDK's
`ClientExtension`, whose claim on the `resultType: "task"` shape of `tools/call` keeps it off
handshake-era sessions, where it is not defined): it can follow any task itself, whoever its own
client is, since it answers that client's call with the task's result as it would an ordinary
call's. A server may then answer any `tools/call` with a `CreateTaskResult`; the SDK hands it to
`_resolve`, which follows the task (`task_calls.follow_task`) with what the call in flight put in
`task_calls.FOLLOWED` (its progress sink, time limit, server) and returns the task's result, which
the SDK checks against the tool's output schema as any result.

The wire (requests stamped by the SDK as any 2026-07-28 request, with `Mcp-Name: <taskId>` on HTTP):

- `tasks/get {taskId}` → `{resultType: "complete", taskId, status, statusMessage?, createdAt,
  lastUpdatedAt, ttlMs, pollIntervalMs?, inputRequests? (input_required), result? (completed),
  error? (failed)}`
- `tasks/update {taskId, inputResponses: {key: response}}` → `{resultType: "complete"}`
- `tasks/cancel {taskId}` → `{resultType: "complete"}` (an acknowledgement; the state is `tasks/get`'s)

This module imports the SDK at its top: it is imported once a session is being opened (the
connection awaited `heavy.SDK`).
"""

from __future__ import annotations

import time
from typing import Any, Literal

from mcp import MCPError
from mcp.client.context import ClientRequestContext
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim, advertise
from mcp_types import (
    INTERNAL_ERROR,
    REQUEST_TIMEOUT,
    CallToolResult,
    ElicitResult,
    ErrorData,
    InputRequest,
    Request,
    RequestParams,
    Result,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError

from mcp_sidecar.connections.task_calls import (
    FOLLOWED,
    SDK_LIMIT_S,
    TaskMisbehaved,
    TaskState,
    TaskTimedOut,
    follow_task,
)
from mcp_sidecar.protocol import apps

EXTENSION = "io.modelcontextprotocol/tasks"
DEFAULT_TIMEOUT_S = 30.0
"""The time limit of a task whose call set no `FOLLOWED` (a call not made through `call_tool`)."""


class CreatedTask(Result):
    """`CreateTaskResult`: the task the server made instead of answering the call."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(Result):
    """`tasks/get`'s answer: the task, with its questions, result or error as its status has them."""

    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskIdParams(RequestParams):
    task_id: str


class UpdateTaskParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class UpdateTask(Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class CancelTask(Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class Acknowledged(Result):
    """`tasks/update` and `tasks/cancel` answer an empty result."""


_INPUT_REQUEST: TypeAdapter[Any] = TypeAdapter(InputRequest)


class TasksExtension(ClientExtension):
    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [
            ResultClaim(
                result_type="task",
                model=CreatedTask,
                resolve=_resolve,
                protocol_versions=frozenset(MODERN_PROTOCOL_VERSIONS),
            )
        ]


def tasks_extension() -> ClientExtension:
    return TasksExtension()


class _SdkWire:
    def __init__(self, context: ClaimContext) -> None:
        self._session = context.session

    async def get(self, task_id: str) -> TaskState:
        request = GetTask(params=TaskIdParams(task_id=task_id))
        try:
            got = await self._session.send_request(request, DetailedTask, SDK_LIMIT_S)
        except ValidationError:
            raise TaskMisbehaved("answered tasks/get with something that is not a task") from None
        return TaskState(
            got.task_id,
            got.status,
            got.status_message,
            got.ttl_ms,
            got.poll_interval_ms,
            got.input_requests or {},
            got.result,
            got.error,
        )

    async def answer(self, key: str, request: Any) -> Any:
        try:
            asked = _INPUT_REQUEST.validate_python(request, by_name=False)
        except ValidationError:
            raise TaskMisbehaved("asked a question that is no MCP request") from None
        meta = asked.params.meta if asked.params is not None else None
        context = ClientRequestContext(session=self._session, request_id=key, meta=meta)
        answer = await self._session.dispatch_input_request(context, asked)
        if isinstance(answer, ErrorData):
            if asked.method == "elicitation/create":
                # The extension's responses are results only: a question this client cannot put is declined.
                return ElicitResult(action="decline").model_dump(by_alias=True, mode="json", exclude_none=True)
            raise MCPError(answer.code, answer.message, answer.data)
        return answer.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def update(self, task_id: str, responses: dict[str, Any]) -> None:
        request = UpdateTask(params=UpdateTaskParams(task_id=task_id, input_responses=responses))
        await self._session.send_request(request, Acknowledged, SDK_LIMIT_S)

    async def cancel(self, task_id: str, timeout_s: float) -> None:
        await self._session.send_request(CancelTask(params=TaskIdParams(task_id=task_id)), Acknowledged, timeout_s)


async def _resolve(created: CreatedTask, context: ClaimContext) -> CallToolResult:
    """Follow the task to its end: its result, or the JSON-RPC error the call would have had."""
    call = FOLLOWED.get()
    state = TaskState(created.task_id, created.status, created.status_message, created.ttl_ms, created.poll_interval_ms)
    wire = _SdkWire(context)
    options: dict[str, Any] = {}
    timeout_s, progress = DEFAULT_TIMEOUT_S, None
    if call is not None:
        call.release()
        timeout_s, progress, options["server"] = call.timeout_s, call.progress, call.server
        human = call.human
        if human is not None:
            options["clock"] = lambda: time.monotonic() - human.spent()
            options["paused"] = lambda: human.asking
    try:
        end = await follow_task(wire, state, timeout_s, progress, **options)
    except TaskTimedOut:
        raise MCPError(REQUEST_TIMEOUT, "The task did not end within the time limit.") from None
    return _outcome(end)


def _outcome(end: TaskState) -> CallToolResult:
    if end.status == "completed":
        try:
            return CallToolResult.model_validate(end.result, by_name=False)
        except ValidationError:
            raise TaskMisbehaved("completed without a tool result") from None
    if end.status == "failed":
        error = end.error or {}
        code, message = error.get("code"), error.get("message")
        if not isinstance(code, int) or not isinstance(message, str):
            raise TaskMisbehaved("failed without a JSON-RPC error")
        raise MCPError(code, message, error.get("data"))
    message = f"The server cancelled the task{': ' + end.message if end.message else '.'}"
    raise MCPError(INTERNAL_ERROR, message)


__all__ = ["EXTENSION", "TasksExtension", "tasks_extension"]


def apps_extension() -> ClientExtension:
    """MCP Apps' declaration (`protocol/apps.py`), offered only for a client that renders apps.

    It claims no result shape, so the SDK declares it on handshake-era sessions too (where the
    official app servers look for it) as on 2026-07-28 ones. Kept beside the tasks extension:
    both are the SDK's extension objects, built where the SDK is already imported.
    """
    return advertise(apps.EXTENSION, {"mimeTypes": [apps.MIME_TYPE]})
