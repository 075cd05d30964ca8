"""Claude Code 2.1.332 against the gateway, driven by the fake model (tests/hosts/FINDINGS.md).

Four runs, each read by several tests: tool search on (Claude Code's default: the gateway's tools
are names the model loads with `ToolSearch`), tool search off, proxy mode, and the gateway's
`--expose auto` (the one small server's tools listed from the start, called with no search).
"""

from __future__ import annotations

from typing import Any

import pytest

from support.hosts import flows
from support.hosts.run import HostRun, can_run_hosts, run_host
from support.hosts.script import Say, Turn

UNAVAILABLE = can_run_hosts()
pytestmark = [pytest.mark.e2e, pytest.mark.hosts, pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))]

MCP_TOOLS = "mcp__sidecar__mcp_tools"
MCP_CALL = "mcp__sidecar__mcp_call"
ECHO_TOOL = "mcp__sidecar__basic__echo"


def _run(
    factory: pytest.TempPathFactory,
    name: str,
    turns: list[Turn],
    *,
    options: dict[str, Any] | None = None,
    gateway_args: tuple[str, ...] = (),
) -> HostRun:
    run = run_host(factory.mktemp(name), "claude", turns, options=options, gateway_args=gateway_args)
    assert not run.timed_out, run.report()
    return run


@pytest.fixture(scope="module")
def searching(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """Tool search on: load `mcp_tools`, query, activate, load the activated tool, call it."""
    turns = [flows.tool_search(MCP_TOOLS), *flows.native(load=flows.tool_search(ECHO_TOOL))]
    return _run(tmp_path_factory, "claude-search", turns)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """Tool search off (`ENABLE_TOOL_SEARCH=false`): every tool is offered with its schema."""
    return _run(tmp_path_factory, "claude-plain", flows.native(), options={"tool_search": False})


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """`--expose auto` (the gateway's default) with tool search off: `basic` costs far less than the
    budget, so its tools are in the first list, and the model calls one at once."""
    turns: list[Turn] = [flows.NATIVE_CALL, Say("finished")]
    return _run(
        tmp_path_factory, "claude-auto", turns, options={"tool_search": False}, gateway_args=("--expose", "auto")
    )


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    turns = [flows.tool_search(MCP_TOOLS, MCP_CALL), *flows.proxied()]
    return _run(tmp_path_factory, "claude-proxy", turns, gateway_args=("--tools", "proxy"))


def test_with_tool_search_the_model_first_sees_only_the_name_and_the_instructions(searching: HostRun) -> None:
    first = searching.turns[0]
    assert MCP_TOOLS in first.announced, searching.report()
    assert MCP_TOOLS not in first.names
    assert searching.instructions, "the gateway's handshake answer has no instructions"
    assert f"## sidecar\n{searching.instructions}" in first.system


def test_with_tool_search_the_instructions_name_the_servers(searching: HostRun) -> None:
    assert flows.DIRECTORY_LINE in searching.turns[0].system, searching.report()


def test_tool_search_loads_mcp_tools_with_the_directory(searching: HostRun) -> None:
    loaded = searching.turns[1]
    assert MCP_TOOLS in loaded.names, searching.report()
    description = next(tool.description for tool in loaded.offered if tool.name == MCP_TOOLS)
    assert flows.DIRECTORY_LINE in description


def test_with_tool_search_the_request_after_the_activation_names_the_tool(searching: HostRun) -> None:
    assert searching.relisted_before_the_activation_answer, searching.report()
    after = searching.request_after("mcp activate")
    assert after is not None, searching.report()
    assert ECHO_TOOL in after.visible, searching.report()


def test_with_tool_search_the_native_call_returns_the_servers_result(searching: HostRun) -> None:
    result = searching.result("basic__echo")
    assert result is not None, searching.report()
    assert flows.ECHO in result.text
    assert not result.is_error


def test_without_tool_search_mcp_tools_is_offered_with_the_directory(plain: HostRun) -> None:
    first = plain.turns[0]
    assert MCP_TOOLS in first.names, plain.report()
    description = next(tool.description for tool in first.offered if tool.name == MCP_TOOLS)
    assert flows.DIRECTORY_LINE in description


def test_without_tool_search_the_request_after_the_activation_offers_the_tool(plain: HostRun) -> None:
    assert plain.relisted_before_the_activation_answer, plain.report()
    after = plain.request_after("mcp activate")
    assert after is not None, plain.report()
    assert ECHO_TOOL in after.names, plain.report()


def test_without_tool_search_the_native_call_returns_the_servers_result(plain: HostRun) -> None:
    result = plain.result("basic__echo")
    assert result is not None, plain.report()
    assert flows.ECHO in result.text
    # Claude Code hands the model `structuredContent` as JSON when the result has it.
    assert result.text == '{"result":"' + flows.ECHO + '"}'


def test_the_host_re_lists_after_list_changed(plain: HostRun) -> None:
    changed = plain.trace.notifications("notifications/tools/list_changed")
    assert changed, plain.report()
    assert any(request.t > changed[0].t for request in plain.trace.requests("tools/list")), plain.report()


def test_every_request_of_the_host_gets_a_valid_answer(plain: HostRun) -> None:
    errors = [m for m in plain.trace.messages if m.direction == "out" and m.msg and "error" in m.msg]
    refused = [m for m in errors if m.msg and m.msg["error"].get("code") != -32000]  # -32000: the stop
    assert not refused, "\n".join(map(str, refused))


def test_the_gateway_stops_cleanly_when_the_host_ends(plain: HostRun) -> None:
    assert plain.gateway_exit == 0, plain.report()
    assert not plain.left_behind, plain.report()
    assert not [line for _, line in plain.trace.stderr if "Traceback" in line]


def test_proxy_mode_calls_through_mcp_call(proxy: HostRun) -> None:
    assert {MCP_TOOLS, MCP_CALL} <= set(proxy.turns[1].names), proxy.report()
    result = proxy.result("mcp_call")
    assert result is not None, proxy.report()
    assert flows.ECHO in result.text


def test_proxy_mode_sends_no_list_changed(proxy: HostRun) -> None:
    assert not proxy.trace.notifications("notifications/tools/list_changed"), proxy.report()


def test_with_expose_auto_the_first_request_offers_the_servers_tools(exposed: HostRun) -> None:
    first = exposed.turns[0]
    assert ECHO_TOOL in first.names, exposed.report()
    assert MCP_TOOLS in first.names, exposed.report()  # still there: it reads, completes, finds prompts


def test_with_expose_auto_the_native_call_needs_no_search(exposed: HostRun) -> None:
    result = exposed.result("basic__echo")
    assert result is not None, exposed.report()
    assert flows.ECHO in result.text
    assert not any(m for m in exposed.trace.requests("tools/call") if "mcp_tools" in str(m.msg)), exposed.report()
