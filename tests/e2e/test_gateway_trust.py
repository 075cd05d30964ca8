"""`mcp-sidecar mcp --trust-project --approved-only`: an editor's trusted workspace, no approval.

VS Code starts the gateway for its trusted workspace; that start is no approval the person
gave, so a project definition never approved (or changed since) must wait, as it does in the
editor, while `--trust-project` alone approves the definitions as they are (the CLI's rule).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from support.servers import basic_stdio
from support.sidecar import write_config


async def directory(home: Path, project: Path, *flags: str) -> list[str]:
    """The server names `mcp_tools`' description lists, from a gateway started with `flags`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_sidecar", "mcp", "--project", str(project), *flags],
        env={**os.environ, "MCP_SIDECAR_HOME": str(home)},
        cwd=str(project),
    )
    async with Client(params, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
    (tool,) = [t for t in listed.tools if t.name == "mcp_tools"]
    assert tool.description is not None
    _, servers = tool.description.split("Servers (for `server`; query to find their tools):\n")
    return [line.removeprefix("- ").split(":")[0].split(" ")[0] for line in servers.splitlines() if line]


def write_project(project: Path, *args: str) -> None:
    project.mkdir(exist_ok=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": basic_stdio(*args)}}), encoding="utf-8")


async def test_approved_only_runs_approved_project_servers_and_approves_nothing(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project)
    write_config(home, {"glob": basic_stdio()})
    approvals = home / "project-approvals.json"

    # Never approved: it waits (not in the directory) and nothing is recorded.
    assert await directory(home, project, "--trust-project", "--approved-only") == ["glob"]
    assert not approvals.exists()
    # Untrusted: the project's file is not read at all.
    assert await directory(home, project) == ["glob"]

    # --trust-project alone approves the definition as it is (the CLI's rule) ...
    assert await directory(home, project, "--trust-project") == ["glob", "proj"]
    assert approvals.exists()
    # ... and an approved definition runs under --approved-only.
    assert await directory(home, project, "--trust-project", "--approved-only") == ["glob", "proj"]

    # A changed definition is new code: it waits again until approved.
    write_project(project, "--prompts")
    assert await directory(home, project, "--trust-project", "--approved-only") == ["glob"]
