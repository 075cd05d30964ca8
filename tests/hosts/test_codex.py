"""Codex 0.171.0 against the gateway, driven by the fake model (tests/hosts/FINDINGS.md).

Three runs, each read by several tests: Codex's defaults (it never lists tools again after its
start), its `mcp_tool_list_changed` feature flag on (it re-lists after `list_changed`), and proxy
mode. Codex puts a server's tools in one Responses namespace `mcp__sidecar`; the fake model's
names join namespace and tool with `__`.
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
LIST_CHANGED_FLAG = "mcp_tool_list_changed"


def _run(
    factory: pytest.TempPathFactory,
    name: str,
    turns: list[Turn],
    *,
    options: dict[str, Any] | None = None,
    gateway_args: tuple[str, ...] = (),
) -> HostRun:
    run = run_host(factory.mktemp(name), "codex", turns, options=options, gateway_args=gateway_args)
    assert not run.timed_out, run.report()
    return run


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """Codex as installed: query, activate, then call the tool through `mcp_call` as the answer says."""
    return _run(tmp_path_factory, "codex-default", [flows.QUERY, flows.ACTIVATE, flows.PROXY_CALL, Say("finished")])


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    return _run(tmp_path_factory, "codex-flag", flows.native(), options={"features": [LIST_CHANGED_FLAG]})


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    return _run(tmp_path_factory, "codex-proxy", flows.proxied(), gateway_args=("--tools", "proxy"))


def test_mcp_tools_is_offered_with_the_directory_in_the_servers_namespace(default: HostRun) -> None:
    first = default.turns[0]
    assert MCP_TOOLS in first.names, default.report()
    description = next(tool.description for tool in first.offered if tool.name == MCP_TOOLS)
    assert flows.DIRECTORY_LINE in description
    # The gateway's instructions are the namespace's description: what the model reads of the server.
    namespaces = {t["name"]: t.get("description") for t in first.body["tools"] if t.get("type") == "namespace"}
    assert default.instructions
    assert namespaces["mcp__sidecar"] == default.instructions


def test_the_namespace_description_names_the_servers(default: HostRun) -> None:
    assert default.instructions is not None
    assert flows.DIRECTORY_LINE in default.instructions, default.report()


def test_by_default_codex_lists_the_tools_once(default: HostRun) -> None:
    """Codex 0.171.0 ignores `list_changed` unless its feature flag is on."""
    assert default.trace.notifications("notifications/tools/list_changed"), default.report()
    assert len(default.trace.requests("tools/list")) == 1, default.report()


def test_by_default_the_activation_answer_leads_to_mcp_call(default: HostRun) -> None:
    after = default.request_after("mcp activate")
    assert after is not None, default.report()
    activation = next(res.text for res in after.results if "mcp activate" in res.text)
    assert "mcp_call" in activation, default.report()
    assert MCP_CALL in after.names, default.report()


def test_by_default_the_call_through_mcp_call_returns_the_servers_result(default: HostRun) -> None:
    result = default.result("mcp_call")
    assert result is not None, default.report()
    assert flows.ECHO in result.text


def test_with_the_flag_codex_re_lists_after_list_changed(flagged: HostRun) -> None:
    changed = flagged.trace.notifications("notifications/tools/list_changed")
    assert changed, flagged.report()
    assert any(request.t > changed[0].t for request in flagged.trace.requests("tools/list")), flagged.report()


def test_with_the_flag_codex_lists_again_only_once_the_running_call_is_answered(flagged: HostRun) -> None:
    """A `list_changed` that arrives while the activation runs waits for its answer: Codex 0.171
    cannot list again before the gateway answers, however long the gateway waits for it."""
    activation = next(m for m in flagged.trace.requests("tools/call") if "activate" in str(m.msg))
    answer = flagged.trace.answer(activation)
    assert answer is not None, flagged.report()
    relist = [m for m in flagged.trace.requests("tools/list") if m.t > activation.t]
    assert relist, flagged.report()
    assert relist[0].t >= answer.t, flagged.report()


def test_with_the_flag_the_request_after_the_activation_offers_the_tool(flagged: HostRun) -> None:
    after = flagged.request_after("mcp activate")
    assert after is not None, flagged.report()
    assert ECHO_TOOL in after.names, flagged.report()


def test_with_the_flag_the_native_call_returns_the_servers_result(flagged: HostRun) -> None:
    result = flagged.result("basic__echo")
    assert result is not None, flagged.report()
    # Codex puts "Wall time: …\nOutput:" first, then `structuredContent` as JSON when the result has it.
    assert result.text.startswith("Wall time: ")
    assert result.text.endswith('\n{"result":"' + flows.ECHO + '"}')


def test_the_gateway_leaves_no_process_when_the_host_ends(flagged: HostRun) -> None:
    """Codex closes the gateway's input and sends SIGTERM at once, then kills it as `codex exec`
    ends, often before its exit can be seen: what must hold is that nothing is left running."""
    assert flagged.trace.event("stdin closed") is not None, flagged.report()
    assert not flagged.left_behind, flagged.report()
    assert flagged.gateway_exit in (0, None), flagged.report()
    assert not [line for _, line in flagged.trace.stderr if "Traceback" in line]


def test_proxy_mode_calls_through_mcp_call(proxy: HostRun) -> None:
    assert {MCP_TOOLS, MCP_CALL} <= set(proxy.turns[0].names), proxy.report()
    result = proxy.result("mcp_call")
    assert result is not None, proxy.report()
    assert flows.ECHO in result.text


def test_proxy_mode_sends_no_list_changed(proxy: HostRun) -> None:
    assert not proxy.trace.notifications("notifications/tools/list_changed"), proxy.report()
