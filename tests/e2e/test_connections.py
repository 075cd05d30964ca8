"""Connections end to end: stdio and Streamable HTTP in both protocol eras, on-demand starts,
reconnect, configuration problems, and `get` never revealing a connection value."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from support.servers import (
    SERVER_EVERYTHING_JS,
    basic_stdio,
    fixture_path,
    http_server,
    pid_alive,
    server_everything_http,
    started_pids,
)
from support.sidecar import SidecarClient, start_sidecar, wait_until, write_config

BASIC_TOOLS = {"echo", "add", "get_env", "fail", "slow", "crash", "cwd", "redefine"}
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
MODES = [("legacy", LEGACY), ("auto", MODERN)]

needs_server_everything = pytest.mark.skipif(
    not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci` to install server-everything"
)


def row_of(status: dict[str, Any], name: str) -> dict[str, Any]:
    rows = [row for row in status["servers"] if row["name"] == name]
    assert len(rows) == 1, status
    return rows[0]


async def assert_connects(sidecar: SidecarClient, name: str, version: str) -> None:
    """From idle, a tools listing connects (idle → connecting → connected) in the expected era."""
    assert row_of(await sidecar.request("mcp/status"), name)["state"] == "idle"
    tools = await sidecar.request("mcp/server/tools", {"server": name})
    assert {tool["name"] for tool in tools["tools"]} == BASIC_TOOLS
    assert {tool["id"] for tool in tools["tools"]} == {f"{name}.{tool}" for tool in BASIC_TOOLS}
    assert tools["source"] == "live"
    assert tools["hiddenByFilters"] == 0
    await sidecar.wait_for(lambda: "connected" in sidecar.states(name), timeout=10, what="connected notification")
    assert sidecar.states(name)[:2] == ["connecting", "connected"]
    row = row_of(await sidecar.request("mcp/status"), name)
    assert row["state"] == "connected"
    assert row["protocolVersion"] == version
    assert row["catalog"]["tools"] == len(BASIC_TOOLS)
    assert row["lastDiagnostic"] is None


@pytest.mark.parametrize(("mode", "version"), MODES)
async def test_stdio_server_connects_in_each_protocol_mode(
    home: Path, sidecar: SidecarClient, mode: str, version: str
) -> None:
    write_config(home, {"basic": basic_stdio(protocol=mode)})
    await assert_connects(sidecar, "basic", version)
    get = await sidecar.request("mcp/server/get", {"server": "basic"})
    assert get["protocol"] == {"configured": mode, "negotiated": version}
    assert get["transport"] == "stdio"


@pytest.mark.parametrize(("mode", "version"), MODES)
async def test_http_server_connects_in_each_protocol_mode(
    home: Path, sidecar: SidecarClient, mode: str, version: str
) -> None:
    with http_server("basic.py") as url:
        write_config(home, {"web": {"url": url, "protocol": mode}})
        await assert_connects(sidecar, "web", version)
        get = await sidecar.request("mcp/server/get", {"server": "web"})
        assert get["protocol"] == {"configured": mode, "negotiated": version}
        assert get["transport"] == "http"
        assert await sidecar.request("mcp/activate", {"ids": ["web.add"]})
        result = await sidecar.request("mcp/callTool", {"id": "web.add", "arguments": {"a": 20, "b": 22}})
        assert result["isError"] is False
        assert result["content"][0]["text"] == "42"


async def test_get_hides_every_connection_value(home: Path, sidecar: SidecarClient, tmp_path: Path) -> None:
    (tmp_path / "project" / "sub").mkdir(parents=True)
    stdio = basic_stdio(
        "--stderr-line",
        "arg-value-5150",
        cwd="sub",
        env={"API_TOKEN": "env-value-8841", "REGION": "eu-west-7"},
    )
    with http_server("basic.py") as url:
        write_config(
            home,
            {
                "local": stdio,
                "web": {"url": url, "headers": {"Authorization": "Bearer header-value-3307", "X-Team": "team-9"}},
            },
        )
        # Connected first, so the status inside `get` is live too.
        await sidecar.request("mcp/server/tools", {"server": "local"})
        await sidecar.request("mcp/server/tools", {"server": "web"})
        local = await sidecar.request("mcp/server/get", {"server": "local"})
        web = await sidecar.request("mcp/server/get", {"server": "web"})

    assert local["connection"] == {
        "command": "hidden",
        "args": "hidden (4 values)",
        "cwd": "hidden",
        "env": {"API_TOKEN": "hidden", "REGION": "hidden"},
    }
    assert local["authentication"]["credentials"] == "externally managed"
    assert local["status"]["state"] == "connected"
    assert web["connection"] == {"url": "hidden", "headers": {"Authorization": "hidden", "X-Team": "hidden"}}
    assert web["authentication"]["kind"] == "header"
    text = json.dumps([local, web])
    for value in (
        sys.executable,
        str(fixture_path("basic.py")),
        "arg-value-5150",
        "sub",
        "env-value-8841",
        "eu-west-7",
        url,
        "127.0.0.1",
        "header-value-3307",
        "team-9",
    ):
        assert value not in text, value


@needs_server_everything
async def test_server_everything_over_stdio(home: Path, sidecar: SidecarClient) -> None:
    write_config(home, {"everything": {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}})
    await assert_everything_works(sidecar)


@needs_server_everything
async def test_server_everything_over_http(home: Path, sidecar: SidecarClient) -> None:
    with server_everything_http() as url:
        write_config(home, {"everything": {"url": url}})
        await assert_everything_works(sidecar)


async def assert_everything_works(sidecar: SidecarClient) -> None:
    tools = await sidecar.request("mcp/server/tools", {"server": "everything"})
    names = {tool["name"] for tool in tools["tools"]}
    assert {"echo", "get-sum"} <= names
    activated = await sidecar.request("mcp/activate", {"ids": ["everything.echo"]})
    assert [(r["id"], r["status"]) for r in activated["results"]] == [("everything.echo", "loaded")]
    assert [tool["id"] for tool in activated["tools"]] == ["everything.echo"]
    result = await sidecar.request("mcp/callTool", {"id": "everything.echo", "arguments": {"message": "hi there"}})
    assert result["isError"] is False
    assert "hi there" in result["content"][0]["text"]
    assert row_of(await sidecar.request("mcp/status"), "everything")["state"] == "connected"


async def test_connections_start_on_demand_and_are_reused(home: Path, sidecar: SidecarClient, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    status = await sidecar.request("mcp/status")
    assert row_of(status, "basic")["state"] == "idle"
    assert row_of(status, "basic")["catalog"]["tools"] is None
    await sidecar.request("mcp/server/get", {"server": "basic"})
    await sidecar.request("mcp/server/logs", {"server": "basic"})
    assert not counter.exists()

    await sidecar.request("mcp/server/tools", {"server": "basic"})
    assert len(started_pids(counter)) == 1
    await sidecar.request("mcp/server/tools", {"server": "basic"})
    await sidecar.request("mcp/activate", {"ids": ["basic.echo"]})
    result = await sidecar.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "again"}})
    assert result["content"][0]["text"] == "again"
    assert len(started_pids(counter)) == 1
    assert sidecar.states("basic").count("connecting") == 1


async def test_reconnect_replaces_the_connection(home: Path, sidecar: SidecarClient, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    await sidecar.request("mcp/server/tools", {"server": "basic"})
    [first] = started_pids(counter)

    row = await sidecar.request("mcp/server/reconnect", {"server": "basic"})
    assert row["name"] == "basic"
    assert row["state"] == "connected"
    assert row["catalog"]["tools"] == len(BASIC_TOOLS)
    pids = started_pids(counter)
    assert len(pids) == 2
    await wait_until(lambda: not pid_alive(first), timeout=10, what="the replaced server to exit")
    assert pid_alive(pids[1])
    assert sidecar.states("basic").count("connecting") == 2


async def test_reconnect_connects_an_idle_server(home: Path, sidecar: SidecarClient, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    row = await sidecar.request("mcp/server/reconnect", {"server": "basic"})
    assert (row["state"], row["catalog"]["tools"]) == ("connected", len(BASIC_TOOLS))
    assert len(started_pids(counter)) == 1


async def test_missing_variable_stops_only_that_server(home: Path, sidecar: SidecarClient, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(
        home,
        {
            "needs-var": basic_stdio("--counter-file", str(counter), "--stderr-line", "${MCP_SIDECAR_TEST_UNSET_VAR}"),
            "fine": basic_stdio(),
        },
    )
    error = await sidecar.error("mcp/server/tools", {"server": "needs-var"})
    assert error.data["code"] == "configuration_invalid"
    assert error.data["server"] == "needs-var"
    assert error.data["operation"] == "tools"
    assert "MCP_SIDECAR_TEST_UNSET_VAR" in error.data["message"]
    assert "`args`" in error.data["message"]
    assert not counter.exists()

    status = await sidecar.request("mcp/status")
    row = row_of(status, "needs-var")
    assert row["state"] == "failed"
    assert row["lastDiagnostic"]["code"] == "configuration_invalid"
    assert status["diagnostics"] == []
    tools = await sidecar.request("mcp/server/tools", {"server": "fine"})
    assert len(tools["tools"]) == len(BASIC_TOOLS)


async def test_disabled_server_never_starts(home: Path, sidecar: SidecarClient, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(home, {"off": basic_stdio("--counter-file", str(counter), disabled=True)})
    assert row_of(await sidecar.request("mcp/status"), "off")["state"] == "disabled"
    for method in ("mcp/server/tools", "mcp/server/reconnect"):
        error = await sidecar.error(method, {"server": "off"})
        assert (error.data["code"], error.data["server"]) == ("server_disabled", "off")
    activated = await sidecar.request("mcp/activate", {"ids": ["off.echo"]})
    assert [r["status"] for r in activated["results"]] == ["not loaded"]
    get = await sidecar.request("mcp/server/get", {"server": "off"})
    assert get["disabled"] is True
    assert get["status"]["state"] == "disabled"
    assert not counter.exists()
    assert sidecar.states("off") == []


@pytest.mark.parametrize(
    ("definition", "field"),
    [
        ({"type": "sse", "url": "http://127.0.0.1:9/sse"}, "type"),
        ({"command": "node", "colour": "blue"}, "colour"),
        ({"command": "node", "url": "http://127.0.0.1:9/mcp"}, "url"),
        ({"command": "node", "timeoutMs": 50}, "timeoutMs"),
        ({"command": "node", "protocol": "2026"}, "protocol"),
    ],
    ids=["sse", "unknown-field", "url-and-command", "timeout-range", "protocol"],
)
async def test_invalid_config_is_reported_and_the_sidecar_keeps_running(
    home: Path, sidecar: SidecarClient, definition: dict[str, Any], field: str
) -> None:
    write_config(home, {"ok": basic_stdio(), "broken": definition})
    status = await sidecar.request("mcp/status")
    assert status["servers"] == []
    [diag] = status["diagnostics"]
    assert diag["code"] == "configuration_invalid"
    assert diag["operation"] == "configuration"
    assert "'broken'" in diag["message"]
    assert f"`{field}`" in diag["message"]
    error = await sidecar.error("mcp/server/tools", {"server": "ok"})
    assert error.data["code"] == "configuration_invalid"
    # Still serving.
    assert (await sidecar.request("mcp/status"))["diagnostics"] == [diag]


async def test_shutdown_stops_every_server_process(home: Path, tmp_path: Path) -> None:
    counters = [tmp_path / f"starts-{i}" for i in range(3)]
    write_config(
        home,
        {
            "legacy": basic_stdio("--counter-file", str(counters[0]), protocol="legacy"),
            "auto": basic_stdio("--counter-file", str(counters[1])),
            "unused": basic_stdio("--counter-file", str(counters[2])),
        },
    )
    async with start_sidecar(home) as sidecar:
        await sidecar.request("mcp/server/tools", {"server": "legacy"})
        await sidecar.request("mcp/server/tools", {"server": "auto"})
        pids = started_pids(counters[0]) + started_pids(counters[1])
        assert len(pids) == 2
        assert all(pid_alive(pid) for pid in pids)
    await wait_until(lambda: not any(pid_alive(pid) for pid in pids), timeout=10, what="server processes to exit")
    assert not counters[2].exists()
