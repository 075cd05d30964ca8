"""What the editors used to copy, served by the sidecar: `mcp/commandSpec`, the dry run of
`mcp/config/add` and `mcp/callTool` with `activate`, end to end against real MCP servers.

One sidecar (trusted project) serves the module; each test uses server names of its own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mcp_sidecar.services.command_line import COMMANDS, usage_of
from support.servers import basic_stdio, fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

INVALID_PARAMS = -32602
REQUEST_FAILED = -32000
SERVERS = ["basic", "broken", "off", "proj"]


class Env:
    def __init__(self, sidecar: SidecarClient, home: Path, project: Path) -> None:
        self.sidecar = sidecar
        self.home = home
        self.project = project

    def files(self) -> tuple[str, str]:
        return (self.home / "mcp.json").read_text(encoding="utf-8"), (self.project / ".mcp.json").read_text(
            encoding="utf-8"
        )

    async def dry(self, **params: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self.sidecar.request("mcp/config/add", {"dryRun": True, **params})
        return result

    async def add_fails(self, **params: Any) -> dict[str, Any]:
        return diagnostic_of(await self.sidecar.error("mcp/config/add", params))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    project = tmp_path_factory.mktemp("project")
    write_config(
        home,
        {
            "basic": basic_stdio(),
            "broken": fixture_stdio("crash_on_start.py"),
            "off": basic_stdio(disabled=True),
        },
    )
    write_config(project, {"proj": basic_stdio()}, ".mcp.json")
    async with start_sidecar(home, project=project, trusted=True, options={"trustGranted": True}) as sidecar:
        yield Env(sidecar, home, project)


# mcp/commandSpec


def entry(spec: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in spec["commands"] if c["name"] == name)
    return found


async def test_command_spec_lists_every_command_with_options_and_completions(env: Env) -> None:
    spec = await env.sidecar.request("mcp/commandSpec", {})
    assert [c["name"] for c in spec["commands"]] == list(COMMANDS)
    assert spec["servers"] == SERVERS
    assert spec["scopes"] == ["global", "project"]
    assert spec["transports"] == ["http", "stdio"]
    get = entry(spec, "get")
    assert get == {
        "name": "get",
        "usage": COMMANDS["get"].usage,
        "summary": COMMANDS["get"].summary,
        "options": [],
        "positionals": [{"name": "NAME", "completion": "server", "values": SERVERS, "optional": False}],
        "variadic": False,
        "changes": None,
    }
    add = entry(spec, "add")
    options = {o["name"]: o for o in add["options"]}
    assert options["--scope"] == {
        "name": "--scope",
        "kind": "value",
        "required": True,
        "values": ["global", "project"],
        "placeholder": None,
    }
    assert options["--transport"]["values"] == ["http", "stdio"]
    flag = {"name": "--replace", "kind": "flag", "required": False, "values": [], "placeholder": None}
    assert options["--replace"] == flag
    assert options["--header"]["kind"] == "multi"
    assert options["--header"]["placeholder"] == "'Name: value'"
    new_name: dict[str, object] = {"name": "NAME", "completion": None, "values": [], "optional": False}
    assert add["positionals"][0] == new_name, "add names a new server"
    assert add["changes"] == "config"
    assert entry(spec, "login")["options"][0]["name"] == "--no-browser"
    commands = {"name": "COMMAND", "completion": "command", "values": list(COMMANDS), "optional": True}
    assert entry(spec, "help")["positionals"] == [commands]
    file = {"name": "FILE", "completion": "file", "values": [], "optional": False}
    assert entry(spec, "import")["positionals"] == [file]
    tool = {"name": "TOOL", "completion": "tool", "values": [], "optional": True}
    assert entry(spec, "tools")["positionals"][1] == tool, "a tool of the server named before, may be left out"
    assert entry(spec, "prompt")["variadic"] is True
    assert entry(spec, "reconnect")["changes"] == "status"
    assert entry(spec, "tools")["changes"] is None


async def test_command_spec_of_one_command(env: Env) -> None:
    spec = await env.sidecar.request("mcp/commandSpec", {"command": "remove"})
    assert [c["name"] for c in spec["commands"]] == ["remove"]
    assert spec["commands"][0]["options"][0]["values"] == ["global", "project"]
    assert spec["commands"][0]["positionals"][0]["values"] == SERVERS


async def test_command_spec_bad_input(env: Env) -> None:
    error = await env.sidecar.error("mcp/commandSpec", {"command": "relaod"})
    assert error.code == INVALID_PARAMS
    assert diagnostic_of(error) == {
        "code": "command_invalid",
        "operation": "commandSpec",
        "message": "Unknown command 'relaod'. Did you mean 'reload'?",
        "hint": "Check the command against its usage (mcp help <command>); quote values with spaces.",
        "usage": usage_of(),
    }
    for params, message in (
        ([1], "Params must be a JSON object."),
        ({"command": 3}, "`command` must be a non-empty string."),
        ({"command": ""}, "`command` must be a non-empty string."),
    ):
        error = await env.sidecar.error("mcp/commandSpec", params)  # type: ignore[arg-type]
        assert error.code == INVALID_PARAMS, params
        assert diagnostic_of(error)["message"] == message


# mcp/config/add with dryRun


async def test_dry_run_returns_what_would_be_written_and_writes_nothing(env: Env) -> None:
    before = env.files()
    result = await env.dry(scope="global", server="dry-http", definition={"url": "https://mcp.example.com/mcp"})
    assert result == {
        "dryRun": True,
        "valid": True,
        "server": "dry-http",
        "scope": "global",
        "path": str(env.home / "mcp.json"),
        "definition": {"url": "https://mcp.example.com/mcp"},
        "action": "added",
        "overrides": None,
        "overriddenBy": None,
        "notes": [],
        "problems": [],
    }
    stdio = await env.dry(scope="project", server="dry-stdio", target='npx -y \'my pkg\' "a\\"b" c\\ d')
    assert stdio["valid"] is True
    assert stdio["definition"] == {"command": "npx", "args": ["-y", "my pkg", 'a"b', "c d"]}
    assert stdio["path"] == str(env.project / ".mcp.json")
    url = await env.dry(scope="global", server="dry-url", target="  http://127.0.0.1:9/mcp ")
    assert url["definition"] == {"url": "http://127.0.0.1:9/mcp"}
    assert env.files() == before
    status = await env.sidecar.request("mcp/status", {})
    assert [row["name"] for row in status["servers"]] == SERVERS


async def test_dry_run_reports_what_a_real_add_refuses_with_the_same_diagnostic(env: Env) -> None:
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"server": "bad name", "definition": {"command": "x"}}, "server", "configuration_invalid"),
        ({"server": "dry-bad", "definition": {"url": "ftp://x"}}, "definition", "configuration_invalid"),
        ({"server": "dry-quote", "target": "npx 'unclosed"}, "target", "command_invalid"),
        ({"server": "dry-empty", "target": "   "}, "target", "command_invalid"),
        ({"server": "basic", "definition": {"command": "x"}}, "server", "server_exists"),
        ({"server": "proj", "definition": {"command": "x"}}, "server", "server_exists"),
    ]
    before = env.files()
    for params, field, code in cases:
        dry = await env.dry(scope="global", **params)
        assert dry["valid"] is False, params
        assert [(p["field"], p["diagnostic"]["code"]) for p in dry["problems"]] == [(field, code)], params
        real = await env.add_fails(scope="global", **params)
        assert dry["problems"][0]["diagnostic"] == real, params
    assert env.files() == before
    quote = await env.dry(scope="global", server="dry-quote", target="npx 'unclosed")
    assert quote["problems"][0]["diagnostic"]["message"] == "The line has an unclosed single quote (')."
    assert quote["definition"] is None
    both = await env.dry(scope="global", server="bad.name", target="npx 'unclosed")
    assert [p["field"] for p in both["problems"]] == ["target", "server"]
    exists = await env.dry(scope="global", server="proj", definition={"command": "x"})
    assert exists["problems"][0]["diagnostic"]["message"] == (
        "A server named 'proj' is already defined in the project configuration; pass --replace to replace it "
        "(or override it)."
    )
    replaced = await env.dry(scope="global", server="basic", definition={"command": "x"}, replace=True)
    assert (replaced["valid"], replaced["action"]) == (True, "replaced")
    under = await env.dry(scope="global", server="proj", definition={"command": "x", "env": {"T": "v"}}, replace=True)
    assert (under["action"], under["overriddenBy"]) == ("added", "project")
    assert under["notes"] == [
        "`env.T` holds a literal value; prefer a ${VAR} reference or a secret command (!command) for credentials.",
        "The project definition of 'proj' takes precedence; this global one applies only without it.",
    ]


async def test_dry_run_of_an_untrusted_project(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    write_config(home, {})
    project.mkdir()
    async with start_sidecar(home, project=project, trusted=False) as sidecar:
        params = {"scope": "project", "server": "p", "definition": {"command": "x"}}
        dry = await sidecar.request("mcp/config/add", {**params, "dryRun": True})
        real = diagnostic_of(await sidecar.error("mcp/config/add", params))
        assert real["code"] == "project_untrusted"
        assert dry["problems"] == [{"field": "scope", "diagnostic": real}]
        assert (dry["valid"], dry["path"], dry["action"]) == (False, None, None)
    assert not (project / ".mcp.json").exists()


async def test_add_with_a_target_writes_the_split_command(env: Env) -> None:
    result = await env.sidecar.request(
        "mcp/config/add", {"scope": "global", "server": "target-add", "target": "my-server --flag 'two words'"}
    )
    assert result["action"] == "added"
    saved = json.loads((env.home / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["target-add"]
    assert saved == {"command": "my-server", "args": ["--flag", "two words"]}
    await env.sidecar.request("mcp/config/remove", {"scope": "global", "server": "target-add"})


async def test_dry_run_invalid_params(env: Env) -> None:
    for params, message in (
        ({"dryRun": "yes", "definition": {"command": "x"}}, "`dryRun` must be true or false."),
        ({"dryRun": True, "definition": {"command": "x"}, "target": "x"}, "Give `definition` or `target`, not both."),
        ({"dryRun": True, "target": 5}, "`target` must be a string of at most 65536 characters."),
        ({"dryRun": True}, "`definition` must be a JSON object (an `mcpServers` entry)."),
        ({"dryRun": True, "scope": "team", "definition": {"command": "x"}}, '`scope` must be "global" or "project".'),
    ):
        error = await env.sidecar.error("mcp/config/add", {"scope": "global", "server": "p", **params})
        assert error.code == INVALID_PARAMS, params
        assert diagnostic_of(error)["message"] == message, params


# mcp/callTool with activate


async def test_call_with_activate_activates_then_calls(env: Env) -> None:
    params = {"id": "basic.add", "arguments": {"a": 2, "b": 3}, "session": "act"}
    refused = await env.sidecar.error("mcp/callTool", params)
    assert diagnostic_of(refused)["code"] == "tool_not_active", "without activate nothing changes"
    result = await env.sidecar.request("mcp/callTool", {**params, "activate": True})
    assert (result["id"], result["isError"], result["content"]) == ("basic.add", False, [{"type": "text", "text": "5"}])
    assert result["activation"] == {"id": "basic.add", "status": "loaded"}
    active = await env.sidecar.request("mcp/activeTools", {"session": "act"})
    assert [t["id"] for t in active["tools"]] == ["basic.add"]
    again = await env.sidecar.request("mcp/callTool", {**params, "id": "mcp__basic__add", "activate": True})
    assert again["activation"] == {"id": "basic.add", "status": "already loaded"}
    plain = await env.sidecar.request("mcp/callTool", params)
    assert "activation" not in plain


async def test_call_with_activate_of_what_does_not_load_fails_like_activate(env: Env) -> None:
    cases = [
        ("basic.ad", "tool_not_found", "basic"),
        ("nowhere.tool", "tool_not_found", None),
        ("off.echo", "server_disabled", "off"),
        ("broken.echo", "connection_failed", "broken"),
    ]
    for tool_id, code, server in cases:
        activated = await env.sidecar.request("mcp/activate", {"ids": [tool_id], "session": "probe"})
        row = activated["results"][0]
        error = await env.sidecar.error(
            "mcp/callTool", {"id": tool_id, "arguments": {}, "session": "act2", "activate": True}
        )
        assert error.code == REQUEST_FAILED, tool_id
        data = diagnostic_of(error)
        assert data["code"] == code, tool_id
        assert data.get("server") == server, tool_id
        assert data["nearby"] == row["nearby"], tool_id
        if "diagnostic" in row:
            assert data == {**row["diagnostic"], "nearby": row["nearby"]}, tool_id
        else:
            assert (data["operation"], data["message"]) == ("activate", row["reason"]), tool_id
    near = diagnostic_of(await env.sidecar.error("mcp/callTool", {"id": "basic.ad", "activate": True}))
    assert near["message"] == "Server 'basic' has no tool named 'ad'."
    assert near["nearby"] == ["basic.add"]
    active = await env.sidecar.request("mcp/activeTools", {"session": "act2"})
    assert active["tools"] == []


async def test_call_with_activate_invalid_params(env: Env) -> None:
    error = await env.sidecar.error("mcp/callTool", {"id": "basic.add", "activate": "yes"})
    assert error.code == INVALID_PARAMS
    assert diagnostic_of(error)["message"] == "`activate` must be true or false."
