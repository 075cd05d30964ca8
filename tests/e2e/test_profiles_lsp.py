"""Profiles for editors over the real sidecar: `initializationOptions.profile` (its tools start active in
the default session), `/mcp profile` to show, choose and clear (with completion from `mcp/commandSpec`),
a second window of the same engine untouched, and a project profile behind the approval gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.servers import basic_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar

PROFILES = {
    "review": {"servers": ["basic"], "activate": ["basic.echo"]},
    "weather": {"servers": ["other"], "activate": ["other.forecast"], "description": "Forecasts"},
}


def write(home: Path, profiles: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    servers = {"basic": basic_stdio(), "other": basic_stdio("--tool", "forecast:Weather forecast.")}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers, "profiles": profiles}), encoding="utf-8")


async def active(client: SidecarClient) -> list[str]:
    return [t["id"] for t in (await client.request("mcp/activeTools", {}))["tools"]]


async def directory(client: SidecarClient) -> list[str]:
    return [s["name"] for s in (await client.request("mcp/modelTool/definition"))["servers"]]


async def test_a_profile_chosen_at_initialize_starts_with_its_tools_and_stays_this_windows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, PROFILES)
    async with (
        start_sidecar(home, options={"profile": "review"}) as window,
        start_sidecar(home) as other_window,
    ):
        status = await window.request("mcp/status")
        assert status["profile"] == "review"
        assert status["profiles"] == ["review", "weather"]
        # Activated once the window said `initialized`: its status row's Loaded column says when.
        await window.wait_for(
            lambda: any(r["name"] == "basic" and r["loaded"] == 1 for r in window.notifications["mcp/serverStatus"]),
            what="the profile's tool loaded",
        )
        assert await active(window) == ["basic.echo"]
        assert await directory(window) == ["basic"]
        found = await window.request("mcp/discover", {"query": "weather forecast"})
        assert "other" not in {c["server"] for c in found["candidates"]}
        # The other window of the same engine: no profile, every server, nothing active.
        assert (await other_window.request("mcp/status"))["profile"] is None
        assert await directory(other_window) == ["basic", "other"]
        assert await active(other_window) == []


async def test_profile_command_shows_chooses_and_clears_with_completion(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, PROFILES)
    async with start_sidecar(home) as client:
        spec = await client.request("mcp/commandSpec", {"command": "profile"})
        assert spec["commands"][0]["positionals"] == [
            {"name": "PROFILE", "completion": "profile", "values": ["review", "weather"], "optional": True}
        ]
        shown = await client.request("mcp/command", {"line": "/mcp profile"})
        assert shown["text"].splitlines()[0] == "Profile: none (every server is searched)"
        chosen = await client.request("mcp/command", {"line": "/mcp profile weather"})
        assert chosen["text"].splitlines()[:2] == ["Profile: weather", "Active in session 'default': other.forecast"]
        assert await active(client) == ["other.forecast"]
        await client.wait_for(lambda: bool(client.notifications["mcp/modelToolChanged"]), what="modelToolChanged")
        assert [s["name"] for s in client.notifications["mcp/modelToolChanged"][-1]["definition"]["servers"]] == [
            "other"
        ]
        switched = await client.request("mcp/profile", {"profile": "review"})
        assert switched["deactivated"] == ["other.forecast"]
        assert await active(client) == ["basic.echo"]
        await client.wait_for(
            lambda: any(n["reason"] == "profile changed" for n in client.notifications["mcp/activeToolsChanged"]),
            what="activeToolsChanged",
        )
        cleared = await client.request("mcp/command", {"line": "/mcp profile --clear"})
        assert cleared["text"].splitlines()[0] == "Profile: none (every server is searched)"
        assert await directory(client) == ["basic", "other"]
        refused = diagnostic_of(await client.error("mcp/profile", {"profile": "nope"}))
        assert refused["code"] == "profile_not_found"
        assert refused["message"] == "No profile named 'nope' (defined: review, weather)."


async def test_a_project_profile_is_used_only_once_approved(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "repo"
    write(home, {})
    project.mkdir()
    document = {"mcpServers": {}, "profiles": {"team": {"servers": ["other"]}}}
    (project / ".mcp.json").write_text(json.dumps(document), encoding="utf-8")
    async with start_sidecar(home, project=project, trusted=True) as client:
        status = await client.request("mcp/status")
        assert status["profiles"] == []
        assert [(p["server"], p["transport"], p["summary"]) for p in status["pendingApprovals"]] == [
            ("profile:team", "profile", "profile: searches other")
        ]
        waiting = diagnostic_of(await client.error("mcp/profile", {"profile": "team"}))
        assert waiting["code"] == "trust_required"
        pending = status["pendingApprovals"][0]
        done = await client.request(
            "mcp/workspace/approve",
            {"approvals": [{"server": pending["server"], "definitionHash": pending["definitionHash"]}]},
        )
        assert done["approved"] == ["profile:team"]
        chosen = await client.request("mcp/profile", {"profile": "team"})
        assert chosen["profile"]["scope"] == "project"
        assert await directory(client) == ["other"]
    async with start_sidecar(home, project=project, trusted=False) as untrusted:
        status = await untrusted.request("mcp/status")
        assert status["profiles"] == []
        assert status["pendingApprovals"] == []


async def test_the_command_lines_profile_is_the_default_and_initialization_options_win(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, PROFILES)
    async with (
        start_sidecar(home, args=("--profile", "weather")) as from_argv,
        start_sidecar(home, args=("--profile", "weather"), options={"profile": None}) as overridden,
    ):
        assert (await from_argv.request("mcp/status"))["profile"] == "weather"
        assert await directory(from_argv) == ["other"]
        assert (await overridden.request("mcp/status"))["profile"] is None
        assert await directory(overridden) == ["basic", "other"]
