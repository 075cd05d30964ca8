"""The session budget end to end (issue 34, point 2): with real processes, an activation over the budget
deactivates the least recently used tools (activated or called), and the model is told which went and
how to get them back: an editor over the protocol (`initializationOptions.sessionBudget`, `mcp/activate`,
`mcp_tools`, `mcp/activeToolsChanged`, a refused `mcp/callTool`), and a gateway host (`sessionBudget` in
the config file, `--max-active-tools` over it, `tools/list_changed`, a refused call of the evicted native
name). Without a budget (the default) nothing is ever deactivated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_sidecar.protocol import methods
from support.gateway import gateway, text_of, tool_names
from support.rawhost import raw_gateway
from support.servers import basic_stdio
from support.sidecar import diagnostic_of, start_sidecar, write_config

SESSION = "chat"
GONE_LINE = (
    "Session budget (at most 2 tools): deactivated the least recently used: basic.add. "
    'To use one again, activate it again by its id (activate ["basic.add"]).'
)


async def activate(sidecar: Any, *ids: str) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request("mcp/activate", {"ids": list(ids), "session": SESSION})
    return result


async def test_an_editor_s_budget_deactivates_the_least_recently_used_and_tells_the_model(tmp_path: Path) -> None:
    write_config(tmp_path, {"basic": basic_stdio()})
    options = {"sessionBudget": {"maxTools": 2}}
    async with start_sidecar(tmp_path, options=options) as sidecar:
        await activate(sidecar, "basic.echo", "basic.add")
        called = await sidecar.request(
            "mcp/callTool", {"id": "basic.echo", "arguments": {"text": "hi"}, "session": SESSION}
        )
        assert not called["isError"]  # echo is now used more recently than add

        done = await activate(sidecar, "basic.cwd")

        assert done["evicted"] == ["basic.add"]
        assert done["budget"] == {"maxTools": 2, "maxTokens": None}
        assert done["overBudget"] is False
        assert GONE_LINE in done["text"].splitlines()
        active = await sidecar.request("mcp/activeTools", {"session": SESSION})
        assert [t["id"] for t in active["tools"]] == ["basic.echo", "basic.cwd"]
        assert active["budget"] == {"maxTools": 2, "maxTokens": None}
        assert (await sidecar.request("mcp/status"))["budget"] == {"maxTools": 2, "maxTokens": None}
        await sidecar.wait_for(
            lambda: (
                {"session": SESSION, "removed": ["basic.add"], "reason": "session budget"}
                in sidecar.notifications[methods.ACTIVE_TOOLS_CHANGED]
            ),
            what="mcp/activeToolsChanged for the evicted tool",
        )

        error = await sidecar.error(
            "mcp/callTool", {"id": "basic.add", "arguments": {"a": 1, "b": 2}, "session": SESSION}
        )
        diag = diagnostic_of(error)
        assert diag["code"] == "tool_not_active"
        assert diag["message"] == (
            "Tool 'basic.add' was deactivated by the session budget (least recently used): activate it again."
        )

        # The chat's model, through `mcp_tools`: the answer names what went (echo: least recently used now).
        invoked = await sidecar.request(
            "mcp/modelTool/invoke", {"arguments": {"activate": ["basic.add"]}, "session": SESSION}
        )
        assert not invoked["isError"]
        assert invoked["details"]["evicted"] == ["basic.echo"]
        assert (
            "Session budget (at most 2 tools): deactivated the least recently used: basic.echo. "
            'To use one again, activate it again by its id (activate ["basic.echo"]).'
        ) in invoked["text"].splitlines()
        again = await sidecar.request(
            "mcp/callTool", {"id": "basic.add", "arguments": {"a": 1, "b": 2}, "session": SESSION}
        )
        assert not again["isError"]


async def test_an_editor_without_a_budget_keeps_every_tool(tmp_path: Path) -> None:
    write_config(tmp_path, {"basic": basic_stdio()})
    async with start_sidecar(tmp_path) as sidecar:
        for tool in ("echo", "add", "cwd", "get_env"):
            done = await activate(sidecar, f"basic.{tool}")
            assert (done["evicted"], done["budget"], done["overBudget"]) == ([], None, False)
            assert "budget" not in done["text"]
        active = await sidecar.request("mcp/activeTools", {"session": SESSION})
        assert len(active["tools"]) == 4
        assert active["budget"] is None
        assert (await sidecar.request("mcp/status"))["budget"] is None
        assert sidecar.notifications[methods.ACTIVE_TOOLS_CHANGED] == []


def write_home(home: Path, document: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"basic": basic_stdio()}, **document}), encoding="utf-8")


async def test_a_gateway_host_is_told_and_a_call_of_the_evicted_tool_says_how_to_get_it_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_home(home, {"sessionBudget": {"maxTools": 5}})  # the command line's limit wins
    async with gateway(home, "--max-active-tools", "2") as (host, changes):
        text_of(await host.call_tool("mcp_tools", {"activate": ["basic.echo", "basic.add"]}))
        echoed = await host.call_tool("basic__echo", {"text": "hi"})
        assert text_of(echoed) == "hi"
        seen = changes.count

        answer = text_of(await host.call_tool("mcp_tools", {"activate": ["basic.cwd"]}))

        assert (
            "Session budget (at most 2 tools): deactivated the least recently used: basic.add (basic__add). "
            'To use one again, activate it again by its id (activate ["basic.add"]).'
        ) in answer.splitlines()
        await changes.next(seen)  # tools/list_changed
        assert await tool_names(host) == ["mcp_tools", "mcp_call", "basic__echo", "basic__cwd"]

        refused = await host.call_tool("basic__add", {"a": 1, "b": 2})
        assert refused.is_error
        assert text_of(refused) == (
            "basic: [tool_not_active] basic__add was deactivated by the session budget (the least recently used "
            'tools go first to make room). Activate it again: mcp_tools({"activate": ["basic.add"]})'
        )
        back = text_of(await host.call_tool("mcp_tools", {"activate": ["basic.add"]}))
        assert "deactivated the least recently used: basic.echo (basic__echo)" in back
        assert text_of(await host.call_tool("basic__add", {"a": 1, "b": 2})) == "3"


async def test_a_gateway_without_a_budget_keeps_every_tool(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_home(home, {})
    async with gateway(home) as (host, _):
        for tool in ("echo", "add", "cwd", "get_env"):
            answer = text_of(await host.call_tool("mcp_tools", {"activate": [f"basic.{tool}"]}))
            assert "budget" not in answer
        assert await tool_names(host) == [
            "mcp_tools",
            "mcp_call",
            "basic__echo",
            "basic__add",
            "basic__cwd",
            "basic__get_env",
        ]


def raw_text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


async def test_a_host_that_does_not_relist_is_told_too(tmp_path: Path) -> None:
    """A host that never lists its tools again: the answer re-worded for `mcp_call` keeps the budget's lines."""
    home = tmp_path / "home"
    write_home(home, {})
    async with raw_gateway(home, "--list-wait", "0.3", "--max-active-tools", "1") as host:
        await host.handshake()
        await host.result("tools/list")
        activate = {"name": "mcp_tools", "arguments": {"activate": ["basic.echo", "basic.add"]}}

        first = raw_text(await host.result("tools/call", activate))

        assert "Your host has not added the loaded tools to your tools: call each with mcp_call" in first
        assert first.splitlines()[-1] == (
            "The tools of this activation alone exceed the session budget (at most 1 tool): they are active all "
            "the same, and every other tool was deactivated."
        )
        activate = {"name": "mcp_tools", "arguments": {"activate": ["basic.cwd"]}}
        second = raw_text(await host.result("tools/call", activate))
        went = next(line for line in second.splitlines() if line.startswith("Session budget (at most 1 tool)"))
        assert sorted(went.split(": ", 2)[2].split(". To use")[0].split(", ")) == ["basic.add", "basic.echo"]
        call = {"name": "mcp_call", "arguments": {"id": "basic.echo", "arguments": {"text": "hi"}}}
        refused = await host.result("tools/call", call)
        assert refused["isError"] is True
        assert raw_text(refused) == (
            "basic: [tool_not_active] basic.echo was deactivated by the session budget (the least recently used "
            'tools go first to make room). Activate it again: mcp_tools({"activate": ["basic.echo"]})'
        )
