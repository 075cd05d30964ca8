"""A sidecar never starts itself as one of its own servers (issue 31, item 1).

The runaway: `docs/gateway.md` suggested `mcp-sidecar mcp --project . --trust-project` in a host's
project configuration, and for Claude Code that file is the same `.mcp.json` the sidecar reads.
One `initialize` and one `prompts/list` then started gateway after gateway, each the next one's
server. Every test here runs under a process guard (`support/process_guard.py`): the processes
are counted by a token in their environment and all killed past a small cap, so a regression
fails with a handful of processes, never a machine full of them.

Two defences, each shown on its own: the definition is recognised as mcp-sidecar however it is
spelled, and refused before anything starts; and a spelling nothing can recognise (a wrapper
script) starts one copy, which finds its own definition in the chain its parent passed down
(`MCP_SIDECAR_SERVER_CHAIN`) and refuses it, so the chain ends one level down.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters

from mcp_sidecar.engine.kinds import ENGINE_ENV, OFF
from mcp_sidecar.protocol.errors import HINTS
from support.process_guard import TOKEN_VAR, Guard, process_guard
from support.servers import basic_stdio
from support.sidecar import diagnostic_of, start_sidecar, write_config

SCRIPT = str(Path(sys.executable).parent / "mcp-sidecar")
"""The venv's console script, as `pip install` puts it on PATH."""
CAP = 4
TIMEOUT_S = 90
TOP = 1 if os.environ.get(ENGINE_ENV, "").strip().lower() in OFF else 2
"""The marked processes of the top sidecar: with the engine (the default), its front and the engine
it started; a sidecar started as a server runs in its own process (the engine off)."""


def project_with(project: Path, gateway: dict[str, Any]) -> None:
    project.mkdir(exist_ok=True)
    servers = {"gw": gateway, "basic": basic_stdio()}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def marked_env(home: Path, guard: Guard) -> dict[str, str]:
    return {"MCP_SIDECAR_HOME": str(home), TOKEN_VAR: guard.token}


async def directory_after_a_query(home: Path, project: Path, guard: Guard, *, nested: bool = False) -> str:
    """A host's `initialize`, `prompts/list` and one `mcp_tools` query (which connects every server),
    then the server directory of `mcp_tools`' description. `nested`: the host then queries through
    the gateway's own server `gw` (its `mcp_tools`), so that a copy of the gateway connects its servers."""
    params = StdioServerParameters(
        command=SCRIPT,
        args=["mcp", "--project", str(project), "--trust-project"],
        env={**os.environ, **marked_env(home, guard)},
        cwd=str(project),
    )
    async with Client(params, read_timeout_seconds=TIMEOUT_S) as host:
        await host.list_prompts()
        await host.call_tool("mcp_tools", {"query": "echo"})
        if nested:
            await host.call_tool("mcp_tools", {"activate": ["gw.mcp_tools"]})
            inner = await host.call_tool("mcp_call", {"id": "gw.mcp_tools", "arguments": {"query": "echo"}})
            assert not inner.is_error, inner
        listed = await host.list_tools()
        assert not guard.tripped, f"{guard.most} gateways were alive at once: the chain did not stop"
        alive = len(guard.alive())
        assert alive in (TOP, TOP + 1), alive  # the top sidecar, and the copy when nested
    (tool,) = [t for t in listed.tools if t.name == "mcp_tools"]
    assert isinstance(tool, types.Tool)
    assert tool.description is not None
    return tool.description


async def test_the_gateway_in_its_own_project_file_is_refused_before_it_starts(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    async with process_guard(CAP) as guard:
        project_with(project, {"command": SCRIPT, "args": ["mcp", "--project", ".", "--trust-project"]})
        # The definition's environment carries the guard's token, so a started copy is counted.
        config = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))
        config["mcpServers"]["gw"]["env"] = marked_env(home, guard)
        (project / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")
        described = await directory_after_a_query(home, project, guard)
        assert guard.most == TOP, f"{guard.most} gateways ran: the refused definition was started"
    assert "- gw (unavailable: server_starts_itself)" in described
    assert "- basic" in described


async def test_a_wrapper_script_starts_one_copy_and_the_chain_ends_there(home: Path, tmp_path: Path) -> None:
    """`./gw.sh` runs the gateway where no command line says so: one copy starts (the parent cannot
    know), and that copy refuses the same definition, since its parent started it through it."""
    project = tmp_path / "project"
    project.mkdir()
    wrapper = project / "gw.sh"
    log = tmp_path / "copy.log"
    wrapper.write_text(
        f'#!/bin/sh\nexec "{SCRIPT}" --log-file "{log}" mcp --project . --trust-project\n', encoding="utf-8"
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    async with process_guard(CAP) as guard:
        project_with(project, {"command": str(wrapper), "env": marked_env(home, guard)})
        described = await directory_after_a_query(home, project, guard, nested=True)
        assert guard.most == TOP + 1, f"{guard.most} processes at once (the top sidecar and one copy were expected)"
    # The copy answered as a server (the top sees it connected), and refused its own `gw` itself.
    assert "- gw" in described
    assert "- gw (unavailable" not in described
    assert "server gw: not started: it would start this sidecar itself" in log.read_text(encoding="utf-8")


async def test_the_editor_sidecar_refuses_a_global_gateway_and_says_why(home: Path) -> None:
    """The editor sidecar shares the rule: a global `mcp-sidecar mcp` reads the same global file (a
    server inherits no `MCP_SIDECAR_HOME`; the definition passes it on, so the copy's file is this one)."""
    async with process_guard(CAP) as guard, start_sidecar(home, env={TOKEN_VAR: guard.token}) as sidecar:
        gateway = {"command": SCRIPT, "args": ["mcp"], "env": marked_env(home, guard)}
        write_config(home, {"gw": gateway, "basic": basic_stdio()})
        await sidecar.request("mcp/config/reload")
        error = await sidecar.error("mcp/server/tools", {"server": "gw"})
        diag = diagnostic_of(error)
        assert (diag["code"], diag["server"]) == ("server_starts_itself", "gw")
        assert diag["message"].startswith("The definition runs mcp-sidecar mcp, which reads this same configuration")
        assert diag["hint"] == HINTS["server_starts_itself"]
        rows = {row["name"]: row for row in (await sidecar.request("mcp/status"))["servers"]}
        assert rows["gw"]["state"] == "failed"
        assert rows["gw"]["lastDiagnostic"]["code"] == "server_starts_itself"
        assert (await sidecar.request("mcp/server/tools", {"server": "basic"}))["tools"]
        assert guard.most == TOP  # the editor sidecar alone: nothing was started for `gw`


async def test_a_gateway_over_another_configuration_is_a_server_like_any_other(home: Path, tmp_path: Path) -> None:
    """Not every nested sidecar is a loop: one with another `MCP_SIDECAR_HOME` reads another file."""
    other = tmp_path / "other-home"
    other.mkdir()
    write_config(other, {"inner": basic_stdio()})
    async with process_guard(CAP) as guard, start_sidecar(home, env={TOKEN_VAR: guard.token}) as sidecar:
        gateway = {"command": SCRIPT, "args": ["mcp"], "env": {"MCP_SIDECAR_HOME": str(other), TOKEN_VAR: guard.token}}
        write_config(home, {"gw": gateway})
        await sidecar.request("mcp/config/reload")
        listed = await sidecar.request("mcp/server/tools", {"server": "gw"})
        (inner,) = [t for t in listed["tools"] if t["name"] == "mcp_tools"]
        assert "- inner" in inner["description"]
        assert guard.most == TOP + 1
