"""Connections end to end: stdio and Streamable HTTP in both protocol eras, on-demand starts,
reconnect, configuration problems, and `get` never revealing a connection value.

One sidecar (and one HTTP fixture server) serves the module: every server start costs seconds
of CPU, and each test uses servers of its own. Shutting the sidecar down at the end must stop
every server process it started.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from support.servers import (
    SERVER_EVERYTHING_JS,
    basic_stdio,
    fixture_path,
    http_server,
    pid_alive,
    server_everything_http,
    started_pids,
)
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, wait_until, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

BASIC_TOOLS = {"echo", "add", "get_env", "fail", "slow", "crash", "cwd", "redefine"}
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ENV_VALUE = "env-value-8841"
ARG_VALUE = "arg-value-5150"
HEADER_VALUE = "header-value-3307"

needs_server_everything = pytest.mark.skipif(
    not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci` to install server-everything"
)


@dataclass(frozen=True, slots=True)
class Setup:
    sidecar: SidecarClient
    counters: Path
    http_url: str

    def starts(self, server: str) -> list[int]:
        return started_pids(self.counters / server)


def module_servers(counters: Path, http_url: str, everything_url: str | None) -> dict[str, Any]:
    def counted(name: str, *args: str, **options: object) -> dict[str, object]:
        return basic_stdio("--counter-file", str(counters / name), *args, **options)

    servers: dict[str, Any] = {
        "stdio-legacy": counted("stdio-legacy", protocol="legacy"),
        "stdio-auto": counted("stdio-auto", protocol="auto"),
        "http-legacy": {"url": http_url, "protocol": "legacy"},
        "http-auto": {"url": http_url},
        "secretive": counted("secretive", "--stderr-line", ARG_VALUE, cwd="sub", env={"API_TOKEN": ENV_VALUE}),
        "secretive-http": {"url": http_url, "headers": {"Authorization": f"Bearer {HEADER_VALUE}", "X-Team": "t9"}},
        "on-demand": counted("on-demand"),
        "reconnects": counted("reconnects"),
        "needs-var": counted("needs-var", "--stderr-line", "${MCP_SIDECAR_TEST_UNSET_VAR}"),
        "neighbour": {"url": http_url},
        "slow-http": {"url": http_url, "timeoutMs": 1500},
        "off": counted("off", disabled=True),
    }
    if SERVER_EVERYTHING_JS.is_file():
        servers["everything-stdio"] = {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}
        servers["everything-http"] = {"url": everything_url}
    return servers


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server("basic.py") as url:
        yield url


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str | None]:
    if not SERVER_EVERYTHING_JS.is_file():
        yield None
        return
    with server_everything_http() as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(
    tmp_path_factory: pytest.TempPathFactory, http_url: str, everything_url: str | None
) -> AsyncIterator[Setup]:
    home = tmp_path_factory.mktemp("home")
    counters = tmp_path_factory.mktemp("counters")
    project = tmp_path_factory.mktemp("project")
    (project / "sub").mkdir()
    write_config(home, module_servers(counters, http_url, everything_url))
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        yield Setup(sidecar, counters, http_url)
    pids = [pid for counter in counters.iterdir() for pid in started_pids(counter)]
    await wait_until(lambda: not any(pid_alive(p) for p in pids), within=10, what="server processes to exit")


@pytest.fixture
def sidecar(setup: Setup) -> SidecarClient:
    return setup.sidecar


def row_of(status: dict[str, Any], name: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [row for row in status["servers"] if row["name"] == name]
    [row] = rows
    return row


async def assert_connects(sidecar: SidecarClient, name: str, version: str) -> None:
    """From idle, a tools listing connects (idle → connecting → connected) in the expected era."""
    assert row_of(await sidecar.request("mcp/status"), name)["state"] == "idle"
    tools = await sidecar.request("mcp/server/tools", {"server": name})
    assert {tool["name"] for tool in tools["tools"]} == BASIC_TOOLS
    assert {tool["id"] for tool in tools["tools"]} == {f"{name}.{tool}" for tool in BASIC_TOOLS}
    assert (tools["server"], tools["source"], tools["hiddenByFilters"]) == (name, "live", 0)
    await sidecar.wait_for(lambda: "connected" in sidecar.states(name), timeout=10, what="connected notification")
    assert sidecar.states(name)[:2] == ["connecting", "connected"]
    row = row_of(await sidecar.request("mcp/status"), name)
    assert row["state"] == "connected"
    assert row["protocolVersion"] == version
    assert row["catalog"]["tools"] == len(BASIC_TOOLS)
    assert row["lastDiagnostic"] is None
    get = await sidecar.request("mcp/server/get", {"server": name})
    assert get["protocol"]["negotiated"] == version

    assert await sidecar.request("mcp/activate", {"ids": [f"{name}.add"], "session": name})
    sent = len(sidecar.notifications["mcp/serverStatus"])
    for _ in range(3):
        result = await sidecar.request(
            "mcp/callTool", {"id": f"{name}.add", "arguments": {"a": 20, "b": 22}, "session": name}
        )
        assert (result["isError"], result["content"][0]["text"]) == (False, "42")
    # At most the row's new loaded-tool count; calls that change nothing notify nothing.
    rows = sidecar.notifications["mcp/serverStatus"][sent:]
    assert [(row["name"], row["state"], row["loaded"]) for row in rows] in ([], [(name, "connected", 1)])


@pytest.mark.parametrize(("server", "version"), [("stdio-legacy", LEGACY), ("stdio-auto", MODERN)])
async def test_stdio_server_connects_in_each_protocol_mode(sidecar: SidecarClient, server: str, version: str) -> None:
    await assert_connects(sidecar, server, version)


@pytest.mark.parametrize(("server", "version"), [("http-legacy", LEGACY), ("http-auto", MODERN)])
async def test_http_server_connects_in_each_protocol_mode(sidecar: SidecarClient, server: str, version: str) -> None:
    await assert_connects(sidecar, server, version)


async def test_get_hides_every_connection_value(setup: Setup) -> None:
    sidecar = setup.sidecar
    await sidecar.request("mcp/server/tools", {"server": "secretive-http"})
    local = await sidecar.request("mcp/server/get", {"server": "secretive"})
    web = await sidecar.request("mcp/server/get", {"server": "secretive-http"})

    assert local["transport"] == "stdio"
    assert local["connection"] == {
        "command": "hidden",
        "args": "hidden (6 values)",
        "cwd": "hidden",
        "env": {"API_TOKEN": "hidden"},
    }
    assert local["authentication"]["credentials"] == "externally managed"
    assert web["transport"] == "http"
    assert web["connection"] == {"url": "hidden", "headers": {"Authorization": "hidden", "X-Team": "hidden"}}
    assert web["authentication"]["kind"] == "header"
    assert web["status"]["state"] == "connected"
    text = json.dumps([local, web])
    for value in (
        sys.executable,
        str(fixture_path("basic.py")),
        str(setup.counters),
        ARG_VALUE,
        '"sub"',
        ENV_VALUE,
        setup.http_url,
        "127.0.0.1",
        HEADER_VALUE,
        "t9",
    ):
        assert value not in text, value


@needs_server_everything
@pytest.mark.parametrize("server", ["everything-stdio", "everything-http"])
async def test_server_everything(sidecar: SidecarClient, server: str) -> None:
    tools = await sidecar.request("mcp/server/tools", {"server": server})
    assert {"echo", "get-sum"} <= {tool["name"] for tool in tools["tools"]}
    activated = await sidecar.request("mcp/activate", {"ids": [f"{server}.echo"]})
    assert [(r["id"], r["status"]) for r in activated["results"]] == [(f"{server}.echo", "loaded")]
    assert [tool["id"] for tool in activated["tools"]] == [f"{server}.echo"]
    assert "message" in activated["tools"][0]["inputSchema"]["properties"]
    result = await sidecar.request("mcp/callTool", {"id": f"{server}.echo", "arguments": {"message": "hi there"}})
    assert result["isError"] is False
    assert "hi there" in result["content"][0]["text"]
    assert row_of(await sidecar.request("mcp/status"), server)["state"] == "connected"


async def test_connections_start_on_demand_once(setup: Setup) -> None:
    sidecar = setup.sidecar
    row = row_of(await sidecar.request("mcp/status"), "on-demand")
    assert (row["state"], row["catalog"]["tools"], row["protocolVersion"]) == ("idle", None, None)
    await sidecar.request("mcp/server/get", {"server": "on-demand"})
    await sidecar.request("mcp/server/logs", {"server": "on-demand"})
    assert not (setup.counters / "on-demand").exists()

    # Concurrent first requests share one connection attempt.
    await asyncio.gather(*(sidecar.request("mcp/server/tools", {"server": "on-demand"}) for _ in range(3)))
    assert len(setup.starts("on-demand")) == 1
    await sidecar.request("mcp/server/tools", {"server": "on-demand"})
    await sidecar.request("mcp/activate", {"ids": ["on-demand.echo"]})
    result = await sidecar.request("mcp/callTool", {"id": "on-demand.echo", "arguments": {"text": "again"}})
    assert result["content"][0]["text"] == "again"
    assert len(setup.starts("on-demand")) == 1
    assert sidecar.states("on-demand") == ["connecting", "connected"]


async def test_reconnect_replaces_the_connection(setup: Setup) -> None:
    sidecar = setup.sidecar
    row = await sidecar.request("mcp/server/reconnect", {"server": "reconnects"})
    assert (row["name"], row["state"], row["catalog"]["tools"]) == ("reconnects", "connected", len(BASIC_TOOLS))
    [first] = setup.starts("reconnects")

    row = await sidecar.request("mcp/server/reconnect", {"server": "reconnects"})
    assert (row["state"], row["catalog"]["tools"], row["protocolVersion"]) == ("connected", len(BASIC_TOOLS), MODERN)
    pids = setup.starts("reconnects")
    assert len(pids) == 2
    await wait_until(lambda: not pid_alive(first), within=10, what="the replaced server to exit")
    assert pid_alive(pids[1])
    assert sidecar.states("reconnects") == ["connecting", "connected", "idle", "connecting", "connected"]


async def test_missing_variable_stops_only_that_server(setup: Setup) -> None:
    sidecar = setup.sidecar
    error = await sidecar.error("mcp/server/tools", {"server": "needs-var"})
    assert diagnostic_of(error)["code"] == "configuration_invalid"
    assert (diagnostic_of(error)["server"], diagnostic_of(error)["operation"]) == ("needs-var", "tools")
    assert "MCP_SIDECAR_TEST_UNSET_VAR" in diagnostic_of(error)["message"]
    assert "`args`" in diagnostic_of(error)["message"]
    assert not (setup.counters / "needs-var").exists()

    status = await sidecar.request("mcp/status")
    row = row_of(status, "needs-var")
    assert row["state"] == "failed"
    assert row["lastDiagnostic"] == error.data
    assert status["diagnostics"] == []
    tools = await sidecar.request("mcp/server/tools", {"server": "neighbour"})
    assert len(tools["tools"]) == len(BASIC_TOOLS)


async def test_disabled_server_never_starts(setup: Setup) -> None:
    sidecar = setup.sidecar
    assert row_of(await sidecar.request("mcp/status"), "off")["state"] == "disabled"
    for method in ("mcp/server/tools", "mcp/server/reconnect"):
        error = await sidecar.error(method, {"server": "off"})
        assert (diagnostic_of(error)["code"], diagnostic_of(error)["server"]) == ("server_disabled", "off")
    activated = await sidecar.request("mcp/activate", {"ids": ["off.echo"]})
    assert [r["status"] for r in activated["results"]] == ["not loaded"]
    get = await sidecar.request("mcp/server/get", {"server": "off"})
    assert (get["disabled"], get["status"]["state"]) == (True, "disabled")
    assert not (setup.counters / "off").exists()
    assert sidecar.states("off") == []


async def test_a_call_past_its_timeout_fails_and_keeps_the_connection(sidecar: SidecarClient) -> None:
    await sidecar.request("mcp/activate", {"ids": ["slow-http.slow", "slow-http.echo"]})
    started = time.monotonic()
    error = await sidecar.error("mcp/callTool", {"id": "slow-http.slow", "arguments": {"seconds": 30}}, timeout=10)
    assert time.monotonic() - started < 10
    assert error.data == {
        "code": "timeout",
        "operation": "call",
        "server": "slow-http",
        "message": "The server did not answer within the time limit.",
        "hint": "Check the server's responsiveness and the applicable time limit (timeoutMs).",
    }
    result = await sidecar.request("mcp/callTool", {"id": "slow-http.echo", "arguments": {"text": "next"}})
    assert result["content"][0]["text"] == "next"
    assert sidecar.states("slow-http") == ["connecting", "connected"]


async def test_unknown_server_is_server_not_found(sidecar: SidecarClient) -> None:
    error = await sidecar.error("mcp/server/tools", {"server": "nope"})
    assert (diagnostic_of(error)["code"], diagnostic_of(error)["server"]) == ("server_not_found", "nope")


INVALID_SERVERS: dict[str, tuple[dict[str, Any], str]] = {
    "sse": ({"type": "sse", "url": "http://127.0.0.1:9/sse"}, "type"),
    "unknown-field": ({"command": "node", "colour": "blue"}, "colour"),
    "url-and-command": ({"command": "node", "url": "http://127.0.0.1:9/mcp"}, "url"),
    "conflicting-type": ({"type": "http", "command": "node"}, "type"),
    "no-target": ({"disabled": True}, "command"),
    "timeout-range": ({"command": "node", "timeoutMs": 50}, "timeoutMs"),
    "bad-protocol": ({"command": "node", "protocol": "2026"}, "protocol"),
}


async def test_invalid_definitions_are_reported_and_the_valid_one_loads_at_start(home: Path) -> None:
    write_config(home, {"ok": basic_stdio(), **{name: d for name, (d, _) in INVALID_SERVERS.items()}})
    async with start_sidecar(home) as sidecar:
        status = await sidecar.request("mcp/status")
        # At start there is no previous setup to keep: the valid definition loads on its own.
        assert [row["name"] for row in status["servers"]] == ["ok"]
        diagnostics = status["diagnostics"]
        assert {d["code"] for d in diagnostics} == {"configuration_invalid"}
        assert {d["operation"] for d in diagnostics} == {"configuration"}
        assert {d["server"] for d in diagnostics} == set(INVALID_SERVERS)
        for name, (_, field) in INVALID_SERVERS.items():
            assert [d for d in diagnostics if f"'{name}'" in d["message"] and f"`{field}`" in d["message"]], name
            error = await sidecar.error("mcp/server/tools", {"server": name})
            assert (diagnostic_of(error)["code"], diagnostic_of(error)["server"]) == ("configuration_invalid", name)
        assert not [d for d in diagnostics if "'ok'" in d["message"]]
        tools = await sidecar.request("mcp/server/tools", {"server": "ok"})
        assert len(tools["tools"]) == len(BASIC_TOOLS)
        assert (await sidecar.request("mcp/status"))["diagnostics"] == diagnostics
