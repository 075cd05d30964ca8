"""Background calls end to end: a call past the client's threshold stops holding the request.

Editors (pytest-lsp clients with `backgroundAfterSeconds: 0.5`) against the fixtures `basic.py`
(`slow(seconds)`: no call of several seconds ends within the threshold) and `tasks_ext.py`
(`forever()`: a 2026-07-28 task that runs until cancelled, and records the `tasks/cancel` it gets,
so a cancel is asserted from the server's side); then the gateway (`--background-after 0.5`) with
the SDK's `Client` as its host. One sidecar serves the editor tests; each test uses its own session.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from support.discovery import read_lines
from support.gateway import gateway, text_of
from support.servers import basic_stdio, fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, wait_until, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

THRESHOLD = {"backgroundAfterSeconds": 0.5}
CALL_ID = re.compile(r"call-[0-9a-f]{12}")


@dataclass(frozen=True, slots=True)
class Env:
    sidecar: SidecarClient
    home: Path
    logs: Path

    def cancels(self) -> list[str]:
        """The `tasks/cancel` requests the `forever` server got."""
        return [line for line in read_lines(self.logs / "tasks") if line.startswith("cancel ")]

    def tasks_made(self) -> int:
        """How many `forever` calls the server got (it makes a task of each)."""
        return sum(line.startswith("call forever ext=yes") for line in read_lines(self.logs / "tasks"))

    async def forever(self, sidecar: SidecarClient, session: str) -> str:
        """A background call of `tasks.forever`, once its server made the task: its call id."""
        made = self.tasks_made()
        call_id: str = (await backgrounded(sidecar, "tasks.forever", {}, session))["background"]["callId"]
        await wait_until(lambda: self.tasks_made() > made, what="the server's task")
        return call_id


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    logs = tmp_path_factory.mktemp("logs")
    servers = {
        "basic": basic_stdio(),
        "tasks": fixture_stdio("tasks_ext.py", "--log-file", str(logs / "tasks"), timeoutMs=600_000),
        # A task that never ends, under a time limit: the call fails with `timeout` in the background.
        "endless": fixture_stdio(
            "tasks_ext.py", "--log-file", str(logs / "endless"), "--ttl-ms", "500", timeoutMs=6000
        ),
    }
    write_config(home, servers)
    async with start_sidecar(home, options=THRESHOLD) as sidecar:
        yield Env(sidecar, home, logs)


async def backgrounded(
    sidecar: SidecarClient, tool_id: str, arguments: dict[str, Any], session: str, **extra: Any
) -> dict[str, Any]:
    """Call a tool that outlives the threshold; the answer's background call."""
    params = {"id": tool_id, "arguments": arguments, "activate": True, "session": session, **extra}
    result: dict[str, Any] = await sidecar.request("mcp/callTool", params)
    assert "background" in result, result
    return result


def notified(sidecar: SidecarClient, method: str, call_id: str) -> list[dict[str, Any]]:
    return [n for n in sidecar.notifications[method] if n["callId"] == call_id]


async def test_a_slow_call_goes_to_the_background_and_the_editor_fetches_its_result_once(env: Env) -> None:
    sidecar = env.sidecar
    answer = await backgrounded(sidecar, "basic.slow", {"seconds": 3}, "editor")
    call = answer["background"]
    call_id = call["callId"]
    assert CALL_ID.fullmatch(call_id), call
    assert (call["tool"], call["session"], call["status"]) == ("basic.slow", "editor", "running")
    assert (answer["server"], answer["tool"], answer["isError"]) == ("basic", "slow", False)
    assert f'mcp_tools({{"result": "{call_id}"}})' in answer["content"][0]["text"]
    await sidecar.wait_for(lambda: bool(notified(sidecar, "mcp/call/background", call_id)), what="mcp/call/background")
    listed = await sidecar.request("mcp/calls/list", {})
    assert [c["callId"] for c in listed["calls"]] == [call_id]
    fetched = await sidecar.request("mcp/calls/result", {"callId": call_id, "wait": 60})
    assert fetched["call"]["status"] == "completed"
    assert fetched["result"]["content"] == [{"type": "text", "text": "done"}]
    await sidecar.wait_for(lambda: bool(notified(sidecar, "mcp/call/finished", call_id)), what="mcp/call/finished")
    assert notified(sidecar, "mcp/call/finished", call_id)[0]["status"] == "completed"
    # Delivered once: the call is gone from the list and a second fetch finds nothing.
    assert (await sidecar.request("mcp/calls/list", {}))["calls"] == []
    again = diagnostic_of(await sidecar.error("mcp/calls/result", {"callId": call_id}))
    assert (again["code"], again["operation"]) == ("call_not_found", "calls result")


async def test_a_model_is_told_the_call_id_and_fetches_the_result_with_mcp_tools(env: Env) -> None:
    sidecar = env.sidecar
    answer = await backgrounded(sidecar, "basic.slow", {"seconds": 3}, "chat", forModel=True)
    call_id = answer["background"]["callId"]
    assert f'Get its result with mcp_tools({{"result": "{call_id}"}})' in answer["text"]
    # Another chat's model never finds it.
    other = await sidecar.request("mcp/modelTool/invoke", {"arguments": {"result": call_id}, "session": "other"})
    assert other["isError"] is True
    assert other["details"]["diagnostic"]["code"] == "call_not_found"
    got = await sidecar.request(
        "mcp/modelTool/invoke", {"arguments": {"result": call_id, "wait": 60}, "session": "chat"}
    )
    assert (got["isError"], got["text"]) == (False, "done")
    assert got["details"]["call"]["status"] == "completed"
    again = await sidecar.request("mcp/modelTool/invoke", {"arguments": {"result": call_id}, "session": "chat"})
    assert again["isError"] is True
    assert again["details"]["diagnostic"]["code"] == "call_not_found"
    # The editor's fetch finds nothing either: the result went to the model.
    assert diagnostic_of(await sidecar.error("mcp/calls/result", {"callId": call_id}))["code"] == "call_not_found"


async def test_a_model_asking_too_early_is_told_the_call_still_runs(env: Env) -> None:
    sidecar = env.sidecar
    answer = await backgrounded(sidecar, "basic.slow", {"seconds": 3}, "early", forModel=True)
    call_id = answer["background"]["callId"]
    early = await sidecar.request(
        "mcp/modelTool/invoke", {"arguments": {"result": call_id, "wait": 0}, "session": "early"}
    )
    assert early["isError"] is False
    assert early["text"].startswith(f"Call {call_id} (basic.slow) is still running")
    assert early["details"]["call"]["status"] == "running"
    done = await sidecar.request("mcp/calls/result", {"callId": call_id, "wait": 60})
    assert done["result"]["content"][0]["text"] == "done"


async def test_cancel_stops_a_background_task_at_its_server(env: Env) -> None:
    sidecar = env.sidecar
    before = len(env.cancels())
    call_id = await env.forever(sidecar, "cancelling")
    cancelled = await sidecar.request("mcp/calls/cancel", {"callId": call_id})
    assert cancelled["callId"] == call_id
    await sidecar.wait_for(lambda: bool(notified(sidecar, "mcp/call/finished", call_id)), what="mcp/call/finished")
    assert notified(sidecar, "mcp/call/finished", call_id)[0]["status"] == "cancelled"
    await wait_until(lambda: len(env.cancels()) > before, what="tasks/cancel at the server")
    assert env.cancels()[-1].endswith(" working")
    fetched = await sidecar.request("mcp/calls/result", {"callId": call_id})
    assert fetched == {"call": fetched["call"]}
    assert fetched["call"]["status"] == "cancelled"


async def test_a_task_that_never_ends_is_kept_failed_with_its_timeout(env: Env) -> None:
    sidecar = env.sidecar
    call_id = (await backgrounded(sidecar, "endless.forever", {}, "endless"))["background"]["callId"]
    fetched = await sidecar.request("mcp/calls/result", {"callId": call_id, "wait": 60})
    assert fetched["call"]["status"] == "failed"
    assert (fetched["diagnostic"]["code"], fetched["diagnostic"]["server"]) == ("timeout", "endless")
    assert "result" not in fetched
    assert read_lines(env.logs / "endless")[-1] == "cancel task-1 working"


async def test_a_session_end_releases_its_calls_and_cancels_the_running_ones(env: Env) -> None:
    sidecar = env.sidecar
    before = len(env.cancels())
    call_id = await env.forever(sidecar, "ending")
    kept = (await backgrounded(sidecar, "basic.slow", {"seconds": 2}, "staying"))["background"]["callId"]
    await sidecar.request("mcp/session/end", {"session": "ending"})
    await wait_until(lambda: len(env.cancels()) > before, what="tasks/cancel at the server")
    assert [c["callId"] for c in (await sidecar.request("mcp/calls/list", {}))["calls"]] == [kept]
    assert diagnostic_of(await sidecar.error("mcp/calls/result", {"callId": call_id}))["code"] == "call_not_found"
    assert (await sidecar.request("mcp/calls/result", {"callId": kept, "wait": 60}))["call"]["status"] == "completed"


async def test_another_client_never_sees_the_calls_and_a_clients_end_releases_its_own(env: Env) -> None:
    mine = (await backgrounded(env.sidecar, "basic.slow", {"seconds": 5}, "mine"))["background"]["callId"]
    before = len(env.cancels())
    async with start_sidecar(env.home, options=THRESHOLD) as other:  # the same user's engine, another client
        assert (await other.request("mcp/calls/list", {}))["calls"] == []
        refused = diagnostic_of(await other.error("mcp/calls/result", {"callId": mine}))
        assert refused["code"] == "call_not_found"
        assert diagnostic_of(await other.error("mcp/calls/cancel", {"callId": mine}))["code"] == "call_not_found"
        theirs = await env.forever(other, "mine")
        assert [c["callId"] for c in (await other.request("mcp/calls/list", {}))["calls"]] == [theirs]
    # The other client went: its running task was cancelled at the server; the first client's call goes on.
    await wait_until(lambda: len(env.cancels()) > before, what="tasks/cancel when the client ended")
    assert [c["callId"] for c in (await env.sidecar.request("mcp/calls/list", {}))["calls"]] == [mine]
    done = await env.sidecar.request("mcp/calls/result", {"callId": mine, "wait": 60})
    assert done["call"]["status"] == "completed"


async def test_a_call_that_may_not_go_to_the_background_holds_its_request(env: Env) -> None:
    params = {"id": "basic.slow", "arguments": {"seconds": 1}, "activate": True, "session": "held", "background": False}
    result = await env.sidecar.request("mcp/callTool", params)
    assert "background" not in result
    assert result["content"] == [{"type": "text", "text": "done"}]


async def test_bad_params_are_refused(env: Env) -> None:
    sidecar = env.sidecar
    assert (
        diagnostic_of(await sidecar.error("mcp/calls/result", {"callId": "x", "wait": 61}))["code"] == "invalid_params"
    )
    assert diagnostic_of(await sidecar.error("mcp/calls/cancel", {}))["code"] == "invalid_params"
    wrong = await sidecar.request("mcp/modelTool/invoke", {"arguments": {"query": "x", "wait": 1}})
    assert wrong["details"]["diagnostic"]["code"] == "invalid_params"


# ---------------------------------------------------------------- the gateway


async def test_the_gateway_answers_a_hosts_long_call_with_the_call_id(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    async with gateway(home, "--background-after", "0.5") as (host, changes):
        before = changes.count
        loaded = await host.call_tool("mcp_tools", {"activate": ["basic.slow"]})
        assert not loaded.is_error, text_of(loaded)
        await changes.next(before)
        answer = await host.call_tool("basic__slow", {"seconds": 3})
        text = text_of(answer)
        found = CALL_ID.search(text)
        assert found is not None, text
        # slow's output schema promises a structured result the answer cannot carry yet: it reads as an
        # error that says it is none (the host checks every other answer against the schema).
        assert answer.is_error
        assert "the call did not fail" in text
        assert f'mcp_tools({{"result": "{found.group()}"}})' in text
        got = await host.call_tool("mcp_tools", {"result": found.group(), "wait": 60})
        again = await host.call_tool("mcp_tools", {"result": found.group()})
        quick = await host.call_tool("basic__slow", {"seconds": 0})
    assert (got.is_error, text_of(got)) == (False, "done")
    assert again.is_error
    assert "call_not_found" in text_of(again)
    assert text_of(quick) == "done"  # a call within the threshold is answered as ever
