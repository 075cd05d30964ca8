"""The headless CLI as a user runs it: `mcp-sidecar SUBCOMMAND` in a fresh process.

Independent invocations run concurrently: each one starts the SDK and often an MCP server,
which is most of the cost.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from mcp_sidecar import __version__
from mcp_sidecar.output.activation_text import CALL_HINT
from support.cli import Run, check_engine_lines, cli, split_engine, without_engine
from support.locked_keyring import NO_KEYRING, locked_keyring_env
from support.servers import basic_stdio, fixture_stdio
from support.sidecar import write_config
from support.tokens import definition_tokens

SEARCH_SIGNATURE = (
    "sig.search — Search documents\n"
    "\n"
    "Search the documents.\n"
    "\n"
    "Newest first; at most `limit` results.\n"
    "\n"
    "Parameters\n"
    "  query  string · required\n"
    "    What to look for.\n"
    "\n"
    '  mode  string · optional · default "fast"\n'
    '    one of: "fast", "exact"\n'
    "    How to match.\n"
    "\n"
    "  limit  integer · optional · default 10\n"
    "\n"
    "  filters  {tags: array of string, after?: string|null = null}|null · optional · default null\n"
    "\n"
    "  filters.tags  array of string · required\n"
    "    Only documents with every tag.\n"
    "\n"
    "  filters.after  string|null · optional · default null\n"
    "    ISO date; newer documents only.\n"
    "\n"
    "Annotations: read-only, idempotent, closed world\n"
)
"""`tools sig search`: the signatures.py fixture's search tool, for a person."""

IMPORTS = Path(__file__).parents[1] / "fixtures" / "imports"
NOT_FOUND_HINT = "Check the server name with mcp/status; names are case-sensitive."
CONNECTION_HINT = (
    "Check the server executable, working directory, endpoint, network and TLS configuration; "
    "the server log (mcp/server/logs) may say more."
)

DEMO_GET = (
    "○ demo · idle · builtin · stdio\n"
    "  Bundled demo server\n"
    "  protocol: auto (negotiated: —)\n"
    "  tools filter: include all; exclude none\n"
    "  timeouts: requests 15000 ms, tool calls 30000 ms\n"
    "  command: hidden\n"
    "  args: hidden (2 values)\n"
    "  env: none\n"
    "  authentication: none, credentials none\n"
    "  catalog: tools —, resources —, templates —, prompts —; loaded 0\n"
)


async def clis(home: Path, *commands: tuple[str, ...]) -> list[Run]:
    return list(await asyncio.gather(*(cli(home, *command) for command in commands)))


async def test_version(home: Path) -> None:
    run = await cli(home, "--version")
    assert run == Run(0, f"mcp-sidecar {__version__}\n", "")


async def test_without_configuration_the_demo_server_is_configured(home: Path) -> None:
    status, status_json, get, get_json, logs_json = await clis(
        home, ("status",), ("--json", "status"), ("get", "demo"), ("--json", "get", "demo"), ("--json", "logs", "demo")
    )
    matrix, engine = split_engine(status.stdout)
    if engine:  # the engine's matrix counts each server's sharers
        assert (status.code, status.stderr) == (0, "")
        assert matrix == (
            "   Server  State  Scope    Transport  Tools  Tokens  Resources  Prompts  Loaded  Shared\n"
            "○  demo    idle   builtin  stdio      —      —       —          —        0       1\n"
        )
    else:
        assert Run(status.code, matrix, status.stderr) == Run(
            0,
            "   Server  State  Scope    Transport  Tools  Tokens  Resources  Prompts  Loaded\n"
            "○  demo    idle   builtin  stdio      —      —       —          —        0\n",
            "",
        )
    check_engine_lines(engine)
    rows = status_json.json()["servers"]
    assert [(r["name"], r["scope"], r["transport"], r["state"]) for r in rows] == [("demo", "builtin", "stdio", "idle")]
    assert status_json.json()["configFiles"][0] == {
        "scope": "global",
        "path": str(home / "mcp.json"),
        "exists": False,
        "read": False,
    }
    # `get` prints the definition as `run 'get demo'` does (JSON with --json), and hides how the server is started.
    assert get == Run(0, DEMO_GET, "")
    assert get_json.code == 0
    settings = get_json.json()
    assert (settings["name"], settings["scope"], settings["description"]) == ("demo", "builtin", "Bundled demo server")
    assert settings["connection"] == {"command": "hidden", "args": "hidden (2 values)", "cwd": None, "env": {}}
    for run in (get, get_json):
        assert sys.executable not in run.stdout
        assert "mcp_sidecar.demo" not in run.stdout
    assert logs_json.code == 0
    assert logs_json.json() == {"server": "demo", "lines": [], "dropped": 0}


async def test_demo_tools_activate_and_call(home: Path) -> None:
    tools, listed, activate, call, call_json = await clis(
        home,
        ("tools", "demo"),
        ("--json", "tools", "demo"),
        ("activate", "demo.add", "demo.ad"),
        ("call", "demo.add", '{"a": 2, "b": 3}'),
        ("--json", "call", "demo.add", '{"a": 2, "b": 3}'),
    )
    # Each tool's estimate, as an independent count of its definition gives it (support/tokens.py).
    n = {tool["name"]: definition_tokens(tool) for tool in listed.json()["tools"]}
    assert tools == Run(
        0,
        f"demo · 4 tools (live) · {sum(n.values())} tokens (estimated)\n"
        f"  demo.add(a, b) · {n['add']} tokens  Add two numbers and return the sum.\n"
        f"  demo.echo(text) · {n['echo']} tokens  Echo the given text back unchanged.\n"
        f"  demo.count_words(text) · {n['count_words']} tokens  Count the words, lines and characters of a text.\n"
        f"  demo.current_time() · {n['current_time']} tokens  The current date and time in UTC, in ISO 8601 form.\n",
        "",
    )
    *activated, cost = activate.stdout.splitlines()
    assert Run(activate.code, "\n".join(activated) + "\n", activate.stderr) == Run(
        0,
        "mcp activate\n"
        " ✔ demo.add · loaded\n"
        "   demo.add(a: number, b: number) — Add two numbers and return the sum.\n"
        " ✘ demo.ad · not loaded: Server 'demo' has no tool named 'ad'. Nearby: demo.add\n"
        f"{CALL_HINT}\n",
        "",
    )
    # A CLI run is a session of its own: what it added is all it holds.
    assert re.fullmatch(r"\+(\d+) tokens; session now \1 \(estimated\)", cost), cost
    assert call == Run(0, "mcp call\n ✔ demo.add\n5\n", "")
    assert call_json.code == 0
    result = call_json.json()
    assert (result["id"], result["isError"], result["structuredContent"]) == ("demo.add", False, {"result": 5})
    assert result["content"] == [{"type": "text", "text": "5"}]


async def test_failures_exit_non_zero_with_the_diagnostic_on_stderr(home: Path) -> None:
    unknown, unknown_json, not_an_object, not_json, missing, missing_json = await clis(
        home,
        ("call", "demo.nope", "{}"),
        ("--json", "call", "demo.nope", "{}"),
        ("call", "demo.add", "[2, 3]"),
        ("call", "demo.add", "{a: 2}"),
        ("get", "nosuch"),
        ("--json", "tools", "nosuch"),
    )
    assert unknown == Run(1, "", "mcp activate\n ✘ demo.nope · not loaded: Server 'demo' has no tool named 'nope'.\n")
    assert unknown_json.code == 1
    assert unknown_json.json()["activation"]["results"] == [
        {"id": "demo.nope", "status": "not loaded", "reason": "Server 'demo' has no tool named 'nope'.", "nearby": []}
    ]
    usage = Run(2, "", "mcp-sidecar: the arguments must be a JSON object\n")
    assert (not_an_object, not_json) == (usage, usage)
    message = "No server named 'nosuch' is configured."
    assert missing == Run(1, "", f"nosuch: [server_not_found] {message} {NOT_FOUND_HINT}\n")
    assert missing_json.code == 1
    assert missing_json.json() == {
        "error": {
            "code": "server_not_found",
            "operation": "tools",
            "server": "nosuch",
            "message": message,
            "hint": NOT_FOUND_HINT,
        }
    }


async def test_tools_with_a_tool_name_shows_its_signature(home: Path) -> None:
    write_config(
        home,
        {
            "sig": fixture_stdio("signatures.py", "stdio"),
            "filtered": fixture_stdio("signatures.py", "stdio", excludeTools=["purge"]),
        },
    )
    search, search_json, purge, nearby, run_line, hidden = await clis(
        home,
        ("tools", "sig", "search"),
        ("--json", "tools", "sig", "search"),
        ("tools", "sig", "purge"),
        ("--json", "tools", "sig", "serch"),
        ("run", "tools sig search"),
        ("tools", "filtered", "purge"),
    )
    assert search == Run(0, SEARCH_SIGNATURE, "")
    assert run_line == Run(0, SEARCH_SIGNATURE, "")
    descriptor = search_json.json()
    assert (descriptor["id"], descriptor["name"], descriptor["title"]) == ("sig.search", "search", "Search documents")
    assert descriptor["inputSchema"]["properties"]["mode"]["enum"] == ["fast", "exact"]
    assert descriptor["annotations"]["readOnlyHint"] is True
    # The server's terminal sequence and bidi override are gone; its newline stays in a paragraph.
    assert purge == Run(
        0,
        "sig.purge\n\nDelete a path for good.\n\nParameters\n  path  string · required\n    The path\n    to delete.\n"
        "\nAnnotations: may change its environment, destructive\n",
        "",
    )
    assert nearby.code == 1
    assert nearby.json() == {
        "error": {
            "code": "tool_not_found",
            "operation": "tools",
            "server": "sig",
            "message": 'The server\'s tool "serch" is not in its catalog. Nearby: sig.search.',
            "hint": "Use an exact tool id from discovery or mcp/server/tools.",
            "nearby": ["sig.search"],
        }
    }
    assert hidden == Run(
        1,
        "",
        "filtered: [tool_not_found] The server's tool \"purge\" is hidden by the server's tool filters. "
        "Use an exact tool id from discovery or mcp/server/tools.\n",
    )


async def test_server_failures_in_a_call(home: Path) -> None:
    # The crash has a server of its own: the runs go at once, and with the engine (one process per
    # server for every client) a crash of a server the other run uses would fail that run too.
    write_config(
        home,
        {"basic": basic_stdio(), "crashy": basic_stdio(), "broken": {"command": str(home / "no-such-server")}},
    )
    broken, crash, tool_error = await clis(
        home,
        ("call", "broken.echo", '{"text": "x"}'),
        ("call", "crashy.crash"),
        ("call", "basic.fail", '{"message": "boom"}'),
    )
    assert broken == Run(
        1,
        "",
        "mcp activate\n ✘ broken.echo · not loaded: The server's tool catalog is unavailable. "
        "[connection_failed] The server command was not found.\n",
    )
    assert crash == Run(1, "", f"crashy: [connection_failed] The server closed the connection. {CONNECTION_HINT}\n")
    # A tool's own error is its result: printed as such, with a failing exit status.
    assert tool_error == Run(
        1,
        "mcp call\n ✘ basic.fail\nError executing tool fail: boom\n"
        "[tool_error] Check the server's tool result and inputs; verify the outcome before retrying.\n",
        "",
    )


async def test_read_and_complete(home: Path) -> None:
    write_config(home, {"notes": basic_stdio("--resources", "--completions")})
    exact, template, complete, bad, usage, watch = await clis(
        home,
        ("read", "notes", "notes://readme"),
        ("--json", "read", "notes", "--template", "notes://{folder}/{name}", "folder=inbox", "name=todo"),
        ("complete", "notes", "notes://{folder}/{name}", "name", "t", "--arg", "folder=ideas"),
        ("read", "notes", "readme"),
        ("read", "notes"),
        ("run", "subscribe notes notes://readme"),
    )
    assert exact.code == 0
    assert exact.stdout.splitlines()[:2] == ["mcp read", " ✔ notes · notes://readme"]
    assert exact.stdout.endswith("--- notes://readme (text/markdown)\ncontents of notes://readme\n")
    result = template.json()
    assert (template.code, result["uri"], result["contents"][0]["text"]) == (0, "notes://inbox/todo", "note inbox/todo")
    assert complete.code == 0
    assert complete.stdout.splitlines()[-3:] == ["- tools", "- talks", "(2 in total)"]
    assert (bad.code, bad.stderr.split("]")[0]) == (1, "notes: [resource_invalid")
    assert usage.code == 2
    assert (watch.code, watch.stderr.split("]")[0]) == (1, "notes: [interactive_required")


async def test_complete_and_prompt_take_each_name_once(home: Path) -> None:
    complete, prompt, malformed = await clis(
        home,
        ("complete", "demo", "demo://{x}", "x", "--arg", "a=1", "--arg", "a=2"),
        ("prompt", "demo", "greet", "who=a", "who=b"),
        ("prompt", "demo", "greet", "no-equals-sign"),
    )
    assert complete == Run(2, "", "mcp-sidecar: --arg takes NAME=VALUE, once per name\n")
    assert prompt == Run(2, "", "mcp-sidecar: prompt arguments are ARG=VALUE, once per name\n")
    assert malformed == Run(2, "", "mcp-sidecar: prompt arguments are ARG=VALUE, once per name\n")


async def test_global_options_work_after_the_command_too(home: Path) -> None:
    project = home / "workspace"
    write_config(project, {"local": basic_stdio()}, ".mcp.json")
    before, after, get_after, activate_after, project_after, run_before, run_after = await clis(
        home,
        ("--json", "status"),
        ("status", "--json"),
        ("get", "demo", "--json"),
        ("activate", "demo.add", "--json"),
        ("status", "--project", str(project), "--trust-project", "--json"),
        ("run", "--json", "list"),
        ("run", "get demo", "--json"),
    )
    # After `--`, the words are the stdio server's command line, `--json` included (run last:
    # it writes the global file, which replaces the demo server).
    stdio_args = await cli(home, "run", "add", "--scope", "global", "echoer", "--", "echo", "--json")
    # `before` also shows that a flag given before the command survives the command's own copy of it.
    assert (after.code, without_engine(after.json())) == (before.code, without_engine(before.json()))
    assert after.json()["servers"][0]["name"] == "demo"
    assert (get_after.code, get_after.json()["name"]) == (0, "demo")
    assert activate_after.code == 0
    assert [r["status"] for r in activate_after.json()["results"]] == ["loaded"]
    assert project_after.code == 0
    assert [(r["name"], r["scope"]) for r in project_after.json()["servers"]] == [("local", "project")]
    assert (run_before.code, run_before.json()["command"]) == (0, "list")
    assert (run_after.code, run_after.json()["command"], run_after.json()["data"]["name"]) == (0, "get", "demo")
    assert stdio_args.code == 0
    saved = json.loads((home / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["echoer"]
    assert (saved["command"], saved["args"]) == ("echo", ["--json"])


async def test_an_empty_configuration_says_where_the_file_is_and_how_to_add_a_server(home: Path) -> None:
    path = write_config(home, {})
    status, listed = await clis(home, ("status",), ("run", "list"))
    example = "add --scope global docs https://example.com/mcp"
    status_text, status_engine = split_engine(status.stdout)
    listed_text, listed_engine = split_engine(listed.stdout)
    assert Run(status.code, status_text, status.stderr) == Run(
        0,
        f"No MCP servers are configured.\nGlobal configuration: {path}\nAdd one: mcp-sidecar run '{example}'\n",
        "",
    )
    assert Run(listed.code, listed_text, listed.stderr) == Run(
        0, f"No MCP servers are configured.\nGlobal configuration: {path}\nAdd one: /mcp {example}\n", ""
    )
    check_engine_lines(status_engine)
    check_engine_lines(listed_engine)
    # The example is a command that works as it is shown.
    added = await cli(home, "run", example)
    assert added.code == 0
    assert [r["name"] for r in (await cli(home, "status", "--json")).json()["servers"]] == ["docs"]


async def test_activate_with_nothing_loaded_fails_with_its_reasons_on_stderr(home: Path) -> None:
    nothing, nothing_json = await clis(
        home, ("activate", "demo.nope", "elsewhere.tool"), ("activate", "demo.nope", "--json")
    )
    assert nothing == Run(
        1,
        "",
        "mcp activate\n"
        " ✘ demo.nope · not loaded: Server 'demo' has no tool named 'nope'.\n"
        " ✘ elsewhere.tool · not loaded: The id does not start with a configured server name.\n",
    )
    assert nothing_json.code == 1
    assert [r["status"] for r in nothing_json.json()["results"]] == ["not loaded"]


async def test_get_shows_the_sanitised_definition_and_where_credentials_come_from(home: Path) -> None:
    write_config(
        home,
        {
            "docs": {"url": "http://127.0.0.1:9/mcp", "description": "Team\u202e docs\u0007"},
            "keyed": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "local": {"command": "python3", "args": ["x.py"], "env": {"API_KEY": "s3cret"}},
        },
    )
    docs, keyed, local, locked = await asyncio.gather(
        cli(home, "get", "docs", env=NO_KEYRING),
        cli(home, "get", "keyed"),
        cli(home, "get", "local"),
        cli(home, "get", "docs", "--json", env=locked_keyring_env()),
    )
    http_head = [
        "  protocol: auto (negotiated: —)",
        "  tools filter: include all; exclude none",
        "  timeouts: requests 15000 ms, tool calls 15000 ms",
        "  url: hidden",
    ]
    counts = "  catalog: tools —, resources —, templates —, prompts —; loaded 0"
    assert docs == Run(
        0,
        "\n".join(
            [
                "○ docs · idle · global · http",
                "  Team docs",  # bidi and control characters removed
                *http_head,
                "  headers: none",
                "  authentication: oauth, credentials store unavailable",
                counts,
                "",
            ]
        ),
        "",
    )
    assert keyed.stdout.splitlines()[5:7] == [
        "  headers: Authorization=hidden",
        "  authentication: header, credentials externally managed",
    ]
    assert local.stdout.splitlines()[5:8] == [
        "  args: hidden (1 values)",
        "  env: API_KEY=hidden",
        "  authentication: none, credentials externally managed",
    ]
    assert "s3cret" not in local.stdout
    assert locked.json()["authentication"] == {
        "kind": "oauth",
        "credentials": "store locked",
        "tokensStored": None,
        "credentialStore": "locked",
        "client": "dynamic",
        "dpop": False,
    }


async def test_the_import_preview_suggests_the_selection_the_user_made(home: Path) -> None:
    sample = IMPORTS / "claude_desktop_config.json"
    chosen, everything = await clis(
        home,
        ("run", f"import --scope global {sample} --select github"),
        ("run", f"import --scope global {sample}"),
    )
    assert chosen.code == 0
    assert chosen.stdout.splitlines()[-1] == f"To import: import --scope global {sample} --select github --confirm"
    assert everything.stdout.splitlines()[-1] == (
        f"To import: import --scope global {sample} --select filesystem,github --confirm"
    )
