"""Invalid configuration end to end: a broken definition never looks like an empty catalog.

At start the valid definitions load beside an invalid one; on reload an invalid file keeps
the previous setup. Either way `mcp_tools` (discovery and activation) names every broken
definition, and a file whose servers are unknown, with `configuration_invalid`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp_sidecar.output.activation_text import CALL_HINT, tokens_line
from mcp_sidecar.output.discovery_text import LOADED_NOTE
from support.cli import cli, plain_status
from support.servers import basic_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

INVOKE = "mcp/modelTool/invoke"
HINT = (
    "Check JSON syntax, supported fields, transport type and required environment variables, "
    "then reload the configuration."
)


async def invoke(sidecar: SidecarClient, arguments: dict[str, Any], session: str = "model") -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request(INVOKE, {"arguments": arguments, "session": session})
    return result


async def test_an_invalid_definition_beside_a_valid_one_loads_the_valid_one_at_start(home: Path) -> None:
    path = write_config(home, {"basic": basic_stdio(), "broken": {"command": sys.executable, "colour": "blue"}})
    problem = f"{path}: server 'broken': field `colour` is not a supported field."
    async with start_sidecar(home) as sidecar:
        found = await invoke(sidecar, {"query": "echo", "limit": 1})
        assert found["isError"] is False
        assert found["text"].splitlines() == [
            'mcp discover "echo"',
            " ○ basic.echo(text) — Echo the given text back.",
            f" ✘ broken broken: configuration_invalid — {problem}",
            'Activate the tools you need by their exact ids: mcp_tools({"activate": ["basic.echo"]})',
        ]
        diag = {
            "code": "configuration_invalid",
            "operation": "configuration",
            "server": "broken",
            "message": problem,
            "hint": HINT,
        }
        assert found["details"]["unavailable"] == [{"server": "broken", "kind": "all", "diagnostic": diag}]

        loaded = await invoke(sidecar, {"activate": ["basic.echo", "broken.echo"]})
        assert loaded["isError"] is False
        assert loaded["text"].splitlines() == [
            "mcp activate",
            " ✔ basic.echo · loaded",
            "   basic.echo(text: string) — Echo the given text back.",
            " ✘ broken.echo · not loaded: Server 'broken' is configured but not loaded."
            f" [configuration_invalid] {problem}",
            CALL_HINT,
            tokens_line(loaded["details"]["tokens"]),
        ]
        assert loaded["details"]["results"][1]["diagnostic"] == diag
        called = await sidecar.request(
            "mcp/callTool", {"id": "basic.echo", "arguments": {"text": "hi"}, "session": "model"}
        )
        assert called["content"][0]["text"] == "hi"

        # Every per-server method names the definition's problem, never "no such server".
        error = await sidecar.error("mcp/server/tools", {"server": "broken"})
        assert diagnostic_of(error) == {**diag, "operation": "tools"}
        error = await sidecar.error("mcp/discover", {"query": "echo", "server": "broken"})
        assert diagnostic_of(error) == {**diag, "operation": "discover"}
        missing = await sidecar.error("mcp/server/tools", {"server": "nope"})
        assert diagnostic_of(missing)["code"] == "server_not_found"

        status = await sidecar.request("mcp/status")
        assert [row["name"] for row in status["servers"]] == ["basic"]
        assert status["diagnostics"] == [diag]


async def test_a_file_that_is_not_json_leaves_the_other_files_servers_usable(home: Path, tmp_path: Path) -> None:
    write_config(home, {"basic": basic_stdio()})
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text('{"mcpServers": {', encoding="utf-8")
    problem = f"{project / '.mcp.json'}: invalid JSON at line 1, column 17."
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        found = await invoke(sidecar, {"query": "echo", "limit": 1})
        assert found["text"].splitlines() == [
            'mcp discover "echo"',
            " ○ basic.echo(text) — Echo the given text back.",
            f" ✘ configuration broken: configuration_invalid — {problem}",
            'Activate the tools you need by their exact ids: mcp_tools({"activate": ["basic.echo"]})',
        ]
        diag = {"code": "configuration_invalid", "operation": "configuration", "message": problem, "hint": HINT}
        assert found["details"]["unavailable"] == [{"server": "", "kind": "all", "diagnostic": diag}]

        # Its servers are unknown: an id of one of them is not guessed, but the file is named.
        loaded = await invoke(sidecar, {"activate": ["project-server.echo"]})
        assert (loaded["isError"], loaded["text"].splitlines()) == (
            True,
            [
                "mcp activate",
                " ✘ project-server.echo · not loaded: The id does not start with a configured server name."
                f" [configuration_invalid] {problem} Nearby: basic.echo",
            ],
        )
        status = await sidecar.request("mcp/status")
        assert [row["name"] for row in status["servers"]] == ["basic"]
        assert status["diagnostics"] == [diag]


async def test_reload_with_an_invalid_file_keeps_the_previous_setup_and_names_the_broken_server(home: Path) -> None:
    path = write_config(home, {"basic": basic_stdio()})
    async with start_sidecar(home) as sidecar:
        loaded = await invoke(sidecar, {"activate": ["basic.echo"]})
        assert loaded["text"].splitlines() == [
            "mcp activate",
            " ✔ basic.echo · loaded",
            "   basic.echo(text: string) — Echo the given text back.",
            CALL_HINT,
            tokens_line(loaded["details"]["tokens"]),
        ]

        broken = {"mcpServers": {"basic": {**basic_stdio(), "timeoutMs": 5}, "extra": basic_stdio()}}
        path.write_text(json.dumps(broken), encoding="utf-8")
        problem = f"{path}: server 'basic': field `timeoutMs` must be an integer from 100 to 600000."
        waiting = (
            "Server 'extra' is not loaded: the configuration has invalid definitions, "
            "so the previous setup stays in use."
        )
        error = await sidecar.error("mcp/config/reload", {})
        assert diagnostic_of(error)["message"] == (
            f"The configuration is invalid; the previous setup stays in use: {problem} {waiting}"
        )

        # The previous definition still serves: its tools are found, callable and activatable.
        found = await invoke(sidecar, {"query": "echo", "limit": 1})
        kept = f"{problem} Until it is fixed, the definition already in use stays."
        assert found["text"].splitlines() == [
            'mcp discover "echo"',
            " ● basic.echo(text) [loaded] — Echo the given text back.",
            f" ✘ basic broken: configuration_invalid — {kept}",
            f" ✘ extra broken: configuration_invalid — {waiting}",
            LOADED_NOTE,
        ]
        called = await sidecar.request(
            "mcp/callTool", {"id": "basic.echo", "arguments": {"text": "kept"}, "session": "model"}
        )
        assert called["content"][0]["text"] == "kept"
        # A definition the invalid file adds is configured but not loaded: said so, never "no such server".
        more = await invoke(sidecar, {"activate": ["basic.add", "extra.echo"]})
        assert more["text"].splitlines() == [
            "mcp activate",
            " ✔ basic.add · loaded",
            "   basic.add(a: integer, b: integer) — Add two integers.",
            " ✘ extra.echo · not loaded: Server 'extra' is configured but not loaded."
            f" [configuration_invalid] {waiting}",
            CALL_HINT,
            tokens_line(more["details"]["tokens"]),
        ]
        status = await sidecar.request("mcp/status")
        assert [row["name"] for row in status["servers"]] == ["basic"]
        assert [(d["server"], d["message"]) for d in status["diagnostics"]] == [("basic", problem), ("extra", waiting)]


async def test_files_never_valid_apply_what_is_valid_on_reload(home: Path) -> None:
    path = home / "mcp.json"
    path.write_text("{not json", encoding="utf-8")
    async with start_sidecar(home) as sidecar:
        assert (await sidecar.request("mcp/status"))["servers"] == []
        write_config(home, {"basic": basic_stdio(), "broken": {"url": "ftp://x"}})
        problem = f"{path}: server 'broken': field `url` must be an http:// or https:// URL."
        summary = await sidecar.request("mcp/config/reload", {})
        # The file watcher may have applied it first: either way `basic` is in, `broken` left out.
        assert (summary["applied"], summary["added"] + summary["unchanged"]) == (True, ["basic"])
        assert [(d["server"], d["message"]) for d in summary["diagnostics"]] == [("broken", problem)]
        found = await invoke(sidecar, {"query": "echo", "limit": 1})
        assert found["text"].splitlines()[1:3] == [
            " ○ basic.echo(text) — Echo the given text back.",
            f" ✘ broken broken: configuration_invalid — {problem}",
        ]
        again = await sidecar.request("mcp/command", {"line": "reload"})
        assert again["text"].splitlines() == [
            "Configuration applied: 1 unchanged.",
            f"  Left out, invalid: [configuration_invalid] {problem}",
        ]


async def test_the_cli_status_lists_the_valid_server_and_the_broken_definition(home: Path) -> None:
    path = write_config(home, {"basic": basic_stdio(), "broken": {"command": sys.executable, "colour": "blue"}})
    problem = f"{path}: server 'broken': field `colour` is not a supported field."
    status = (await cli(home, "--json", "status")).json()
    assert [row["name"] for row in status["servers"]] == ["basic"]
    assert [(d["server"], d["message"]) for d in status["diagnostics"]] == [("broken", problem)]
    shown = await cli(home, "status")
    assert shown.code == 0
    assert plain_status(shown.stdout).splitlines()[-1] == f"[configuration_invalid] {problem}"
    assert "basic" in shown.stdout.splitlines()[1]


async def test_a_valid_project_definition_is_approved_beside_an_invalid_one(home: Path, tmp_path: Path) -> None:
    write_config(home, {})
    project = tmp_path / "project"
    project.mkdir()
    servers = {"proj": basic_stdio(), "bad": {"command": sys.executable, "colour": "blue"}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        status = await sidecar.request("mcp/status")
        [pending] = status["pendingApprovals"]
        assert (pending["server"], [d["server"] for d in status["diagnostics"]]) == ("proj", ["bad"])
        approvals = [
            {"server": "proj", "definitionHash": pending["definitionHash"]},
            {"server": "bad", "definitionHash": "0" * 64},
        ]
        done = await sidecar.request("mcp/workspace/approve", {"approvals": approvals})
        assert (done["approved"], done["notApproved"]) == (
            ["proj"],
            [{"server": "bad", "reason": "The project configuration defines no such server."}],
        )
        assert (done["reload"]["applied"], done["reload"]["changed"]) == (True, ["proj"])
        loaded = await invoke(sidecar, {"activate": ["proj.echo"]})
        assert loaded["text"].splitlines() == [
            "mcp activate",
            " ✔ proj.echo · loaded",
            "   proj.echo(text: string) — Echo the given text back.",
            CALL_HINT,
            tokens_line(loaded["details"]["tokens"]),
        ]
