"""`mcp-sidecar mcp --profile NAME`: a host sees the profile's tools in its very first `tools/list` (both
eras), its `mcp_tools` searches only the profile's servers, and another gateway of the same engine,
without the profile, keeps every server and no tool."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from support.gateway import gateway, text_of, tool_names
from support.servers import fixture_path


def stdio(script: str, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(fixture_path(script)), "stdio", *args]}


def write(home: Path, profiles: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    servers = {
        "basic": stdio("basic.py", "--prompts"),
        "other": stdio("basic.py", "--prompts", "--tool", "forecast:Weather forecast."),
    }
    document = {"mcpServers": servers, "profiles": profiles}
    (home / "mcp.json").write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    write(path, {"review": {"servers": ["basic"], "activate": ["basic.echo", "basic.add"]}})
    return path


@pytest.mark.parametrize("legacy", [True, False], ids=["handshake", "2026-07-28"])
async def test_the_profiles_tools_are_listed_from_the_first_list(home: Path, legacy: bool) -> None:
    async with gateway(home, "--profile", "review", legacy=legacy) as (host, _):
        listed = {t.name: t for t in (await host.list_tools()).tools}
        assert sorted(listed) == ["basic__add", "basic__echo", "mcp_call", "mcp_tools"]
        assert listed["basic__echo"].input_schema["required"] == ["text"]
        directory = listed["mcp_tools"].description or ""
        assert "basic" in directory
        assert "other" not in directory  # the profile's servers only
        called = await host.call_tool("basic__echo", {"text": "hi"})
        assert not called.is_error
        assert text_of(called) == "hi"
        found = text_of(await host.call_tool("mcp_tools", {"query": "weather forecast"}))
        assert "other.forecast" not in found
        refused = text_of(await host.call_tool("mcp_tools", {"activate": ["other.forecast"]}))
        assert "Server 'other' is not in profile 'review'." in refused


async def test_the_prompts_listed_are_the_profiles_servers_only(home: Path) -> None:
    async with gateway(home, "--profile", "review") as (host, changes):
        assert changes.prompts is not None
        await host.list_prompts()  # the first may come from the snapshot of an earlier start
        await changes.prompts.next(0)
        listed = {p.name for p in (await host.list_prompts()).prompts}
        assert "basic__review_code" in listed
        assert not any(name.startswith("other__") for name in listed)


async def test_a_gateway_without_the_profile_beside_it_keeps_every_server(home: Path) -> None:
    async with (
        gateway(home, "--profile", "review") as (with_profile, _),
        gateway(home) as (plain, _),
    ):
        assert "basic__echo" in await tool_names(with_profile)
        assert await tool_names(plain) == ["mcp_tools", "mcp_call"]
        listed = (await plain.list_tools()).tools
        assert "other" in (listed[0].description or "")
        found = text_of(await plain.call_tool("mcp_tools", {"query": "weather forecast"}))
        assert "other.forecast" in found


async def test_a_tool_the_profile_names_that_does_not_exist_is_logged_by_name(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, {"review": {"servers": ["basic"], "activate": ["basic.echo", "basic.nope"]}})
    async with gateway(home, "--profile", "review") as (host, _):
        assert await tool_names(host) == ["mcp_tools", "mcp_call", "basic__echo"]
    log = (home / "gateway.log").read_text(encoding="utf-8")
    assert "Profile 'review' names tool 'basic.nope', which was not activated" in log


async def test_an_undefined_profile_is_logged_and_every_server_stays(home: Path) -> None:
    async with gateway(home, "--profile", "revew") as (host, _):
        assert await tool_names(host) == ["mcp_tools", "mcp_call"]
        listed = (await host.list_tools()).tools
        assert "other" in (listed[0].description or "")
    log = (home / "gateway.log").read_text(encoding="utf-8")
    assert "gateway --profile: Profile 'revew' is not defined (or is invalid), so every server is searched." in log
