"""Server icons and tool annotations end to end, from a fixture server that declares hostile icons too.

`icons.py` puts icons on its `serverInfo`, tools, a resource, a template and a prompt: valid ones
(PNG and SVG data URIs, https URLs) among ones a client must never render (`javascript:`,
`http:`, a data URI over 64 KiB, an HTML data URI, a bidi override, credentials, an HTML
mimeType). Only the valid ones, at most four, reach `mcp/server/tools`, `mcp/activate`,
`mcp/activeTools`, `mcp/discover` and the status rows, in both protocol eras, and from the
disk cache as from the server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fixtures.servers import icons as fixture
from support.discovery import cache_files, discover, status_row
from support.servers import fixture_stdio
from support.sidecar import SidecarClient, restart_engine, start_sidecar, write_config

KEPT = fixture.VALID[:4]


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in rows}


def setup(home: Path, tmp_path: Path, protocol: str = "auto") -> Path:
    write_config(home, {"icons": fixture_stdio("icons.py", "stdio", protocol=protocol)})
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return project


async def check_tools(sidecar: SidecarClient) -> None:
    listed = await sidecar.request("mcp/server/tools", {"server": "icons"})
    tools = by_name(listed["tools"])
    assert tools["decorated"]["icons"] == KEPT
    assert tools["decorated"]["annotations"] == fixture.ANNOTATIONS
    assert "icons" not in tools["hostile"]
    assert "icons" not in tools["plain"]


@pytest.mark.parametrize(("protocol", "negotiated"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_only_valid_icons_reach_every_place_that_shows_them(
    home: Path, tmp_path: Path, protocol: str, negotiated: str
) -> None:
    project = setup(home, tmp_path, protocol)
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        await check_tools(sidecar)

        found = by_name((await discover(sidecar, "decorated", kind="tools"))["candidates"])
        assert found["decorated"]["icons"] == KEPT
        assert found["decorated"]["annotations"] == fixture.ANNOTATIONS
        assert "icons" not in found.get("hostile", {})

        everything = await discover(sidecar, "", server="icons", limit=50)
        candidates = {(c["kind"], c["name"]): c for c in everything["candidates"]}
        assert candidates[("resource", "readme")]["icons"] == [fixture.VALID[2]]
        assert candidates[("template", "iconfile")]["icons"] == [fixture.VALID[1]]
        assert candidates[("prompt", "greet")]["icons"] == [fixture.VALID[0]]
        assert "icons" not in candidates[("tool", "hostile")]
        assert "icons" not in candidates[("tool", "plain")]
        assert "annotations" not in candidates[("tool", "plain")]

        activated = await sidecar.request("mcp/activate", {"ids": ["icons.decorated"]})
        assert activated["tools"][0]["icons"] == KEPT
        active = await sidecar.request("mcp/activeTools", {})
        assert active["tools"][0]["icons"] == KEPT
        assert active["tools"][0]["annotations"] == fixture.ANNOTATIONS

        row = await status_row(sidecar, "icons")
        assert (row["state"], row["protocolVersion"]) == ("connected", negotiated)
        assert row["icons"] == [fixture.VALID[1]]
        pushed = [p for p in sidecar.notifications["mcp/serverStatus"] if p["state"] == "connected"]
        assert pushed[-1]["icons"] == [fixture.VALID[1]]

        wire = json.dumps([everything, active, row])
    for hostile in fixture.HOSTILE:
        if hostile["src"] != fixture.HTTPS:  # the HTML-mimeType one shares its src with a valid icon
            assert json.dumps(hostile["src"])[1:-1] not in wire


async def test_icons_are_cached_with_the_catalog_and_served_from_the_cache(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path)
    async with start_sidecar(home, project=project, trusted=True) as first:
        await check_tools(first)
        assert (await status_row(first, "icons"))["icons"] == [fixture.VALID[1]]
    cached = json.loads(cache_files(home)["icons"].read_text(encoding="utf-8"))
    assert by_name(cached["tools"])["decorated"]["icons"] == fixture.DECORATED  # as the server sent them

    await restart_engine(home)  # the next sidecar starts from the disk
    async with start_sidecar(home, project=project, trusted=True) as second:
        found = by_name((await discover(second, "decorated", kind="tools"))["candidates"])
        assert found["decorated"]["icons"] == KEPT
        assert found["decorated"]["annotations"] == fixture.ANNOTATIONS
        activated = await second.request("mcp/activate", {"ids": ["icons.decorated"]})
        assert activated["tools"][0]["icons"] == KEPT
        row = await status_row(second, "icons")
        assert (row["state"], row["catalogSource"]) == ("idle", "cache")
        assert "icons" not in row  # a server's own icons come with a connection; none was made
