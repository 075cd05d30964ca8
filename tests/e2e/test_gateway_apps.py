"""MCP Apps (SEP-1865) through the gateway: passed through to hosts that declare the extension only.

The host is the SDK's `Client` over stdio, declaring `io.modelcontextprotocol/ui` (or not); the
upstream server is the `apps.py` fixture, configured as `weather`, so its app `ui://apps/dashboard`
is `ui://weather/apps/dashboard` to the host, as its tool `dashboard` is `weather__dashboard`.

An app's own calls reach the gateway as a host's bridge forwards them (the ext-apps SDK's
`AppBridge` sends the app's `tools/call` params unchanged): by the server's own tool names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.client.extension import advertise

from support.gateway import Changes, gateway, text_of
from support.servers import fixture_stdio
from support.sidecar import write_config

APP_MIME = "text/html;profile=mcp-app"
UI = "io.modelcontextprotocol/ui"
HOST_URI = "ui://weather/apps/dashboard"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write_config(home, {"weather": fixture_stdio("apps.py", "stdio")})
    return home


@pytest.fixture
def two_homes(tmp_path: Path) -> Path:
    """Two servers whose apps both have the tools `refresh` and `dashboard`."""
    home = tmp_path / "home"
    write_config(home, {"weather": fixture_stdio("apps.py", "stdio"), "climate": fixture_stdio("apps.py", "stdio")})
    return home


def declaring() -> dict[str, Any]:
    return {"extensions": [advertise(UI, {"mimeTypes": [APP_MIME]})]}


async def activate(host: Client, changes: Changes, *ids: str) -> str:
    before = changes.count
    result = await host.call_tool("mcp_tools", {"activate": list(ids)})
    assert not result.is_error, text_of(result)
    await changes.next(before)
    return text_of(result)


async def natives(host: Client) -> dict[str, Any]:
    return {tool.name: tool for tool in (await host.list_tools()).tools}


@pytest.mark.parametrize("legacy", [True, False], ids=["2025-11-25", "2026-07-28"])
async def test_a_declaring_host_gets_the_tools_ui_and_reads_their_apps(home: Path, legacy: bool) -> None:
    async with gateway(home, legacy=legacy, **declaring()) as (host, changes):
        said = await activate(host, changes, "weather.dashboard", "weather.offered", "weather.refresh")
        assert "for the server's app only" in said
        tools = await natives(host)
        assert tools["weather__dashboard"].meta == {"ui": {"resourceUri": HOST_URI, "visibility": ["model", "app"]}}
        assert "weather__refresh" not in tools  # the app's own tool: never a model's
        assert tools["weather__offered"].meta is None
        offered = await host.call_tool("weather__offered", {})
        assert text_of(offered) == json.dumps({"mimeTypes": [APP_MIME]})  # the server was offered it

        read = await host.read_resource(HOST_URI)
        [content] = read.contents
        assert str(content.uri) == HOST_URI
        assert content.mime_type == APP_MIME
        assert getattr(content, "text", "").startswith("<!DOCTYPE html>")
        assert content.meta == {"ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": True}}

        with pytest.raises(MCPError, match="No tool of the server names"):
            await host.read_resource("ui://weather/apps/undeclared")
        with pytest.raises(MCPError, match="not text/html;profile=mcp-app"):
            await host.read_resource("ui://weather/apps/wrong-mime")
        with pytest.raises(MCPError, match="Not an app of this gateway"):
            await host.read_resource("ui://nosuchserver/apps/dashboard")


async def test_a_host_that_does_not_declare_apps_gets_neither_ui_nor_apps(home: Path) -> None:
    async with gateway(home) as (host, changes):
        await activate(host, changes, "weather.dashboard", "weather.offered")
        tools = await natives(host)
        assert tools["weather__dashboard"].meta is None
        assert text_of(await host.call_tool("weather__offered", {})) == "none"  # nor was the server offered it
        with pytest.raises(MCPError, match="did not declare MCP Apps"):
            await host.read_resource(HOST_URI)


async def test_a_2026_07_28_hosts_resource_read_keeps_its_contents(home: Path) -> None:
    """Any `resources/read` (here `--resources`, of an app's resource as a plain one) on 2026-07-28
    says how long it stays fresh: without it the SDK's result sieve dropped the contents."""
    async with gateway(home, "--resources", legacy=False) as (host, _):
        read = await host.read_resource("mcp-sidecar://weather/ui://apps/not-html")
    [content] = read.contents
    assert getattr(content, "text", None) == '{"not": "html"}'


@pytest.mark.parametrize("legacy", [True, False], ids=["2025-11-25", "2026-07-28"])
async def test_an_opened_apps_calls_reach_its_server_by_the_servers_own_names(home: Path, legacy: bool) -> None:
    async with gateway(home, legacy=legacy, **declaring()) as (host, _):
        before = await host.call_tool("refresh", {})
        assert before.is_error
        assert text_of(before).startswith("[tool_not_found]")  # no app of the server was opened yet
        await host.read_resource(HOST_URI)
        refreshed = await host.call_tool("refresh", {})  # the app's own tool, never listed to the model
        shown = await host.call_tool("dashboard", {"city": "Oslo"})
        prefixed = await host.call_tool("weather__refresh", {})
        plain = await host.call_tool("plain", {})  # no `_meta.ui`: both may call it
        model_only = await host.call_tool("model_only", {})
        unknown = await host.call_tool("nosuchtool", {})
    assert (refreshed.is_error, text_of(refreshed)) == (False, "refreshed")
    assert not shown.is_error
    assert shown.structured_content == {"city": "Oslo", "temperature": 21}
    assert (prefixed.is_error, text_of(prefixed)) == (False, "refreshed")
    assert (plain.is_error, text_of(plain)) == (False, "plain")
    assert model_only.is_error
    assert "[app_call_refused]" in text_of(model_only)
    assert "is for the model only" in text_of(model_only)
    assert unknown.is_error
    assert text_of(unknown).startswith("[tool_not_found]")


async def test_a_host_that_does_not_declare_apps_cannot_call_an_apps_tools(home: Path) -> None:
    async with gateway(home) as (host, _):
        with pytest.raises(MCPError, match="did not declare MCP Apps"):
            await host.read_resource(HOST_URI)
        refused = await host.call_tool("refresh", {})
        prefixed = await host.call_tool("weather__refresh", {})
    assert refused.is_error
    assert text_of(refused).startswith("[tool_not_found]")
    assert prefixed.is_error
    assert text_of(prefixed).startswith("[tool_not_found]")


async def test_a_tool_of_two_opened_apps_is_refused_unless_its_server_is_named(two_homes: Path) -> None:
    async with gateway(two_homes, **declaring()) as (host, _):
        await host.read_resource(HOST_URI)
        alone = await host.call_tool("refresh", {})  # only weather's app is open: it is weather's
        await host.read_resource("ui://climate/apps/dashboard")
        ambiguous = await host.call_tool("refresh", {})
        named = await host.call_tool("climate__refresh", {})
    assert (alone.is_error, text_of(alone)) == (False, "refreshed")
    assert ambiguous.is_error
    assert "[app_call_refused]" in text_of(ambiguous)
    assert "several servers this host opened (climate, weather)" in text_of(ambiguous)
    assert (named.is_error, text_of(named)) == (False, "refreshed")
