"""A changed trusted definition needs a new approval (real sidecar, real files, real servers).

Trust is bound to what was approved: a hash of each project definition. A `.mcp.json`
rewritten on disk (a `git pull`) leaves new and changed definitions disabled with
`trust_required` until `mcp/workspace/approve`; unchanged ones keep working.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from support.servers import basic_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

APPROVAL_REQUIRED = "mcp/approvalRequired"
TRUST_HINT = (
    "The project's definition of this server is new or changed since it was approved: review what it "
    "runs and approve it (the editor asks; mcp/workspace/approve; on the CLI pass --trust-project again)."
)


def _write_project(project: Path, servers: dict[str, Any]) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")


def _marker_server(marker: Path, **options: object) -> dict[str, object]:
    """What a hostile `git pull` puts in: a command that writes `marker` when it runs."""
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"
    return {"command": sys.executable, "args": ["-c", code], **options}


def _row(status: dict[str, Any], name: str) -> dict[str, Any]:
    return next(row for row in status["servers"] if row["name"] == name)


async def _pending_notification(client: SidecarClient, count: int) -> dict[str, Any]:
    await client.wait_for(lambda: len(client.notifications[APPROVAL_REQUIRED]) >= count, what="mcp/approvalRequired")
    note: dict[str, Any] = client.notifications[APPROVAL_REQUIRED][count - 1]
    return note


async def test_a_rewritten_project_file_waits_for_approval(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "ran"
    write_config(home, {})
    _write_project(project, {"kept": basic_stdio(), "proj": basic_stdio()})
    async with start_sidecar(home, project=project, trusted=True) as client:
        # First time this trusted workspace is seen: what is there counts as approved.
        status = await client.request("mcp/status")
        assert status["pendingApprovals"] == []
        assert (await client.request("mcp/server/tools", {"server": "proj"}))["tools"]

        # The file changes under the editor: one definition changed, one new, one unchanged.
        _write_project(
            project,
            {
                "kept": basic_stdio(),
                "proj": _marker_server(marker, env={"TOKEN": "literal-canary-value-1234"}),
                "added": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            },
        )
        note = await _pending_notification(client, 1)
        pending = {p["server"]: p for p in note["pending"]}
        assert sorted(pending) == ["added", "proj"]
        assert pending["proj"]["change"] == "changed"
        assert pending["proj"]["transport"] == "stdio"
        assert pending["proj"]["summary"].startswith(f"{sys.executable} -c ")
        assert pending["proj"]["summary"].endswith("(env: TOKEN)")
        assert "literal-canary" not in json.dumps(note)
        assert pending["added"] == {
            "server": "added",
            "change": "new",
            "definitionHash": pending["added"]["definitionHash"],
            "transport": "http",
            "summary": "http://127.0.0.1:9/mcp (headers: Authorization)",
        }

        status = await client.request("mcp/status")
        assert [p["server"] for p in status["pendingApprovals"]] == ["proj", "added"]
        row = _row(status, "proj")
        assert (row["state"], row["approvalRequired"], row["lastDiagnostic"]["code"]) == (
            "disabled",
            True,
            "trust_required",
        )
        assert _row(status, "kept")["approvalRequired"] is False

        error = await client.error("mcp/server/tools", {"server": "proj"})
        diag = diagnostic_of(error)
        assert (diag["code"], diag["hint"]) == ("trust_required", TRUST_HINT)
        assert diag["message"] == (
            "The project's definition of this server is new or changed since it was approved, so it does not run."
        )
        activated = await client.request("mcp/activate", {"ids": ["proj.echo"]})
        assert activated["results"][0]["reason"] == (
            "Server 'proj' waits for approval: its project definition is new or changed."
        )
        assert (await client.request("mcp/server/tools", {"server": "kept"}))["tools"], "unchanged keeps working"
        assert not marker.exists(), "the changed command never ran"

        # An approval names what the person saw: a stale hash is refused, the shown one accepted.
        stale = await client.request(
            "mcp/workspace/approve", {"approvals": [{"server": "proj", "definitionHash": "0" * 64}]}
        )
        assert stale["approved"] == []
        assert stale["notApproved"] == [
            {"server": "proj", "reason": "The definition changed again since it was shown; review it again."}
        ]
        done = await client.request(
            "mcp/workspace/approve",
            {"approvals": [{"server": "proj", "definitionHash": pending["proj"]["definitionHash"]}]},
        )
        assert (done["approved"], done["notApproved"]) == (["proj"], [])
        assert done["reload"]["changed"] == ["proj"]
        status = await client.request("mcp/status")
        assert [p["server"] for p in status["pendingApprovals"]] == ["added"]
        assert _row(status, "proj")["state"] == "idle"

    # Approvals outlive the process; what was not approved is still asked about.
    async with start_sidecar(home, project=project, trusted=True) as client:
        status = await client.request("mcp/status")
        assert [p["server"] for p in status["pendingApprovals"]] == ["added"]
        assert _row(status, "proj")["approvalRequired"] is False
    approvals = (home / "project-approvals.json").read_text(encoding="utf-8")
    assert "literal-canary" not in approvals
    assert "Bearer" not in approvals
    assert os.stat(home / "project-approvals.json").st_mode & 0o777 == 0o600


async def test_the_sidecars_own_edits_and_a_grant_of_trust_count_as_approved(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_config(home, {})
    _write_project(project, {"early": basic_stdio()})
    async with start_sidecar(home, project=project, trusted=False) as client:
        assert [r["name"] for r in (await client.request("mcp/status"))["servers"]] == []
        refused = diagnostic_of(
            await client.error("mcp/workspace/approve", {"approvals": [{"server": "early", "definitionHash": "x"}]})
        )
        assert refused["code"] == "project_untrusted"
        granted = await client.request("mcp/workspace/setTrusted", {"trusted": True})
        assert granted["added"] == ["early"]
        assert (await client.request("mcp/status"))["pendingApprovals"] == []

        definition = basic_stdio()
        added = await client.request("mcp/config/add", {"scope": "project", "server": "mine", "definition": definition})
        assert added["reload"]["added"] == ["mine"]
        assert (await client.request("mcp/server/tools", {"server": "mine"}))["tools"]
        await client.request("mcp/config/setEnabled", {"server": "mine", "enabled": False})
        await client.request("mcp/config/setEnabled", {"server": "mine", "enabled": True})
        await client.request("mcp/config/remove", {"scope": "project", "server": "early"})
        status = await client.request("mcp/status")
        assert status["pendingApprovals"] == []
        assert sorted(r["name"] for r in status["servers"]) == ["mine"]
        assert client.notifications[APPROVAL_REQUIRED] == []

        # Removed, then written back by hand: asked about again.
        _write_project(project, {"mine": definition, "early": basic_stdio()})
        note = await _pending_notification(client, 1)
        assert [(p["server"], p["change"]) for p in note["pending"]] == [("early", "new")]


async def test_control_characters_in_a_definition_never_reach_the_approval_summary(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_config(home, {})
    async with start_sidecar(home, project=project, trusted=True) as client:
        await client.request("mcp/status")  # the first (empty) record
        hidden = "true\x1b]52;c;ZXZpbA==\x07\x1b[2J\r\u202eevil\u200b\U000e0041 \nforged"
        _write_project(project, {"odd": {"command": "sh", "args": ["-c", hidden]}})
        note = await _pending_notification(client, 1)
    summary = note["pending"][0]["summary"]
    assert summary == "sh -c 'trueevil forged'"


async def test_the_cli_approves_with_trust_project_only(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_config(home, {})
    marker = tmp_path / "ran"

    async def cli(*args: str) -> dict[str, Any]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mcp_sidecar",
            "--json",
            "--project",
            str(project),
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "MCP_SIDECAR_HOME": str(home)},
        )
        stdout, _ = await asyncio.wait_for(proc.communicate(), 60)
        result: dict[str, Any] = json.loads(stdout)
        return result

    _write_project(project, {"proj": basic_stdio()})
    async with start_sidecar(home, project=project, trusted=True) as client:
        await client.request("mcp/status")  # the editor's first record: proj approved
    _write_project(project, {"proj": _marker_server(marker)})
    async with start_sidecar(home, project=project, trusted=True) as client:
        assert [p["server"] for p in (await client.request("mcp/status"))["pendingApprovals"]] == ["proj"]
    status = await cli("--trust-project", "status")
    assert status["pendingApprovals"] == []
    async with start_sidecar(home, project=project, trusted=True) as client:
        assert (await client.request("mcp/status"))["pendingApprovals"] == []
