"""2026-07-28 tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663), end to end over stdio.

Against the fixture `tasks_ext.py` (the SDK's MCPServer with the extension): it makes a task of a
call only when that request's client capabilities name the extension, advances a task one step per
`tasks/get`, and records every request it gets, so what the sidecar sent is asserted from the
server's side. (server-everything speaks the handshake era only: its tasks are `test_tasks.py`'s.)
One sidecar serves the module; each test uses servers no other test touches.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled

from mcp_sidecar.pygls_shim import is_tracked
from support.discovery import read_lines
from support.servers import fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIXTURE_SERVERS = (
    "research",
    "paced",
    "failing",
    "cancel",
    "short",
    "asking",
    "backwards",
    "weird",
    "legacy",
    "progress",
)


@dataclass(frozen=True, slots=True)
class Env:
    sidecar: SidecarClient
    logs: Path

    def requests(self, server: str) -> list[str]:
        """What `server` was sent, one line per request (see tasks_ext.py's --log-file)."""
        return read_lines(self.logs / server)

    def heads(self, server: str) -> list[str]:
        """`requests(server)` without the times of the `get` lines."""
        return [" ".join(line.split()[:3]) for line in self.requests(server)]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    logs = tmp_path_factory.mktemp("logs")
    options: dict[str, tuple[list[str], dict[str, Any]]] = {
        "paced": (["--poll-ms", "600"], {}),
        "short": (["--ttl-ms", "500"], {"timeoutMs": 6000}),  # the SDK server takes a while to start
        "legacy": ([], {"protocol": "legacy"}),
    }
    servers: dict[str, Any] = {}
    for name in FIXTURE_SERVERS:
        args, extra = options.get(name, ([], {}))
        servers[name] = fixture_stdio("tasks_ext.py", "--log-file", str(logs / name), *args, **extra)
    write_config(home, servers)
    async with start_sidecar(home) as sidecar:
        yield Env(sidecar, logs)


async def call(sidecar: SidecarClient, tool_id: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    params = {"id": tool_id, "arguments": arguments, "activate": True, **extra}
    result: dict[str, Any] = await sidecar.request("mcp/callTool", params)
    return result


def text_of(result: dict[str, Any]) -> str:
    assert [block["type"] for block in result["content"]] == ["text"], result
    return str(result["content"][0]["text"])


async def test_a_task_is_polled_to_its_end_and_its_result_answered_once(env: Env) -> None:
    result = await call(env.sidecar, "research.research", {"steps": 3})
    assert (text_of(result), result["isError"]) == ("researched in 3 steps", False)
    # The request named the extension; the last tasks/get carried the result: no other request follows.
    assert env.heads("research") == [
        "call research ext=yes",
        "get task-1 working",
        "get task-1 working",
        "get task-1 working",
        "get task-1 completed",
    ]
    # A call the server answers directly is an ordinary call, on the same session.
    assert text_of(await call(env.sidecar, "research.quick", {})) == "ran directly"
    assert env.heads("research")[-1] == "call quick ext=yes"


async def test_status_messages_after_the_start_reach_the_client_as_progress(env: Env) -> None:
    result = await call(env.sidecar, "progress.research", {"steps": 2}, workDoneToken="ext-progress")
    assert text_of(result) == "researched in 2 steps"
    reports: list[Any] = list(env.sidecar.lsp.progress_reports["ext-progress"])
    kinds = [report.kind if hasattr(report, "kind") else report["kind"] for report in reports]
    messages = [getattr(report, "message", None) or report.get("message") for report in reports[1:-1]]
    assert (kinds[0], kinds[-1]) == ("begin", "end")
    assert messages == ["working", "step 1 of 2", "step 2 of 2", "completed"]


async def test_polls_follow_the_servers_poll_interval(env: Env) -> None:
    assert text_of(await call(env.sidecar, "paced.research", {"steps": 2})) == "researched in 2 steps"
    times = [float(line.split()[3]) for line in env.requests("paced") if line.startswith("get ")]
    assert len(times) == 3
    # pollIntervalMs 600: each tasks/get is sent at least that long after the previous answer.
    assert all(later - earlier >= 0.58 for earlier, later in itertools.pairwise(times)), times


async def test_a_failed_task_answers_what_the_call_would_have(env: Env) -> None:
    raised = await call(env.sidecar, "failing.explode", {"how": "error"})
    assert (text_of(raised), raised["isError"]) == ("database locked", True)
    assert raised["diagnostic"]["code"] == "tool_error"
    assert raised["diagnostic"]["message"] == (
        "The server answered with JSON-RPC error -32603 instead of a result; its message is the content."
    )
    reported = await call(env.sidecar, "failing.explode", {"how": "result"})
    assert (text_of(reported), reported["isError"]) == ("database locked", True)
    account = "The tool reported an error; the result's content is the server's account."
    assert reported["diagnostic"]["message"] == account
    assert env.heads("failing") == [
        "call explode ext=yes",
        "get task-1 failed",
        "call explode ext=yes",
        "get task-2 completed",
    ]


async def test_cancel_request_sends_tasks_cancel(env: Env) -> None:
    sidecar = env.sidecar
    activated = await sidecar.request("mcp/activate", {"ids": ["cancel.forever"]})
    assert activated["results"][0]["status"] in ("loaded", "already loaded"), activated
    created = sidecar.log_text().count("server cancel: task 'task-1' created (working)")
    pending = asyncio.create_task(
        sidecar.lsp.protocol.send_request_async("mcp/callTool", {"id": "cancel.forever", "arguments": {}}, msg_id="f-1")
    )
    await sidecar.wait_for(lambda: is_tracked(sidecar.lsp.protocol, "f-1"), 10, "the call to be sent")
    await sidecar.wait_for(
        lambda: sidecar.log_text().count("server cancel: task 'task-1' created (working)") > created,
        30,
        "the sidecar to follow the task",
    )
    sidecar.lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="f-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(pending, 10)
    acknowledged = "server cancel: task 'task-1': tasks/cancel acknowledged"
    await sidecar.wait_for(lambda: acknowledged in sidecar.log_text(), 15, "the answer to tasks/cancel")
    assert env.requests("cancel")[-1] == "cancel task-1 working"
    # The session survives: the next call works on the same connection.
    assert text_of(await call(sidecar, "cancel.quick", {})) == "ran directly"


async def test_the_time_limit_is_timeout_ms_and_the_task_is_cancelled(env: Env) -> None:
    # Connected first: on a loaded box the server's start alone can take longer than its time limit.
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        try:
            await env.sidecar.request("mcp/server/tools", {"server": "short"})
            break
        except JsonRpcException:
            if asyncio.get_running_loop().time() > deadline:
                raise
    error = await env.sidecar.error("mcp/callTool", {"id": "short.forever", "arguments": {}, "activate": True})
    assert diagnostic_of(error) == {
        "code": "timeout",
        "operation": "call",
        "server": "short",
        "message": "The server did not answer within the time limit.",
        "hint": "Check the server's responsiveness and the applicable time limit (timeoutMs).",
    }
    lines = env.requests("short")
    assert lines[0] == "call forever ext=yes"
    assert lines[-1] == "cancel task-1 working"


async def test_a_question_without_an_editor_to_ask_is_declined_by_tasks_update(env: Env) -> None:
    # This client offers no elicitation: the question is declined, and the task goes on.
    result = await call(env.sidecar, "asking.ask", {})
    assert text_of(result) == "clarification: decline -"
    assert env.heads("asking") == [
        "call ask ext=yes",
        "get task-1 input_required",
        "update task-1 which",
        "get task-1 completed",
    ]


async def test_a_task_that_goes_back_after_its_end_is_answered_by_its_first_end(env: Env) -> None:
    assert text_of(await call(env.sidecar, "backwards.backwards", {})) == "first end"
    assert env.heads("backwards") == ["call backwards ext=yes", "get task-1 completed"]


async def test_a_status_the_extension_does_not_define_is_a_protocol_error_and_the_task_is_cancelled(env: Env) -> None:
    error = await env.sidecar.error("mcp/callTool", {"id": "weird.weird", "arguments": {}, "activate": True})
    assert diagnostic_of(error) == {
        "code": "protocol_error",
        "operation": "call",
        "server": "weird",
        "message": "The server's task reported a status the tasks extension does not define.",
        "hint": "Check the server's MCP compatibility and the `protocol` setting (auto or legacy).",
    }
    assert env.heads("weird") == ["call weird ext=yes", "get task-1 paused", "cancel task-1 paused"]
    # The session survives.
    assert text_of(await call(env.sidecar, "weird.quick", {})) == "ran directly"


async def test_handshake_era_sessions_are_not_offered_the_extension(env: Env) -> None:
    assert text_of(await call(env.sidecar, "legacy.research", {"steps": 2})) == "researched in 2 steps (no task)"
    assert env.requests("legacy") == ["call research ext=no"]


async def test_input_required_questions_reach_the_editor(tmp_path: Path) -> None:
    home, log = tmp_path / "home", tmp_path / "asking.log"
    write_config(home, {"asking": fixture_stdio("tasks_ext.py", "--log-file", str(log))})
    asked: list[dict[str, Any]] = []

    async def elicit(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"interpretation": "historical"}}

    offer: dict[str, Any] = {"mcpCapabilities": {"elicitation": {"form": {}}}}
    async with start_sidecar(home, options=offer, answers={"mcp/elicit": elicit}) as sidecar:
        result = await call(sidecar, "asking.ask", {})
    assert text_of(result) == "clarification: accept historical"
    assert [(q["server"], q["message"]) for q in asked] == [("asking", "Which interpretation?")]
    assert [" ".join(line.split()[:3]) for line in read_lines(log)] == [
        "call ask ext=yes",
        "get task-1 input_required",
        "update task-1 which",
        "get task-1 completed",
    ]
