"""Every request a host may send, in both protocol eras, gets a valid result or a proper JSON-RPC error.

The table is the SDK's own (`mcp_types.methods.CLIENT_REQUESTS`): every client-to-server method
of the handshake era (2025-11-25) and of 2026-07-28. A result must validate against that
version's result schema; an error must be a JSON-RPC error the host can act on, never the
-32603 of a handler that returned something invalid. Hosts also mix eras on one connection
(Claude Code probes `server/discover`, gives up after a timeout and sends `initialize`): both
orders must end in a working session.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types.methods import CLIENT_REQUESTS, validate_server_result

from support.rawhost import HANDSHAKE, MODERN, RawHost, initialize_params, modern, raw_gateway
from support.servers import fixture_path
from support.sidecar import write_config

INTERNAL_ERROR = -32603
NOT_A_TEMPLATE = "mcp-sidecar://basic/notes://inbox/todo"


def _configure(home: Path) -> None:
    basic = [str(fixture_path("basic.py")), "stdio", "--resources", "--prompts", "--completions"]
    write_config(home, {"basic": {"command": sys.executable, "args": basic}})


def _params(method: str) -> dict[str, Any] | None:
    """A request a real host would send for `method`."""
    requests: dict[str, dict[str, Any]] = {
        "completion/complete": {
            "ref": {"type": "ref/prompt", "name": "basic__review_code"},
            "argument": {"name": "language", "value": "py"},
        },
        "logging/setLevel": {"level": "info"},
        "prompts/get": {"name": "basic__summarize_notes", "arguments": {"notes": "one, two"}},
        "resources/read": {"uri": NOT_A_TEMPLATE},
        "resources/subscribe": {"uri": NOT_A_TEMPLATE},
        "resources/unsubscribe": {"uri": NOT_A_TEMPLATE},
        "tools/call": {"name": "mcp_tools", "arguments": {"query": "echo text"}},
    }
    return requests.get(method)


def _methods(version: str) -> list[str]:
    skip = {"initialize", "server/discover", "subscriptions/listen"}  # the openings, and the stream
    return sorted(m for m, v in CLIENT_REQUESTS if v == version and m not in skip)


def _check(method: str, version: str, answer: dict[str, Any]) -> None:
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error.get("code"), int), answer
        assert isinstance(error.get("message"), str), answer
        assert error["code"] != INTERNAL_ERROR, f"{method} ({version}): {answer}"
        return
    validate_server_result(method, version, answer["result"])


async def _walk(host: RawHost, version: str) -> dict[str, dict[str, Any]]:
    answers: dict[str, dict[str, Any]] = {}
    for method in _methods(version):
        params = _params(method)
        if version == MODERN:
            params = modern(params)
        answers[method] = await host.call(method, params, timeout=60)
        _check(method, version, answers[method])
    return answers


@pytest.mark.parametrize("args", [(), ("--resources",), ("--tools", "proxy")], ids=["plain", "resources", "proxy"])
async def test_every_handshake_era_request_gets_a_valid_answer(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    _configure(home)
    async with raw_gateway(home, *args) as host:
        opened = await host.handshake()
        assert opened["protocolVersion"] == HANDSHAKE
        answers = await _walk(host, HANDSHAKE)
    assert answers["ping"] == {"jsonrpc": "2.0", "id": answers["ping"]["id"], "result": {}}
    listed = answers["resources/list"]["result"]["resources"]
    assert bool(listed) == ("--resources" in args)
    assert answers["prompts/list"]["result"]["prompts"]
    assert not answers["tools/call"]["result"]["isError"]


@pytest.mark.parametrize("args", [(), ("--resources",), ("--tools", "proxy")], ids=["plain", "resources", "proxy"])
async def test_every_2026_request_gets_a_valid_answer(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    _configure(home)
    async with raw_gateway(home, *args) as host:
        discovered = await host.result("server/discover", modern())
        validate_server_result("server/discover", MODERN, discovered)
        answers = await _walk(host, MODERN)
    templates = answers["resources/templates/list"]["result"]["resourceTemplates"]
    assert bool(templates) == ("--resources" in args)
    assert answers["resources/list"]["result"]["resultType"] == "complete"


async def test_an_unknown_method_and_bad_params_get_json_rpc_errors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _configure(home)
    async with raw_gateway(home) as host:
        await host.handshake()
        unknown = await host.call("tools/teleport", {})
        assert unknown["error"]["code"] == -32601
        bad = await host.call("tools/call", {"name": 42})
        assert bad["error"]["code"] == -32602
        listed = await host.result("tools/list")
        assert [t["name"] for t in listed["tools"]] == ["mcp_tools", "mcp_call"]


async def test_discover_then_initialize_opens_a_working_handshake_session(tmp_path: Path) -> None:
    """Claude Code's fallback: a `server/discover` it stopped waiting for, then `initialize`."""
    home = tmp_path / "home"
    _configure(home)
    async with raw_gateway(home) as host:
        await host.result("server/discover", modern())
        opened = await host.result("initialize", initialize_params("2025-06-18"))
        assert opened["protocolVersion"] == "2025-06-18"
        host.notify("notifications/initialized")
        called = await host.result("tools/call", {"name": "mcp_tools", "arguments": {"query": "echo"}})
        assert "basic.echo" in called["content"][0]["text"]
        still_modern = await host.result("tools/list", modern())
        assert [t["name"] for t in still_modern["tools"]] == ["mcp_tools", "mcp_call"]


async def test_initialize_then_a_2026_request_are_both_served(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _configure(home)
    async with raw_gateway(home) as host:
        await host.handshake()
        listed = await host.result("tools/list", modern())
        assert listed["resultType"] == "complete"
        assert [t["name"] for t in (await host.result("tools/list"))["tools"]] == ["mcp_tools", "mcp_call"]


async def test_an_unsupported_version_is_refused_with_the_versions_served(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _configure(home)
    async with raw_gateway(home) as host:
        params = modern()
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
        refused = await host.call("tools/list", params)
        assert refused["error"]["code"] == -32022
        assert MODERN in str(refused["error"].get("data"))


async def test_the_instructions_follow_the_configuration(tmp_path: Path) -> None:
    """`server/discover` is asked again by 2026-07-28 hosts: its instructions name the servers of now."""
    home = tmp_path / "home"
    _configure(home)
    async with raw_gateway(home) as host:
        first = (await host.result("server/discover", modern()))["instructions"]
        assert "Servers (for `server`; query to find their tools):\n- basic" in first
        config = json.loads((home / "mcp.json").read_text())
        config["mcpServers"]["notes"] = {"command": sys.executable, "args": ["-c", "pass"], "description": "Team notes"}
        (home / "mcp.json").write_text(json.dumps(config))

        async def named() -> bool:
            return "- notes: Team notes" in (await host.result("server/discover", modern()))["instructions"]

        async with asyncio.timeout(30):
            while not await named():
                await host.result("tools/list", modern())  # a round trip, so the watcher can see the file
