"""An untrusted workspace runs none of its own code (real sidecar, real servers, real git).

The workspace is a hostile repository (support/hostile_repo.py): each planted file writes a
marker when it runs. Global servers, secret commands and the bundled demo must start in a
neutral directory, so no marker ever appears, and they still work.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from support.cli import cli
from support.hostile_repo import markers, plant
from support.servers import basic_stdio, fixture_path
from support.sidecar import start_sidecar, write_config


def _legit_helper(directory: Path) -> Path:
    """A real `helper` module outside the workspace: it runs the tiny fixture server."""
    directory.mkdir()
    (directory / "helper.py").write_text(
        f"import runpy\nrunpy.run_path({str(fixture_path('tiny.py'))!r}, run_name='__main__')\n", encoding="utf-8"
    )
    return directory


def _same_dir(a: str | Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


async def test_untrusted_workspace_modules_are_not_on_a_global_servers_path(home: Path, tmp_path: Path) -> None:
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir()
    repo = plant(tmp_path / "repo", marker_dir)
    legit = _legit_helper(tmp_path / "legit")
    write_config(
        home,
        {
            # `python -m helper` with PYTHONPATH: the working directory comes first on sys.path.
            "pyhelper": {
                "command": sys.executable,
                "args": ["-m", "helper"],
                "env": {"PYTHONPATH": str(legit)},
                "protocol": "legacy",
            },
            "where": basic_stdio(),
        },
    )
    async with start_sidecar(home, project=repo, trusted=False) as client:
        tools = await client.request("mcp/server/tools", {"server": "pyhelper"})
        assert [t["name"] for t in tools["tools"]] == ["echo"]
        await client.request("mcp/activate", {"ids": ["where.cwd"]})
        result = await client.request("mcp/callTool", {"id": "where.cwd", "arguments": {}})
        server_cwd = result["content"][0]["text"]
    assert markers(marker_dir) == []
    assert _same_dir(server_cwd, home), "untrusted: servers run in the sidecar's config dir"


async def test_untrusted_workspace_git_config_is_not_read_by_secret_commands(home: Path, tmp_path: Path) -> None:
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir()
    repo = plant(tmp_path / "repo", marker_dir)
    # The shape of `!git credential fill`: git in the working directory obeys its .git/config.
    secret = "!git status --porcelain >/dev/null 2>&1; echo token-1234"
    write_config(home, {"gitsecret": basic_stdio(env={"TOKEN": secret})})
    async with start_sidecar(home, project=repo, trusted=False) as client:
        listed = await client.request("mcp/server/tools", {"server": "gitsecret"})
        assert listed["tools"], "the server with a git secret command connects"
    assert markers(marker_dir) == []


async def test_trusted_workspace_is_still_the_working_directory(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_config(home, {"where": basic_stdio()})
    async with start_sidecar(home, project=project, trusted=True) as client:
        await client.request("mcp/activate", {"ids": ["where.cwd"]})
        result = await client.request("mcp/callTool", {"id": "where.cwd", "arguments": {}})
    assert _same_dir(result["content"][0]["text"], project)


async def test_the_demo_never_imports_the_workspace_copy(home: Path, tmp_path: Path) -> None:
    """No configuration: the bundled demo runs, isolated, whether or not the workspace is trusted."""
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir()
    repo = plant(tmp_path / "repo", marker_dir)
    for trusted in (False, True):
        async with start_sidecar(home, project=repo, trusted=trusted) as client:
            rows = (await client.request("mcp/status"))["servers"]
            assert [row["name"] for row in rows] == ["demo"]
            tools = await client.request("mcp/server/tools", {"server": "demo"})
            assert tools["tools"], f"the demo lists its tools (trusted={trusted})"
    assert markers(marker_dir) == []


async def test_a_relative_sidecar_home_is_refused_not_resolved_against_the_workspace(tmp_path: Path) -> None:
    project = tmp_path / "project"
    planted = project / "relhome"
    planted.mkdir(parents=True)
    (planted / "mcp.json").write_text(json.dumps({"mcpServers": {"planted": basic_stdio()}}), encoding="utf-8")
    status = (await cli("relhome", "--json", "status", cwd=project)).json()
    assert [row["name"] for row in status["servers"]] == []
    assert [(d["code"], d["message"]) for d in status["diagnostics"]] == [
        ("configuration_invalid", "MCP_SIDECAR_HOME must be an absolute path; a relative one is never used.")
    ]
    assert not (project / "relhome" / "cache").exists()
