"""Run one `/mcp` command line: parse it, call the service, and render its text.

Every editor and the CLI come through here, so a command behaves the same everywhere. The
result is `{command, data, text}`: `data` is what the matching structured method returns.
The renderers sanitise each server string where they place it; `text` passes the sanitiser
once more as a whole, since some of it (a login's text, say) is built elsewhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config.edit import EditScope
from mcp_sidecar.output import command_text, render, signature
from mcp_sidecar.output.sanitize import strip_controls
from mcp_sidecar.protocol.errors import command_invalid
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
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        CommandResult,
        CommandSpecResult,
        PromptSnapshot,
        SubscribeResult,
        SubscriptionsResult,
        UnsubscribeResult,
    )
    from mcp_sidecar.services.auth import Auth
    from mcp_sidecar.services.config_edits import ConfigEdits
    from mcp_sidecar.services.config_imports import ConfigImports
    from mcp_sidecar.services.configuration import Configuration
    from mcp_sidecar.services.lifecycle import Lifecycle
    from mcp_sidecar.services.status import Status

Outcome = tuple[Any, str]
Runner = Callable[[ParsedCommand], Awaitable[Outcome]]


@dataclass(frozen=True, slots=True)
class WatchesAndPrompts:
    """What `/mcp` reaches of the watches and the prompts (the discovery side's features)."""

    subscribe: Callable[[str, str], Awaitable[SubscribeResult]]
    unsubscribe: Callable[[str, str], Awaitable[UnsubscribeResult]]
    subscriptions: Callable[[], SubscriptionsResult]
    preview: Callable[[str, str, dict[str, str]], Awaitable[PromptSnapshot]]


def _server(parsed: ParsedCommand) -> str:
    assert parsed.server is not None
    return parsed.server


def _scope(parsed: ParsedCommand) -> EditScope:
    return "project" if parsed.scope == "project" else "global"


class Commands:
    """`/mcp` command lines and the command table: each command runs the feature its structured method runs."""

    def __init__(
        self,
        configuration: Configuration,
        registry: ServerRegistry,
        status: Status,
        lifecycle: Lifecycle,
        edits: ConfigEdits,
        imports: ConfigImports,
        auth: Auth,
        resources: WatchesAndPrompts,
    ) -> None:
        self._configuration = configuration
        self._registry = registry
        self._status = status
        self._lifecycle = lifecycle
        self._edits = edits
        self._imports = imports
        self._auth = auth
        self._resources = resources
        self._runners: dict[str, Runner] = {
            "list": self._list,
            "get": self._get,
            "tools": self._tools,
            "reload": self._reload,
            "enable": self._toggle,
            "disable": self._toggle,
            "add": self._add,
            "remove": self._remove,
            "reconnect": self._reconnect,
            "refresh": self._refresh,
            "import": self._import,
            "help": self._help,
            "prompt": self._prompt,
            "subscribe": self._subscribe,
            "unsubscribe": self._unsubscribe,
            "subscriptions": self._subscriptions,
            "login": self._login,
            "logout": self._logout,
        }

    async def run_line(self, line: str) -> CommandResult:
        try:
            parsed = parse_line(line)
        except CommandLineError as exc:
            raise command_invalid("command", exc.message, exc.usage) from None
        data, text = await self._runners[parsed.name](parsed)
        return {"command": parsed.name, "data": data, "text": strip_controls(text)}

    def command_spec(self, command: str | None = None) -> CommandSpecResult:
        """The command table the parser reads, with completions (`mcp/commandSpec`); connects nothing.

        With `command`, only that command's entry; an unknown one fails as `mcp/command` would.
        """
        if command is not None and command not in COMMANDS:
            try:
                parse_line(command)
            except CommandLineError as exc:
                raise command_invalid("commandSpec", exc.message, exc.usage) from None
            raise command_invalid("commandSpec", f"Unknown command {command!r}.", usage_of())
        self._configuration.ensure_loaded()
        servers = sorted(self._registry.names())
        table = command_table(servers)
        return {
            "commands": [entry for entry in table if command is None or entry["name"] == command],
            "servers": servers,
            "scopes": list(SCOPES),
            "transports": list(TRANSPORTS),
        }

    async def _list(self, parsed: ParsedCommand) -> Outcome:
        result = self._status.status()
        return result, render.status_matrix(result)

    async def _get(self, parsed: ParsedCommand) -> Outcome:
        result = await self._status.get_server(_server(parsed))
        return result, command_text.server_details(result)

    async def _tools(self, parsed: ParsedCommand) -> Outcome:
        if parsed.rest:
            tool = await self._status.server_tool(_server(parsed), parsed.rest[0])
            return tool, signature.multiline(tool["id"], tool)
        result = await self._status.server_tools(_server(parsed))
        return result, render.tools_list(result)

    async def _reload(self, parsed: ParsedCommand) -> Outcome:
        result = await self._edits.reload()
        return result, command_text.reload_summary(result)

    async def _toggle(self, parsed: ParsedCommand) -> Outcome:
        result = await self._edits.set_enabled(_server(parsed), parsed.name == "enable")
        return result, command_text.toggled(result)

    async def _add(self, parsed: ParsedCommand) -> Outcome:
        result = await self._edits.add(_scope(parsed), _server(parsed), parsed.definition, parsed.replace)
        return result, command_text.added(result)

    async def _remove(self, parsed: ParsedCommand) -> Outcome:
        result = await self._edits.remove(_scope(parsed), _server(parsed))
        return result, command_text.removed(result)

    async def _reconnect(self, parsed: ParsedCommand) -> Outcome:
        conn = await self._lifecycle.reconnect(_server(parsed))
        row = self._status.row(conn)
        return row, command_text.reconnected(row)

    async def _refresh(self, parsed: ParsedCommand) -> Outcome:
        result = await self._lifecycle.refresh(_server(parsed))
        return result, command_text.refreshed(result)

    async def _import(self, parsed: ParsedCommand) -> Outcome:
        if parsed.confirm and not parsed.select:
            raise command_invalid(
                "import", "--confirm needs --select naming the servers to import.", usage_of("import")
            )
        assert parsed.file is not None
        result = await self._imports.import_servers(
            parsed.file, _scope(parsed), parsed.select, parsed.confirm, parsed.replace
        )
        return result, command_text.import_result(result)

    async def _subscribe(self, parsed: ParsedCommand) -> Outcome:
        assert parsed.uri is not None
        result = await self._resources.subscribe(_server(parsed), parsed.uri)
        return result, command_text.subscribed(result)

    async def _unsubscribe(self, parsed: ParsedCommand) -> Outcome:
        assert parsed.uri is not None
        result = await self._resources.unsubscribe(_server(parsed), parsed.uri)
        return result, command_text.unsubscribed(result)

    async def _subscriptions(self, parsed: ParsedCommand) -> Outcome:
        result = self._resources.subscriptions()
        return result, command_text.subscriptions(result)

    async def _prompt(self, parsed: ParsedCommand) -> Outcome:
        name, words = parsed.rest[0], parsed.rest[1:]
        arguments: dict[str, str] = {}
        for word in words:
            key, sep, value = word.partition("=")
            if not sep or not key or key in arguments:
                raise command_invalid(
                    "prompt", f"Arguments are ARG=VALUE, once per name: {word!r}.", usage_of("prompt")
                )
            arguments[key] = value
        result = await self._resources.preview(_server(parsed), name, arguments)
        return result, command_text.prompt_previewed(result)

    async def _login(self, parsed: ParsedCommand) -> Outcome:
        result = await self._auth.login(_server(parsed), parsed.no_browser)
        return result, result["text"]

    async def _logout(self, parsed: ParsedCommand) -> Outcome:
        result = await self._auth.logout(_server(parsed))
        return result, result["text"]

    async def _help(self, parsed: ParsedCommand) -> Outcome:
        text = usage_of(parsed.topic)
        return {"usage": text}, text
