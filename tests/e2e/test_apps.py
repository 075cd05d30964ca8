"""MCP Apps (SEP-1865) end to end, editor side: the offer, the tools' `ui`, and `mcp/app/resource`.

The `apps.py` fixture (the SDK's MCPServer over real stdio, in both protocol eras) names
`ui://` apps in its tools' `_meta.ui`, good and bad ones, and has a tool for its app only. Its
`offered` tool says what the client's capabilities declared for the extension, as the server
received them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.servers import fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

APP_MIME = "text/html;profile=mcp-app"
APPS = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [APP_MIME]}}}
DASHBOARD = "ui://apps/dashboard"


def config(home: Path, protocol: str = "auto", *args: str) -> None:
    write_config(home, {"apps": fixture_stdio("apps.py", "stdio", *args, protocol=protocol)})


def sidecar_for(home: Path, tmp_path: Path, capabilities: dict[str, Any] | None) -> Any:
    options = {"mcpCapabilities": capabilities} if capabilities is not None else {}
    return start_sidecar(home, project=tmp_path, trusted=True, options=options)


async def offered(sidecar: SidecarClient) -> str:
    result = await sidecar.request("mcp/callTool", {"id": "apps.offered", "arguments": {}, "activate": True})
    return "".join(block.get("text", "") for block in result["content"])


async def app(sidecar: SidecarClient, uri: str) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request("mcp/app/resource", {"server": "apps", "uri": uri})
    return result


async def refused(sidecar: SidecarClient, uri: str) -> dict[str, Any]:
    return diagnostic_of(await sidecar.error("mcp/app/resource", {"server": "apps", "uri": uri}))


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_the_extension_is_offered_only_to_servers_of_a_client_that_declared_it(
    home: Path, tmp_path: Path, protocol: str
) -> None:
    config(home, protocol)
    async with sidecar_for(home, tmp_path, APPS) as sidecar:
        assert json.loads(await offered(sidecar)) == {"mimeTypes": [APP_MIME]}
    other_mime = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}
    undeclared: list[dict[str, Any] | None] = [None, {"sampling": {}}, other_mime]
    for capabilities in undeclared:
        async with sidecar_for(home, tmp_path, capabilities) as sidecar:
            assert await offered(sidecar) == "none", capabilities


async def test_tools_keep_their_ui_and_app_only_tools_are_hidden_from_the_model(home: Path, tmp_path: Path) -> None:
    config(home)
    async with sidecar_for(home, tmp_path, APPS) as sidecar:
        listed = await sidecar.request("mcp/server/tools", {"server": "apps"})
        tools = {tool["name"]: tool for tool in listed["tools"]}
        assert tools["dashboard"]["ui"] == {"resourceUri": DASHBOARD, "visibility": ["model", "app"]}
        assert tools["refresh"]["ui"] == {"resourceUri": DASHBOARD, "visibility": ["app"]}
        assert tools["wrong_mime"]["ui"] == {"resourceUri": "ui://apps/wrong-mime", "visibility": ["model", "app"]}
        assert "ui" not in tools["plain"]
        assert listed["hiddenByFilters"] == 0

        activated = await sidecar.request("mcp/activate", {"ids": ["apps.dashboard", "apps.refresh"]})
        by_id = {entry["id"]: entry for entry in activated["results"]}
        assert by_id["apps.dashboard"]["status"] == "loaded"
        assert by_id["apps.refresh"]["status"] == "not loaded"
        assert "for the server's app only" in by_id["apps.refresh"]["reason"]
        both = {"resourceUri": DASHBOARD, "visibility": ["model", "app"]}
        assert [tool["ui"] for tool in activated["tools"]] == [both]
        active = await sidecar.request("mcp/activeTools", {})
        assert [tool["ui"]["resourceUri"] for tool in active["tools"]] == [DASHBOARD]

        query = {"query": "refresh dashboard data", "server": "apps", "kind": "tools", "limit": 50}
        found = await sidecar.request("mcp/discover", query)
        ids = [candidate["id"] for candidate in found["candidates"]]
        assert "apps.dashboard" in ids
        assert "apps.refresh" not in ids
        status = await sidecar.request("mcp/status", {})
        assert status["servers"][0]["catalog"]["tools"] == len(tools) - 1  # the model's tools


async def test_a_declared_app_is_served_whole_with_its_frame_metadata(home: Path, tmp_path: Path) -> None:
    config(home, "auto", "--html-bytes", str(4 * 1024 * 1024))  # exactly the limit
    async with sidecar_for(home, tmp_path, APPS) as sidecar:
        served = await app(sidecar, DASHBOARD)
        assert served["mimeType"] == APP_MIME
        assert served["html"].startswith("<!DOCTYPE html>\n<html><head><title>Dashboard</title>")
        assert served["bytes"] == len(served["html"].encode("utf-8")) == 4 * 1024 * 1024
        assert served["tools"] == ["dashboard", "refresh"]
        assert served["ui"] == {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": True}
        assert served["untrusted"] is True
        blob = await app(sidecar, "ui://apps/blob")
        assert "<h1>Blob</h1>" in blob["html"]
        assert blob["tools"] == ["blob_app"]


async def test_bad_apps_are_refused_with_their_diagnostics(home: Path, tmp_path: Path) -> None:
    config(home)
    async with sidecar_for(home, tmp_path, APPS) as sidecar:
        undeclared = await refused(sidecar, "ui://apps/undeclared")
        assert undeclared["code"] == "app_not_declared"
        assert "ui://apps/undeclared" in undeclared["message"]
        assert (await refused(sidecar, "file:///etc/passwd"))["code"] == "app_not_declared"
        wrong = await refused(sidecar, "ui://apps/wrong-mime")
        assert wrong["code"] == "app_resource_invalid"
        assert wrong["message"] == 'The app is served as "text/html", not text/html;profile=mcp-app.'
        big = await refused(sidecar, "ui://apps/too-big")
        assert (big["code"], big["message"]) == ("app_resource_invalid", "The app is larger than 4 MiB.")
        not_html = await refused(sidecar, "ui://apps/not-html")
        assert not_html["code"] == "app_resource_invalid"
        assert "not an HTML document" in not_html["message"]
        assert not_html["server"] == "apps"
        assert not_html["operation"] == "app"
        # The server is still connected and its app still served after the refusals.
        assert (await app(sidecar, DASHBOARD))["tools"] == ["dashboard", "refresh"]


async def test_a_client_that_did_not_declare_apps_gets_none_served(home: Path, tmp_path: Path) -> None:
    config(home)
    async with sidecar_for(home, tmp_path, None) as sidecar:
        diagnostic = await refused(sidecar, DASHBOARD)
    assert diagnostic["code"] == "apps_not_offered"
    assert "io.modelcontextprotocol/ui" in diagnostic["hint"]


async def app_call(sidecar: SidecarClient, name: str, uri: str = DASHBOARD, **arguments: Any) -> dict[str, Any]:
    params = {"server": "apps", "uri": uri, "name": name, "arguments": arguments}
    result: dict[str, Any] = await sidecar.request("mcp/app/callTool", params)
    return result


async def test_an_app_calls_its_servers_tools_that_allow_apps_and_no_others(home: Path, tmp_path: Path) -> None:
    config(home)
    async with sidecar_for(home, tmp_path, APPS) as sidecar:
        refreshed = await app_call(sidecar, "refresh")  # app-only: no model may, the app may, unactivated
        assert [block["text"] for block in refreshed["content"]] == ["refreshed"]
        assert (refreshed["id"], refreshed["isError"]) == ("apps.refresh", False)
        shown = await app_call(sidecar, "dashboard", city="Oslo")
        assert shown["structuredContent"] == {"city": "Oslo", "temperature": 21}
        params = {"server": "apps", "uri": DASHBOARD, "name": "model_only", "arguments": {}}
        model_only = diagnostic_of(await sidecar.error("mcp/app/callTool", params))
        assert (model_only["code"], model_only["operation"]) == ("app_call_refused", "app call")
        params = {"server": "apps", "uri": DASHBOARD, "name": "nope", "arguments": {}}
        assert diagnostic_of(await sidecar.error("mcp/app/callTool", params))["code"] == "tool_not_found"
        params = {"server": "apps", "uri": "ui://apps/undeclared", "name": "refresh", "arguments": {}}
        assert diagnostic_of(await sidecar.error("mcp/app/callTool", params))["code"] == "app_not_declared"
    write_config(home, {"apps": fixture_stdio("apps.py", "stdio", excludeTools=["refresh"])})
    async with sidecar_for(home, tmp_path, APPS) as sidecar:
        params = {"server": "apps", "uri": DASHBOARD, "name": "refresh", "arguments": {}}
        hidden = diagnostic_of(await sidecar.error("mcp/app/callTool", params))
        assert hidden["code"] == "tool_not_found"  # the person's filters hold for apps too
    async with sidecar_for(home, tmp_path, None) as sidecar:
        params = {"server": "apps", "uri": DASHBOARD, "name": "dashboard", "arguments": {"city": "Oslo"}}
        assert diagnostic_of(await sidecar.error("mcp/app/callTool", params))["code"] == "apps_not_offered"
