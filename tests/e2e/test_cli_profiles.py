"""Profiles from the CLI, in fresh processes: `--profile NAME` narrows what a run searches and shows in
status, a name that is no usable profile is refused (exit status 2), a profile naming a missing server is
a diagnostic naming it, and `add` and `import` leave the profiles in the file as they were."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from support.cli import cli, plain_status
from support.servers import basic_stdio

IMPORTS = Path(__file__).parents[1] / "fixtures" / "imports"
PROFILES = {"review": {"servers": ["basic"], "activate": ["basic.echo"]}}


def write(home: Path, profiles: dict[str, Any]) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    servers = {"basic": basic_stdio(), "other": basic_stdio("--tool", "forecast:Weather forecast.")}
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers, "profiles": profiles}), encoding="utf-8")
    return path


async def test_a_profile_narrows_discovery_and_shows_in_status(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, PROFILES)
    narrowed, everything, status, scoped = await asyncio.gather(
        cli(home, "--profile", "review", "discover", "weather forecast", "--json"),
        cli(home, "discover", "weather forecast", "--json"),
        cli(home, "status", "--profile", "review"),
        cli(home, "--profile", "review", "discover", "forecast", "--server", "other"),
    )
    assert narrowed.code == 0, narrowed.stderr
    assert {c["server"] for c in narrowed.json()["candidates"]} <= {"basic"}
    assert "other" in {c["server"] for c in everything.json()["candidates"]}
    assert status.code == 0
    assert "Profile: review" in plain_status(status.stdout).splitlines()
    assert scoped.code == 1
    assert "[not_in_profile] Server 'other' is not in profile 'review'." in scoped.stderr


async def test_a_name_that_is_no_profile_is_refused_with_the_defined_ones(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, PROFILES)
    refused = await cli(home, "--profile", "revew", "status")
    assert refused.code == 2
    assert refused.stdout == ""
    assert refused.stderr.strip() == (
        "mcp-sidecar: --profile: Profile 'revew' is not defined (or is invalid), so every server is searched. "
        "(profiles: review)"
    )


async def test_a_profile_naming_a_missing_server_is_a_diagnostic_naming_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = write(home, {"review": {"servers": ["basic", "jira"]}})
    status = await cli(home, "status", "--json")
    diagnostics = status.json()["diagnostics"]
    assert [(d["code"], d["operation"], d["message"]) for d in diagnostics] == [
        (
            "configuration_invalid",
            "profile",
            f"{path}: profile 'review': `servers` names server 'jira', which is not configured.",
        )
    ]
    refused = await cli(home, "--profile", "review", "status")
    assert refused.code == 2  # left out, so not a profile a run can use


async def test_add_and_import_leave_the_profiles_intact(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = write(home, PROFILES)
    added = await cli(home, "run", "add --scope global extra https://extra.example/mcp")
    assert added.code == 0, added.stderr
    imported = await cli(
        home, "run", f"import --scope global {IMPORTS / 'cursor_mcp.json'} --select linear --confirm", "--json"
    )
    assert imported.code == 0, imported.stderr
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["profiles"] == PROFILES
    assert {"extra", "linear"} <= set(document["mcpServers"])
    shown = await cli(home, "--profile", "review", "run", "profile")
    assert shown.code == 0, shown.stderr
    assert shown.stdout.splitlines()[:3] == [
        "Profile: review",
        "Profiles:",
        "  review [global]: searches basic; activates basic.echo",
    ]
