"""MCP Apps against the official example servers from npm (`tests/package.json`), over real stdio.

`server-basic-vanillajs` (a clock app) and `server-system-monitor` (a chart app with an app-only
polling tool) list their UI tools and serve their `ui://` apps, built with the ext-apps SDK; the
editor here declares the extension as VS Code would.

Through the gateway, a host (the SDK's `Client`, declaring the extension) opens the system monitor's
app and sends what its app sends when it polls, `tools/call` of `poll-system-stats` (read from the
app's own HTML), as the ext-apps `AppBridge` forwards it: unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.client.extension import advertise

from support.gateway import gateway, text_of
from support.servers import APP_SERVERS
from support.sidecar import start_sidecar, write_config

SERVERS = {name: APP_SERVERS / f"server-{name}" / "dist" / "index.js" for name in ("basic-vanillajs", "system-monitor")}
pytestmark = pytest.mark.skipif(
    not all(path.is_file() for path in SERVERS.values()), reason="run `cd tests && npm ci` to install the app servers"
)
APP_MIME = "text/html;profile=mcp-app"
APPS = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [APP_MIME]}}}


def configured(home: Path) -> None:
    write_config(home, {name: {"command": "node", "args": [str(path), "--stdio"]} for name, path in SERVERS.items()})


async def test_the_official_app_servers_apps_are_listed_and_served(home: Path, tmp_path: Path) -> None:
    configured(home)
    options: dict[str, Any] = {"mcpCapabilities": APPS}
    async with start_sidecar(home, project=tmp_path, trusted=True, options=options) as sidecar:
        served: dict[str, dict[str, Any]] = {}
        app_only: dict[str, list[str]] = {}
        every: dict[str, int] = {}
        for server in SERVERS:
            listed = await sidecar.request("mcp/server/tools", {"server": server}, timeout=90)
            every[server] = len(listed["tools"])
            uis = {tool["name"]: tool["ui"] for tool in listed["tools"] if "ui" in tool}
            assert uis, f"{server} listed no tool with an app"
            app_only[server] = [name for name, ui in uis.items() if ui["visibility"] == ["app"]]
            uri = next(ui["resourceUri"] for ui in uis.values() if "resourceUri" in ui)
            served[server] = await sidecar.request("mcp/app/resource", {"server": server, "uri": uri}, timeout=90)
        status = await sidecar.request("mcp/status", {})
        ids = [f"system-monitor.{name}" for name in app_only["system-monitor"]]
        activated = await sidecar.request("mcp/activate", {"ids": ids})
    for server, app in served.items():
        assert app["uri"] == f"ui://{'get-time' if server == 'basic-vanillajs' else server}/mcp-app.html"
        assert app["mimeType"] == APP_MIME
        assert app["html"].lstrip().lower().startswith("<!doctype html>")
        assert 0 < app["bytes"] <= 4 * 1024 * 1024
    # The system monitor's polling tool is its app's alone: listed for people, not counted for the model.
    assert app_only["system-monitor"]
    counts = {row["name"]: row["catalog"]["tools"] for row in status["servers"]}
    assert counts["system-monitor"] == every["system-monitor"] - len(app_only["system-monitor"])
    assert {entry["status"] for entry in activated["results"]} == {"not loaded"}
    assert activated["tools"] == []


async def test_the_system_monitors_app_polls_its_server_through_the_gateway(home: Path) -> None:
    configured(home)
    app_html = (SERVERS["system-monitor"].parent / "mcp-app.html").read_text(encoding="utf-8")
    assert 'callServerTool({name:"poll-system-stats"' in app_html  # what the app sends, as it sends it
    extensions = [advertise("io.modelcontextprotocol/ui", {"mimeTypes": [APP_MIME]})]
    async with gateway(home, extensions=extensions) as (host, _):
        refused = await host.call_tool("poll-system-stats", {})
        read = await host.read_resource("ui://system-monitor/system-monitor/mcp-app.html")
        polled = await host.call_tool("poll-system-stats", {})
    assert refused.is_error  # before the host opened the app: no app of the server could call it
    assert text_of(refused).startswith("[tool_not_found]")
    assert getattr(read.contents[0], "text", "").lstrip().lower().startswith("<!doctype html>")
    assert not polled.is_error, text_of(polled)
    stats = polled.structured_content
    assert isinstance(stats, dict)
    assert isinstance(stats["cpu"]["cores"], list)
    assert stats["cpu"]["cores"]
