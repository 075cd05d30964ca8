"""The `/mcp` command table clients complete lines from (`mcp/commandSpec`).

The lines themselves run through the operation table (`operations/runner.py`): each verb runs
the row of its structured method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_sidecar.protocol.errors import command_invalid
from mcp_sidecar.services.command_line import COMMANDS, SCOPES, TRANSPORTS, CommandLineError, parse_line, usage_of
from mcp_sidecar.services.command_spec import command_table

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import CommandSpecResult
    from mcp_sidecar.services.configuration import Configuration


class Commands:
    """The `/mcp` command table with its completions. Reaches the user's registry (server names)
    through one client's configuration view."""

    def __init__(
        self, configuration: Configuration, registry: ServerRegistry, profiles: Callable[[], list[str]]
    ) -> None:
        """`profiles`: the profiles the client can choose, the completions of `profile PROFILE`."""
        self._configuration = configuration
        self._registry = registry
        self._profiles = profiles

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
        table = command_table(servers, self._profiles())
        return {
            "commands": [entry for entry in table if command is None or entry["name"] == command],
            "servers": servers,
            "scopes": list(SCOPES),
            "transports": list(TRANSPORTS),
        }
