"""Run one `/mcp` command line: parse it, call the service, and render its text.

Every editor and the CLI come through here, so a command behaves the same everywhere. The
result is `{command, data, text}`: `data` is what the matching structured method returns.
The renderers sanitise each server string where they place it; `text` passes the sanitiser
once more as a whole, since some of it (a login's text, say) is built elsewhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config.edit import EditScope
from mcp_sidecar.output import command_text, render, signature
from mcp_sidecar.output.sanitize import strip_controls
from mcp_sidecar.protocol.errors import command_invalid
from mcp_sidecar.services import auth, config_edits, lifecycle, status
from mcp_sidecar.services.command_line import (
    COMMANDS,
    SCOPES,
    TRANSPORTS,
    CommandLineError,
    ParsedCommand,
    parse_line,
    usage_of,
)
from mcp_sidecar.services.command_spec import command_table

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import CommandResult, CommandSpecResult
    from mcp_sidecar.services.app import Sidecar

Outcome = tuple[Any, str]
Runner = Callable[["Sidecar", ParsedCommand], Awaitable[Outcome]]


async def run_line(app: Sidecar, line: str) -> CommandResult:
    try:
        parsed = parse_line(line)
    except CommandLineError as exc:
        raise command_invalid("command", exc.message, exc.usage) from None
    data, text = await _RUNNERS[parsed.name](app, parsed)
    return {"command": parsed.name, "data": data, "text": strip_controls(text)}


def command_spec(app: Sidecar, command: str | None = None) -> CommandSpecResult:
    """The command table the parser reads, with completions (`mcp/commandSpec`); connects nothing.

    With `command`, only that command's entry; an unknown one fails as `mcp/command` would.
    """
    if command is not None and command not in COMMANDS:
        try:
            parse_line(command)
        except CommandLineError as exc:
            raise command_invalid("commandSpec", exc.message, exc.usage) from None
        raise command_invalid("commandSpec", f"Unknown command {command!r}.", usage_of())
    app.ensure_loaded()
    servers = sorted(app.registry.names())
    table = command_table(servers)
    return {
        "commands": [entry for entry in table if command is None or entry["name"] == command],
        "servers": servers,
        "scopes": list(SCOPES),
        "transports": list(TRANSPORTS),
    }


def _server(parsed: ParsedCommand) -> str:
    assert parsed.server is not None
    return parsed.server


def _scope(parsed: ParsedCommand) -> EditScope:
    return "project" if parsed.scope == "project" else "global"


async def _list(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = status.status(app)
    return result, render.status_matrix(result)


async def _get(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await status.get_server(app, _server(parsed))
    return result, command_text.server_details(result)


async def _tools(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    if parsed.rest:
        tool = await status.server_tool(app, _server(parsed), parsed.rest[0])
        return tool, signature.multiline(tool["id"], tool)
    result = await status.server_tools(app, _server(parsed))
    return result, render.tools_list(result)


async def _reload(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await config_edits.reload(app)
    return result, command_text.reload_summary(result)


async def _toggle(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await config_edits.set_enabled(app, _server(parsed), parsed.name == "enable")
    return result, command_text.toggled(result)


async def _add(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await config_edits.add(app, _scope(parsed), _server(parsed), parsed.definition, parsed.replace)
    return result, command_text.added(result)


async def _remove(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await config_edits.remove(app, _scope(parsed), _server(parsed))
    return result, command_text.removed(result)


async def _reconnect(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    conn = await lifecycle.reconnect(app, _server(parsed))
    row = status.status_row(app, conn)
    return row, command_text.reconnected(row)


async def _refresh(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await lifecycle.refresh(app, _server(parsed))
    return result, command_text.refreshed(result)


async def _import(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    if parsed.confirm and not parsed.select:
        raise command_invalid("import", "--confirm needs --select naming the servers to import.", usage_of("import"))
    assert parsed.file is not None
    result = await config_edits.import_servers(
        app, parsed.file, _scope(parsed), parsed.select, parsed.confirm, parsed.replace
    )
    return result, command_text.import_result(result)


async def _subscribe(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    assert parsed.uri is not None
    result = await app.watches.subscribe(_server(parsed), parsed.uri)
    return result, command_text.subscribed(result)


async def _unsubscribe(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    assert parsed.uri is not None
    result = await app.watches.unsubscribe(_server(parsed), parsed.uri)
    return result, command_text.unsubscribed(result)


async def _subscriptions(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = app.watches.list()
    return result, command_text.subscriptions(result)


async def _prompt(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    name, words = parsed.rest[0], parsed.rest[1:]
    arguments: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key or key in arguments:
            raise command_invalid("prompt", f"Arguments are ARG=VALUE, once per name: {word!r}.", usage_of("prompt"))
        arguments[key] = value
    result = await app.prompts.preview(_server(parsed), name, arguments)
    return result, command_text.prompt_previewed(result)


async def _login(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await auth.login(app, _server(parsed), parsed.no_browser)
    return result, result["text"]


async def _logout(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    result = await auth.logout(app, _server(parsed))
    return result, result["text"]


async def _help(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    text = usage_of(parsed.topic)
    return {"usage": text}, text


_RUNNERS: dict[str, Runner] = {
    "list": _list,
    "get": _get,
    "tools": _tools,
    "reload": _reload,
    "enable": _toggle,
    "disable": _toggle,
    "add": _add,
    "remove": _remove,
    "reconnect": _reconnect,
    "refresh": _refresh,
    "import": _import,
    "help": _help,
    "prompt": _prompt,
    "subscribe": _subscribe,
    "unsubscribe": _unsubscribe,
    "subscriptions": _subscriptions,
    "login": _login,
    "logout": _logout,
}
