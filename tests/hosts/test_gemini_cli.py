"""Gemini CLI 0.61.0 against the gateway, driven by the fake model (tests/hosts/FINDINGS.md).

Two runs, each read by several tests: native tools, and proxy mode. Gemini CLI names a server's
tools `mcp_<server>_<tool>` and registers a re-listed tool some time after `tools/list` returns.
"""

from __future__ import annotations

import pytest

from support.hosts import flows
from support.hosts.run import HostRun, can_run_hosts, run_host
from support.hosts.script import Turn

UNAVAILABLE = can_run_hosts()
pytestmark = [pytest.mark.e2e, pytest.mark.hosts, pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))]

MCP_TOOLS = "mcp_sidecar_mcp_tools"
MCP_CALL = "mcp_sidecar_mcp_call"
ECHO_TOOL = "mcp_sidecar_basic__echo"


def _run(factory: pytest.TempPathFactory, name: str, turns: list[Turn], *gateway_args: str) -> HostRun:
    run = run_host(factory.mktemp(name), "gemini", turns, gateway_args=gateway_args)
    assert not run.timed_out, run.report()
    return run


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    return _run(tmp_path_factory, "gemini-native", flows.native())


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    return _run(tmp_path_factory, "gemini-proxy", flows.proxied(), "--tools", "proxy")


def test_mcp_tools_is_offered_with_the_directory(native: HostRun) -> None:
    first = native.turns[0]
    assert MCP_TOOLS in first.names, native.report()
    description = next(tool.description for tool in first.offered if tool.name == MCP_TOOLS)
    assert flows.DIRECTORY_LINE in description


def test_the_instructions_reach_the_first_user_message(native: HostRun) -> None:
    assert native.instructions, native.report()
    first = native.turns[0]
    opening = first.body["contents"][0]
    assert opening["role"] == "user"
    text = "\n".join(str(part.get("text", "")) for part in opening["parts"])
    assert "instructions provided by the tool server 'sidecar'" in text
    assert native.instructions in text
    assert native.instructions not in first.system


def test_the_instructions_name_the_servers(native: HostRun) -> None:
    assert native.instructions is not None
    assert flows.DIRECTORY_LINE in native.instructions, native.report()


def test_the_request_after_the_activation_offers_the_tool(native: HostRun) -> None:
    assert native.relisted_before_the_activation_answer, native.report()
    after = native.request_after("mcp activate")
    assert after is not None, native.report()
    assert ECHO_TOOL in after.names, native.report()


def test_the_native_call_returns_the_servers_result(native: HostRun) -> None:
    result = native.result("basic__echo")
    assert result is not None, native.report()
    # Gemini CLI reads the text content (not `structuredContent`) and wraps it as untrusted.
    assert result.text == '{"output": "<untrusted_context>\\n' + flows.ECHO + '\\n</untrusted_context>"}'


def test_the_gateway_stops_cleanly_when_the_host_ends(native: HostRun) -> None:
    assert native.gateway_exit == 0, native.report()
    assert not native.left_behind, native.report()
    assert not [line for _, line in native.trace.stderr if "Traceback" in line]


def test_proxy_mode_calls_through_mcp_call(proxy: HostRun) -> None:
    assert {MCP_TOOLS, MCP_CALL} <= set(proxy.turns[0].names), proxy.report()
    result = proxy.result("mcp_call")
    assert result is not None, proxy.report()
    assert flows.ECHO in result.text


def test_proxy_mode_sends_no_list_changed(proxy: HostRun) -> None:
    assert not proxy.trace.notifications("notifications/tools/list_changed"), proxy.report()
