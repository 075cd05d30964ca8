"""`/mcp` command lines end to end: `mcp/command`, `workspace/executeCommand` and `mcp-sidecar run`,
with real configuration files in temporary directories and real MCP servers.

One sidecar serves the module; each test uses server names of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from mcp_sidecar.output.render import status_matrix
from mcp_sidecar.services.command_line import usage_of
from support.cli import cli as run_cli
from support.cli import plain_status
from support.servers import basic_stdio, pid_alive, started_pids
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

INVALID_PARAMS = -32602
REQUEST_FAILED = -32000
SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


class Env:
    def __init__(self, sidecar: SidecarClient, home: Path, project: Path, counters: Path) -> None:
        self.sidecar = sidecar
        self.home = home
        self.project = project
        self.counters = counters

    @property
    def global_file(self) -> Path:
        return self.home / "mcp.json"

    @property
    def project_file(self) -> Path:
        return self.project / ".mcp.json"

    def servers(self, path: Path) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]
        return data

    async def run(self, line: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.sidecar.request("mcp/command", {"line": line})
        return result

    async def fails(self, line: str) -> dict[str, Any]:
        return diagnostic_of(await self.sidecar.error("mcp/command", {"line": line}))

    async def state(self, server: str) -> str:
        status = await self.sidecar.request("mcp/status")
        return str(next(r["state"] for r in status["servers"] if r["name"] == server))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    project = tmp_path_factory.mktemp("project")
    counters = tmp_path_factory.mktemp("counters")
    servers = {
        "toggled": basic_stdio("--counter-file", str(counters / "toggled")),
        "browse": basic_stdio(),
        "shadowed": {"url": "https://global.example/mcp"},
    }
    # A global file with unrelated settings and 0644 permissions, which edits keep.
    (home / "mcp.json").write_text(json.dumps({"theme": "dark", "mcpServers": servers}, indent=2), encoding="utf-8")
    os.chmod(home / "mcp.json", 0o644)
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"shadowed": {"url": "https://project.example/mcp"}}}), encoding="utf-8"
    )
    async with start_sidecar(home, project=project, trusted=True) as client:
        yield Env(client, home, project, counters)


async def test_list_is_the_status_matrix(env: Env) -> None:
    for line in ("", "list", "status", "/mcp", "/mcp status"):
        result = await env.run(line)
        assert result["command"] == "list"
        assert result["text"] == status_matrix(result["data"])
    names = [row["name"] for row in result["data"]["servers"]]
    assert names[:3] == ["toggled", "browse", "shadowed"]
    assert plain_status(result["text"]).splitlines()[0].split() == [
        "Server",
        "State",
        "Scope",
        "Transport",
        "Tools",
        "Tokens",
        "Resources",
        "Prompts",
        "Loaded",
    ]


async def test_usage_errors(env: Env) -> None:
    error = await env.sidecar.error("mcp/command", {"line": "lst"})
    assert error.code == INVALID_PARAMS
    assert diagnostic_of(error) == {
        "code": "command_invalid",
        "operation": "command",
        "message": "Unknown command 'lst'. Did you mean 'list'?",
        "hint": "Check the command against its usage (mcp help <command>); quote values with spaces.",
        "usage": usage_of(),
    }
    diag = await env.fails("add --scope global --frobnicate x https://x.example")
    assert (diag["message"], diag["usage"]) == ("Unknown option '--frobnicate' for add.", usage_of("add"))
    diag = await env.fails("add --scope global x 'https://unclosed")
    assert diag["message"] == "The line has an unclosed single quote (')."
    diag = await env.fails("import --scope global x.json --confirm")
    assert (diag["message"], diag["usage"]) == (
        "--confirm needs --select naming the servers to import.",
        usage_of("import"),
    )
    error = await env.sidecar.error("mcp/command", {"line": 5})
    assert diagnostic_of(error)["code"] == "invalid_params"
    help_result = await env.run("help add")
    assert help_result == {"command": "help", "data": {"usage": usage_of("add")}, "text": usage_of("add")}


async def test_quoting_reaches_the_file_literally(env: Env) -> None:
    line = (
        "add --scope global --env 'GREETING=hello \"world\"' --env PATH_LIKE=C:\\\\tools quoted -- "
        "python3 '/path with spaces/server.py' \"$(rm -rf /)\" '*.py' '|' 'C:\\Users\\me\\x.exe' my\\ arg"
    )
    result = await env.run(line)
    assert result["command"] == "add"
    assert env.servers(env.global_file)["quoted"] == {
        "command": "python3",
        "args": ["/path with spaces/server.py", "$(rm -rf /)", "*.py", "|", "C:\\Users\\me\\x.exe", "my arg"],
        "env": {"GREETING": 'hello "world"', "PATH_LIKE": "C:\\tools"},
    }
    get = await env.run("get quoted")
    assert get["data"]["connection"] == {
        "command": "hidden",
        "args": "hidden (6 values)",
        "cwd": None,
        "env": {"GREETING": "hidden", "PATH_LIKE": "hidden"},
    }
    assert "rm -rf" not in json.dumps(get)
    await env.run("remove --scope global quoted")


async def test_add_and_remove_with_scopes(env: Env) -> None:
    result = await env.run(
        "add --scope global --header 'X-Api-Key: ${HOME}' --oauth-callback-port 9000 web https://mcp.example.com/mcp"
    )
    assert result["text"] == (
        f"Added 'web' to the global configuration ({env.global_file}).\n"
        "Nothing was started: it connects when first needed."
    )
    assert result["data"]["reload"]["added"] == ["web"]
    assert env.servers(env.global_file)["web"] == {
        "url": "https://mcp.example.com/mcp",
        "headers": {"X-Api-Key": "${HOME}"},
        "oauthCallbackPort": 9000,
    }
    data = json.loads(env.global_file.read_text(encoding="utf-8"))
    assert data["theme"] == "dark"  # unrelated settings survive
    assert stat.S_IMODE(env.global_file.stat().st_mode) == 0o644  # and so do permissions
    assert await env.state("web") == "idle"

    diag = await env.fails("add --scope global web https://other.example/mcp")
    assert diag["code"] == "server_exists"
    diag = await env.fails("add --scope global --header 'X: ${SURELY_NOT_SET_VARIABLE}' web2 https://x.example/mcp")
    assert (diag["code"], diag["server"]) == ("configuration_invalid", "web2")
    assert "web2" not in env.servers(env.global_file)

    result = await env.run("add --scope project --replace web https://project.example/mcp")
    assert result["data"]["overrides"] == "global"
    assert result["text"].splitlines()[1] == "It overrides the global definition of 'web'."
    result = await env.run("add --scope global --replace web https://global2.example/mcp")
    assert result["data"]["overriddenBy"] == "project"
    get = await env.run("get web")
    assert (get["data"]["scope"], get["data"]["overridesGlobal"]) == ("project", True)

    result = await env.run("remove --scope project web")
    assert result["text"].splitlines()[:2] == [
        f"Removed 'web' from the project configuration ({env.project_file}).",
        "A global definition of 'web' remains and is now in effect.",
    ]
    assert (await env.run("get web"))["data"]["scope"] == "global"
    before = env.project_file.read_bytes(), env.global_file.read_bytes()
    diag = await env.fails("remove --scope project web")
    assert diag["code"] == "server_not_found"
    assert (env.project_file.read_bytes(), env.global_file.read_bytes()) == before
    await env.run("remove --scope global web")
    assert "web" not in env.servers(env.global_file)


async def test_disable_closes_and_deactivates_and_enable_connects_nothing(env: Env) -> None:
    sidecar = env.sidecar
    activated = await sidecar.request("mcp/activate", {"ids": ["toggled.echo", "toggled.add"], "session": "t"})
    assert {r["status"] for r in activated["results"]} == {"loaded"}
    [pid] = started_pids(env.counters / "toggled")
    assert pid_alive(pid)
    before = len(sidecar.notifications["mcp/activeToolsChanged"])

    result = await env.run("disable toggled")
    assert result["data"]["scope"] == "global"
    assert (result["data"]["changed"], result["data"]["deactivated"]) == (True, ["toggled.add", "toggled.echo"])
    assert result["text"] == (
        f"Disabled 'toggled' in the global configuration ({env.global_file}).\n"
        "It will not connect (an open connection was closed); 2 active tool(s) were deactivated: "
        "toggled.add, toggled.echo."
    )
    await wait_until(lambda: not pid_alive(pid), what="the disabled server's process to exit")
    assert sidecar.notifications["mcp/activeToolsChanged"][before:] == [
        {"session": "t", "removed": ["toggled.echo", "toggled.add"], "reason": "server disabled"}
    ]
    assert (await sidecar.request("mcp/activeTools", {"session": "t"}))["tools"] == []
    assert await env.state("toggled") == "disabled"
    assert env.servers(env.global_file)["toggled"]["disabled"] is True
    error = await sidecar.error("mcp/discover", {"query": "echo", "server": "toggled"})
    assert diagnostic_of(error)["code"] == "server_disabled"

    snapshot = env.global_file.read_bytes()
    again = await env.run("disable toggled")
    assert again["data"]["changed"] is False
    assert (
        again["text"]
        == f"'toggled' is already disabled in the global configuration ({env.global_file}); nothing changed."
    )
    assert env.global_file.read_bytes() == snapshot

    result = await env.run("enable toggled")
    assert result["text"] == (
        f"Enabled 'toggled' in the global configuration ({env.global_file}).\n"
        "Nothing was connected: it connects when first needed."
    )
    assert "disabled" not in env.servers(env.global_file)["toggled"]
    assert await env.state("toggled") == "idle"
    assert started_pids(env.counters / "toggled") == [pid]  # enabling started nothing
    assert (await sidecar.request("mcp/activeTools", {"session": "t"}))["tools"] == []

    # The project file wins when it defines the server.
    result = await env.run("disable shadowed")
    assert (result["data"]["scope"], result["data"]["path"]) == ("project", str(env.project_file))
    assert "disabled" not in env.servers(env.global_file)["shadowed"]
    await env.run("enable shadowed")
    diag = await env.fails("enable nosuch")
    assert (diag["code"], diag["message"]) == (
        "server_not_found",
        "No configuration file defines a server named 'nosuch'.",
    )


async def test_inspection_and_lifecycle_commands(env: Env) -> None:
    tools = await env.run("tools browse")
    total = tools["data"]["tokens"]
    assert total == sum(t["tokens"] for t in tools["data"]["tools"]) > 0
    assert tools["text"].splitlines()[0] == f"browse · 8 tools (live) · {total:,} tokens (estimated)"
    assert [t["id"] for t in tools["data"]["tools"]][:2] == ["browse.echo", "browse.add"]
    reconnected = await env.run("reconnect browse")
    assert (reconnected["data"]["state"], reconnected["text"]) == (
        "connected",
        "Reconnected 'browse': ● connected, 8 tools.",
    )
    refreshed = await env.run("refresh browse")
    assert refreshed["text"].startswith("Refreshed 'browse': tools 8, resources 0")
    get = await env.run("get browse")
    assert get["text"].splitlines()[0] == "● browse · connected · global · stdio"
    assert "  command: hidden" in get["text"].splitlines()
    assert (await env.fails("tools nosuch"))["code"] == "server_not_found"


async def test_tools_with_a_tool_shows_its_signature(env: Env) -> None:
    shown = await env.run("tools browse echo")
    assert shown["command"] == "tools"
    assert (shown["data"]["id"], shown["data"]["inputSchema"]["required"]) == ("browse.echo", ["text"])
    assert shown["text"] == ("browse.echo\n\nEcho the given text back.\n\nParameters\n  text  string · required")
    diag = await env.fails("tools browse ech")
    nearby = ["browse.echo", "browse.crash"]
    assert (diag["code"], diag["server"], diag["nearby"]) == ("tool_not_found", "browse", nearby)
    assert diag["message"] == 'The server\'s tool "ech" is not in its catalog. Nearby: browse.echo, browse.crash.'
    assert (await env.fails("tools browse echo extra"))["message"] == "Unexpected argument 'extra' for tools."


@pytest.mark.parametrize("line", ["login browse", "login browse --no-browser", "logout browse"])
async def test_oauth_commands_refuse_stdio_servers(env: Env, line: str) -> None:
    diag = await env.fails(line)
    assert (diag["code"], diag["message"]) == ("not_supported", "OAuth applies to HTTP servers only.")


async def test_prompt_needs_a_prompt_the_server_advertises(env: Env) -> None:
    diag = await env.fails("prompt browse review_code code=x")
    assert (diag["code"], diag["operation"], diag["server"]) == ("prompt_not_found", "prompt", "browse")


async def test_watch_commands_need_an_interactive_client(env: Env) -> None:
    # This module's client is headless (interactive: false); watches are for a person.
    diag = await env.fails("subscribe browse file:///x")
    assert (diag["code"], diag["server"]) == ("interactive_required", "browse")
    assert (await env.run("subscriptions"))["text"] == "No resource watches."
    assert (await env.run("unsubscribe browse file:///x"))["text"] == "file:///x on 'browse' was not watched."


async def test_login_for_an_unknown_server_says_so_first(env: Env) -> None:
    assert (await env.fails("login nosuch"))["code"] == "server_not_found"


async def test_execute_command_runs_the_same_lines(env: Env) -> None:
    def execute(*arguments: Any) -> types.ExecuteCommandParams:
        return types.ExecuteCommandParams(command="mcp.command", arguments=list(arguments))

    result = await env.sidecar.request("workspace/executeCommand", execute("list"))
    assert result["command"] == "list"
    assert result["text"] == status_matrix(result["data"])
    as_object = await env.sidecar.request("workspace/executeCommand", execute({"line": "help"}))
    assert as_object["text"] == usage_of()
    error = await env.sidecar.error("workspace/executeCommand", execute("lst"))
    assert error.code == INVALID_PARAMS
    assert diagnostic_of(error)["code"] == "command_invalid"
    error = await env.sidecar.error("workspace/executeCommand", execute())
    assert diagnostic_of(error)["code"] == "invalid_params"


async def test_import_preview_then_confirm(env: Env) -> None:
    sample = SAMPLES / "claude_desktop_config.json"
    preview = await env.run(f"import --scope global '{sample}'")
    assert "INLINECANARY" not in json.dumps(preview)
    assert preview["data"]["written"] is False
    lines = preview["text"].splitlines()
    assert lines[0] == f"mcp import · {sample} (mcpServers JSON (Claude Desktop, Claude Code, Cursor))"
    assert " ○ github · stdio · command, args, env [GITHUB_PERSONAL_ACCESS_TOKEN] (values hidden)" in lines
    assert "     inline values (possibly credentials): env.GITHUB_PERSONAL_ACCESS_TOKEN" in lines
    assert lines[-1] == f"To import: import --scope global {sample} --select filesystem,github --confirm"
    names_before = set(env.servers(env.global_file))
    result = await env.run(f"import --scope global {sample} --select filesystem --confirm")
    assert result["data"]["imported"] == ["filesystem"]
    assert set(env.servers(env.global_file)) == names_before | {"filesystem"}
    assert await env.state("filesystem") == "idle"  # never started
    diag = await env.fails(f"import --scope global {sample} --select filesystem --confirm")
    assert diag["code"] == "server_exists"
    await env.run("remove --scope global filesystem")
    diag = await env.fails(f"import --scope global {SAMPLES / 'missing.json'}")
    assert diag["code"] == "import_invalid"


async def test_reload_keeps_the_previous_setup_when_invalid(env: Env) -> None:
    original = env.global_file.read_text(encoding="utf-8")
    await env.sidecar.request("mcp/activate", {"ids": ["browse.echo"], "session": "reload"})
    try:
        env.global_file.write_text('{"mcpServers": {"browse": {"command": 5}}}', encoding="utf-8")
        diag = await env.fails("reload")
        assert diag["code"] == "configuration_invalid"
        assert "server 'browse': field `command` must be a non-empty string." in diag["message"]
        status = await env.sidecar.request("mcp/status")
        assert "browse" in [r["name"] for r in status["servers"]]
        assert [d["code"] for d in status["diagnostics"]] == ["configuration_invalid"]
        # Edits report that their reload was not applied (and still write their own file).
        result = await env.run("add --scope project --replace scratch https://scratch.example/mcp")
        assert result["data"]["reload"]["applied"] is False
        assert "Configuration not applied" in result["text"]
        await env.run("remove --scope project scratch")
    finally:
        env.global_file.write_text(original, encoding="utf-8")
    result = await env.run("reload")
    assert result["data"]["applied"] is True
    assert result["text"].startswith("Configuration applied: ")
    # An explicit reload closes connections; unchanged tools stay active.
    active = await env.sidecar.request("mcp/activeTools", {"session": "reload"})
    assert [t["id"] for t in active["tools"]] == ["browse.echo"]
    assert await env.state("browse") == "idle"


async def test_external_edits_are_picked_up_by_the_watcher(env: Env) -> None:
    async def names() -> list[str]:
        status = await env.sidecar.request("mcp/status")
        return [r["name"] for r in status["servers"]]

    data = json.loads(env.global_file.read_text(encoding="utf-8"))
    data["mcpServers"]["watched"] = {"url": "https://watched.example/mcp"}
    env.global_file.write_text(json.dumps(data), encoding="utf-8")
    deadline = asyncio.get_running_loop().time() + 15
    while "watched" not in await names():
        assert asyncio.get_running_loop().time() < deadline, "the watcher never reloaded"
        await asyncio.sleep(0.05)
    # Another process (the CLI) edits the same file: this sidecar sees it too.
    run = await cli(env.home, "run", "remove --scope global watched")
    assert run == (
        0,
        f"Removed 'watched' from the global configuration ({env.global_file}).\n"
        "OAuth credentials are kept; run `logout watched` to remove them.\n",
        "",
    )
    while "watched" in await names():
        assert asyncio.get_running_loop().time() < deadline + 15, "the CLI edit never reached the sidecar"
        await asyncio.sleep(0.05)


async def cli(home: Path, *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    run = await run_cli(home, *args, cwd=cwd or home.parent)
    return run.code, run.stdout, run.stderr


async def test_cli_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    added, listed, usage, bad_scope, words = await asyncio.gather(
        cli(home, "run", "add --scope global docs https://docs.example/mcp"),
        cli(home, "--json", "run", "help"),
        cli(home, "run", "lst"),
        cli(home, "run", "add --scope project x https://x.example/mcp", cwd=project),
        cli(home, "run", "help", "add"),
    )
    assert added == (
        0,
        f"Added 'docs' to the global configuration ({home / 'mcp.json'}).\n"
        "Nothing was started: it connects when first needed.\n",
        "",
    )
    assert stat.S_IMODE((home / "mcp.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert json.loads(listed[1]) == {"command": "help", "data": {"usage": usage_of()}, "text": usage_of()}
    hint = "Check the command against its usage (mcp help <command>); quote values with spaces."
    assert usage == (2, "", f"[command_invalid] Unknown command 'lst'. Did you mean 'list'? {hint}\n{usage_of()}\n")
    assert bad_scope[0] == 1
    assert bad_scope[2].startswith("x: [project_untrusted] The workspace is not trusted")
    assert words == (0, usage_of("add") + "\n", "")
    trusted = await cli(
        home, "--trust-project", "--json", "run", "add --scope project x https://x.example/mcp", cwd=project
    )
    assert trusted[0] == 0
    assert json.loads(trusted[1])["data"]["path"] == str(project / ".mcp.json")
    status = await cli(home, "--trust-project", "run", "list", cwd=project)
    assert [line.split()[1] for line in plain_status(status[1]).splitlines()[1:] if line] == ["docs", "x"]


async def test_parallel_sidecars_editing_one_file_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    names = [f"par{i}" for i in range(6)]
    runs = await asyncio.gather(
        *(cli(home, "run", f"add --scope global {name} https://{name}.example/mcp") for name in names)
    )
    assert [run[0] for run in runs] == [0] * len(names)
    data = json.loads((home / "mcp.json").read_text(encoding="utf-8"))
    assert sorted(data["mcpServers"]) == names
