"""Workspace trust granted (or withdrawn) while the sidecar runs: `mcp/workspace/setTrusted`."""

from __future__ import annotations

import json
from pathlib import Path

from support.servers import basic_stdio
from support.sidecar import start_sidecar, write_config


async def test_granting_trust_reads_the_project_file_at_once_and_withdrawing_drops_it(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": basic_stdio()}}), encoding="utf-8")
    write_config(home, {"glob": basic_stdio()})
    async with start_sidecar(home, project=project, trusted=False) as client:
        names = [row["name"] for row in (await client.request("mcp/status"))["servers"]]
        assert names == ["glob"]
        assert (await client.request("mcp/status"))["trustedWorkspace"] is False

        granted = await client.request("mcp/workspace/setTrusted", {"trusted": True})
        assert granted["applied"] is True
        assert granted["added"] == ["proj"]
        status = await client.request("mcp/status")
        assert status["trustedWorkspace"] is True
        assert sorted(row["name"] for row in status["servers"]) == ["glob", "proj"]
        tools = await client.request("mcp/server/tools", {"server": "proj"})
        assert tools["tools"], "the project server connects once trusted"

        withdrawn = await client.request("mcp/workspace/setTrusted", {"trusted": False})
        assert withdrawn["removed"] == ["proj"]
        assert [row["name"] for row in (await client.request("mcp/status"))["servers"]] == ["glob"]

        bad = await client.error("mcp/workspace/setTrusted", {"trusted": "yes"})
        assert bad.code == -32602
