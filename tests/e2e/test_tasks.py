"""Tools that run as MCP tasks, end to end: `mcp/callTool` polls the task and answers its result.

Against the unmodified server-everything (`simulate-research-query`, taskSupport "required") and
the fixture `tasks.py`, which advances a task one step per `tasks/get` and records every request
it gets, so what the sidecar sent is asserted from the server's side. One sidecar serves the
module; each test uses servers no other test touches.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from mcp_sidecar.pygls_shim import is_tracked
from support.discovery import read_lines
from support.servers import SERVER_EVERYTHING_JS, fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

needs_server_everything = pytest.mark.skipif(
    not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci` to install server-everything"
)
FIXTURE_SERVERS = (
    "research",
    "failing",
    "paced",
    "floor",
    "optional",
    "nocap",
    "short",
    "long",
    "asking",
    "cancel",
    "progressing",
)
TOOL_ERROR_HINT = "Check the server's tool result and inputs; verify the outcome before retrying."


@dataclass(frozen=True, slots=True)
class Env:
    sidecar: SidecarClient
    logs: Path

    def requests(self, server: str) -> list[str]:
        """What `server` was sent, one line per request (see tasks.py's --log-file)."""
        return read_lines(self.logs / server)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    logs = tmp_path_factory.mktemp("logs")
    options: dict[str, tuple[list[str], dict[str, Any]]] = {
        "paced": (["--poll-ms", "600"], {}),
        "floor": (["--poll-ms", "1"], {}),
        "nocap": (["--no-task-capability"], {}),
        "short": (["--ttl-ms", "500"], {"timeoutMs": 1000}),
        "long": (["--ttl-ms", "60000", "--poll-ms", "500"], {"timeoutMs": 1000}),
        "progressing": (["--progress"], {}),
    }
    servers: dict[str, Any] = {}
    for name in FIXTURE_SERVERS:
        args, extra = options.get(name, ([], {}))
        servers[name] = fixture_stdio("tasks.py", "--log-file", str(logs / name), *args, **extra)
    if SERVER_EVERYTHING_JS.is_file():
        servers["everything"] = {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}
    write_config(home, servers)
    async with start_sidecar(home) as sidecar:
        yield Env(sidecar, logs)


async def call(sidecar: SidecarClient, tool_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request(
        "mcp/callTool", {"id": tool_id, "arguments": arguments, "activate": True}
    )
    return result


def text_of(result: dict[str, Any]) -> str:
    assert [block["type"] for block in result["content"]] == ["text"], result
    return str(result["content"][0]["text"])


def poll_times(lines: list[str]) -> list[float]:
    return [float(line.split()[3]) for line in lines if line.startswith("get ")]


async def cancel_midway(env: Env, tool_id: str, arguments: dict[str, Any], msg_id: str) -> None:
    """Call, wait until the sidecar has created the task, cancel with `$/cancelRequest`."""
    sidecar = env.sidecar
    activated = await sidecar.request("mcp/activate", {"ids": [tool_id]})
    assert activated["results"][0]["status"] in ("loaded", "already loaded"), activated
    created = sidecar.log_text().count("created (working)")
    pending = asyncio.create_task(
        sidecar.lsp.protocol.send_request_async("mcp/callTool", {"id": tool_id, "arguments": arguments}, msg_id=msg_id)
    )
    await sidecar.wait_for(lambda: is_tracked(sidecar.lsp.protocol, msg_id), 10, "the call to be sent")
    await sidecar.wait_for(
        lambda: sidecar.log_text().count("created (working)") > created, 30, "the sidecar to create the task"
    )
    sidecar.lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(pending, 10)


# -- server-everything ----------------------------------------------------------------------------


@needs_server_everything
async def test_simulate_research_query_completes_as_a_task(env: Env) -> None:
    result = await call(env.sidecar, "everything.simulate-research-query", {"topic": "tides"})
    assert result["isError"] is False
    assert "diagnostic" not in result
    text = text_of(result)
    assert text.startswith("# Research Report: tides\n")
    assert "Stage 4: Generating report ✓" in text
    # The result is the task's: tasks/result carries the related-task metadata.
    assert set(result["_meta"]) == {"io.modelcontextprotocol/related-task"}
    assert re.search(r"server everything: task '[0-9a-f]+' created \(working\)", env.sidecar.log_text())


@needs_server_everything
async def test_cancel_request_cancels_the_server_everything_task(env: Env) -> None:
    await cancel_midway(env, "everything.simulate-research-query", {"topic": "eels"}, "research-1")
    # server-everything answered tasks/cancel with the task in status `cancelled`.
    pattern = r"server everything: task '[0-9a-f]+': tasks/cancel answered cancelled"
    await env.sidecar.wait_for(lambda: re.search(pattern, env.sidecar.log_text()) is not None, 15, "tasks/cancel")

    # ... and its research, still running, can no longer update the cancelled task (its stderr).
    async def server_says() -> str:
        logs = await env.sidecar.request("mcp/server/logs", {"server": "everything"})
        return "\n".join(line["text"] for line in logs["lines"])

    async with asyncio.timeout(15):
        while 'from terminal status "cancelled"' not in await server_says():  # noqa: ASYNC110 (a request per look)
            await asyncio.sleep(0.1)


# -- the fixture ----------------------------------------------------------------------------------


async def test_a_task_is_polled_to_its_end_and_its_result_answered(env: Env) -> None:
    result = await call(env.sidecar, "research.research", {"steps": 3})
    assert (text_of(result), result["isError"]) == ("researched in 3 steps", False)
    assert result["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": "task-1"}}
    lines = env.requests("research")
    # The call asked for a task living as long as the call may take (timeoutMs, 30 s on stdio).
    assert lines[0] == "call research task=yes ttl=30000"
    assert [" ".join(line.split()[:3]) for line in lines[1:]] == [
        "get task-1 working",
        "get task-1 working",
        "get task-1 working",
        "get task-1 completed",
        "result task-1",
    ]


async def test_a_failed_task_answers_what_the_call_would_have(env: Env) -> None:
    raised = await call(env.sidecar, "failing.explode", {"how": "error"})
    assert (text_of(raised), raised["isError"]) == ("database locked", True)
    assert raised["diagnostic"] == {
        "code": "tool_error",
        "operation": "call",
        "server": "failing",
        "message": "The server answered with JSON-RPC error -32603 instead of a result; its message is the content.",
        "hint": TOOL_ERROR_HINT,
    }
    reported = await call(env.sidecar, "failing.explode", {"how": "result"})
    assert (text_of(reported), reported["isError"]) == ("database locked", True)
    reported_message = "The tool reported an error; the result's content is the server's account."
    assert reported["diagnostic"]["message"] == reported_message
    assert [line.split()[0] for line in env.requests("failing")] == ["call", "get", "result"] * 2
    rows = (await env.sidecar.request("mcp/status"))["servers"]
    assert next(row["state"] for row in rows if row["name"] == "failing") == "connected"


async def test_polls_follow_the_servers_poll_interval(env: Env) -> None:
    assert text_of(await call(env.sidecar, "paced.research", {"steps": 2})) == "researched in 2 steps"
    times = poll_times(env.requests("paced"))
    assert len(times) == 3
    # pollInterval 600 ms: each tasks/get is sent at least that long after the previous answer.
    assert all(later - earlier >= 0.58 for earlier, later in itertools.pairwise(times)), times


async def test_polls_are_never_closer_than_the_floor(env: Env) -> None:
    assert text_of(await call(env.sidecar, "floor.research", {"steps": 2})) == "researched in 2 steps"
    times = poll_times(env.requests("floor"))
    assert len(times) == 3
    # pollInterval 1 ms: the sidecar still waits its floor of 250 ms.
    assert all(later - earlier >= 0.24 for earlier, later in itertools.pairwise(times)), times


async def test_optional_tools_are_tasks_only_where_the_server_takes_tasks(env: Env) -> None:
    assert text_of(await call(env.sidecar, "optional.either", {})) == "ran as a task"
    assert text_of(await call(env.sidecar, "optional.plain", {})) == "ran directly"
    assert text_of(await call(env.sidecar, "nocap.either", {})) == "ran directly"
    assert [line for line in env.requests("optional") if line.startswith("call ")] == [
        "call either task=yes ttl=30000",
        "call plain task=no ttl=None",
    ]
    assert env.requests("nocap") == ["call either task=no ttl=None"]


async def test_the_time_limit_is_timeout_ms_and_the_task_is_cancelled(env: Env) -> None:
    error = await env.sidecar.error("mcp/callTool", {"id": "short.forever", "arguments": {}, "activate": True})
    assert diagnostic_of(error) == {
        "code": "timeout",
        "operation": "call",
        "server": "short",
        "message": "The server did not answer within the time limit.",
        "hint": "Check the server's responsiveness and the applicable time limit (timeoutMs).",
    }
    lines = env.requests("short")
    assert lines[0] == "call forever task=yes ttl=1000"
    assert lines[-1] == "cancel task-1 working"


async def test_a_longer_task_ttl_lengthens_the_time_limit(env: Env) -> None:
    # timeoutMs is 1 s; four polls 500 ms apart take longer, within the task's TTL of 60 s.
    result = await call(env.sidecar, "long.research", {"steps": 4})
    assert text_of(result) == "researched in 4 steps"
    times = poll_times(env.requests("long"))
    assert times[-1] - times[0] >= 1.0
    assert not any(line.startswith("cancel ") for line in env.requests("long"))


async def test_input_required_fetches_the_result_while_the_server_asks(env: Env) -> None:
    result = await call(env.sidecar, "asking.ask", {})
    # The server's elicitation reached the client's side of the session and was answered (this
    # client offers no elicitation, so with an error) before the task completed.
    assert text_of(result) == "clarification: the client answered an error"
    assert [" ".join(line.split()[:3]) for line in env.requests("asking")] == [
        "call ask task=yes",
        "get task-1 input_required",
        "result task-1",
    ]


async def test_a_tasks_status_is_reported_on_the_work_done_token(env: Env) -> None:
    params = {"id": "research.research", "arguments": {"steps": 2}, "activate": True, "workDoneToken": "task-progress"}
    result = await env.sidecar.request("mcp/callTool", params)
    assert text_of(result) == "researched in 2 steps"
    reports: list[Any] = list(env.sidecar.lsp.progress_reports["task-progress"])
    kinds = [report.kind if hasattr(report, "kind") else report["kind"] for report in reports]
    messages = [getattr(report, "message", None) or report.get("message") for report in reports[1:-1]]
    assert (kinds[0], kinds[-1]) == ("begin", "end")
    assert messages == ["working", "step 1 of 2", "step 2 of 2", "completed"]


async def test_progress_the_server_sends_after_the_task_started_reaches_the_client(env: Env) -> None:
    params = {"id": "progressing.research", "arguments": {"steps": 2}, "activate": True, "workDoneToken": "told"}
    result = await env.sidecar.request("mcp/callTool", params)
    assert text_of(result) == "researched in 2 steps"
    reports: list[Any] = list(env.sidecar.lsp.progress_reports["told"])
    messages = [getattr(report, "message", None) or report.get("message") for report in reports[1:-1]]
    # The server's notifications/progress on the call's token, sent while it answered tasks/get,
    # each before the status that poll brought.
    assert [m for m in messages if m.startswith("progress ")] == ["progress 1 of 2", "progress 2 of 2"]
    assert messages[-1] == "completed"


async def test_cancel_request_sends_tasks_cancel(env: Env) -> None:
    await cancel_midway(env, "cancel.forever", {}, "forever-1")
    answered = "server cancel: task 'task-1': tasks/cancel answered cancelled"
    await env.sidecar.wait_for(lambda: answered in env.sidecar.log_text(), 15, "the answer to tasks/cancel")
    assert env.requests("cancel")[-1] == "cancel task-1 working"
    # The session survives: the next call works on the same connection.
    assert text_of(await call(env.sidecar, "cancel.either", {})) == "ran as a task"


# -- a task that asks the person (input_required), with an editor that answers ---------------------


async def test_input_required_questions_reach_the_editor(tmp_path: Path) -> None:
    home = tmp_path / "home"
    servers: dict[str, Any] = {"asking": fixture_stdio("tasks.py")}
    if SERVER_EVERYTHING_JS.is_file():
        servers["everything"] = {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}
    write_config(home, servers)
    asked: list[dict[str, Any]] = []

    async def elicit(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"interpretation": "historical"}}

    offer: dict[str, Any] = {"mcpCapabilities": {"elicitation": {"form": {}}}}
    async with start_sidecar(home, options=offer, answers={"mcp/elicit": elicit}) as sidecar:
        assert text_of(await call(sidecar, "asking.ask", {})) == "clarification: accept"
        assert [(q["server"], q["message"]) for q in asked] == [("asking", "Which interpretation?")]
        if "everything" not in servers:
            return
        arguments = {"topic": "tides", "ambiguous": True}
        result = await sidecar.request(
            "mcp/callTool", {"id": "everything.simulate-research-query", "arguments": arguments, "activate": True}
        )
    assert result["isError"] is False
    text = text_of(result)
    assert text.startswith("# Research Report: tides (historical)\n")
    assert "- **Clarification**: historical" in text
    assert asked[1]["server"] == "everything"
    assert asked[1]["message"].startswith('The research query "tides" could have multiple interpretations.')
