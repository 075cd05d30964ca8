"""The `/mcp` command table with its completions (`mcp/commandSpec`), read from the parser's own tables.

Editors complete `:Mcp` and fill the palette from this, so what they offer is what
`command_line.parse_line` accepts (`tests/unit/services/test_command_line.py` checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from mcp_sidecar.services.command_line import (
    COMMANDS,
    OPTIONAL_POSITIONALS,
    OPTIONS,
    POSITIONALS,
    SCOPES,
    TRANSPORTS,
)

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import CommandEntry, CommandOption, CommandPositional

_OPTION_VALUES: dict[str, tuple[str, ...]] = {"--scope": SCOPES, "--transport": TRANSPORTS}
_OPTION_PLACEHOLDERS: dict[str, str] = {
    "--header": "'Name: value'",
    "--env": "KEY=value",
    "--oauth-client-id": "ID",
    "--oauth-client-secret": "REF",
    "--oauth-client-metadata-url": "URL",
    "--oauth-issuer": "URL",
    "--oauth-scope": "SCOPE",
    "--oauth-callback-port": "PORT",
    "--select": "NAME[,NAME...]",
}
_REQUIRED_OPTIONS: dict[str, tuple[str, ...]] = {"add": ("--scope",), "remove": ("--scope",), "import": ("--scope",)}
# Positionals the parser reads by hand (`add` and `help`), in the form of `POSITIONALS`.
_OWN_POSITIONALS: dict[str, tuple[tuple[str, ...], bool]] = {
    "add": (("NAME", "URL | -- COMMAND [ARGS...]"), False),
    "help": (("COMMAND",), False),
}
# Positionals that name an existing server; `add`'s NAME is a new one.
_SERVER_POSITIONAL = "NAME"
# What a command changes, for clients that refresh after it: `config` (a file edit) or `status`.
_CHANGES: dict[str, Literal["config", "status"]] = {
    "add": "config",
    "remove": "config",
    "enable": "config",
    "disable": "config",
    "import": "config",
    "reload": "status",
    "reconnect": "status",
    "refresh": "status",
    "login": "status",
    "logout": "status",
    "profile": "status",
}


def _positional(command: str, name: str, servers: list[str], optional: bool, profiles: list[str]) -> CommandPositional:
    if name == "PROFILE":
        return {"name": name, "completion": "profile", "values": profiles, "optional": optional}
    if name == _SERVER_POSITIONAL and command != "add":
        return {"name": name, "completion": "server", "values": servers, "optional": optional}
    if name == "COMMAND":
        return {"name": name, "completion": "command", "values": list(COMMANDS), "optional": optional}
    if name == "FILE":
        return {"name": name, "completion": "file", "values": [], "optional": optional}
    if name == "TOOL":
        return {"name": name, "completion": "tool", "values": [], "optional": optional}
    return {"name": name, "completion": None, "values": [], "optional": optional}


def command_table(servers: list[str], profiles: list[str] | None = None) -> list[CommandEntry]:
    """Every command with its options, positionals and their completions, from the parser's tables.

    `servers` are the completions of a NAME that names an existing server, `profiles` of a PROFILE.
    """
    out: list[CommandEntry] = []
    for name, spec in COMMANDS.items():
        required = _REQUIRED_OPTIONS.get(name, ())
        options: list[CommandOption] = [
            {
                "name": option,
                "kind": kind,
                "required": option in required,
                "values": list(_OPTION_VALUES.get(option, ())),
                "placeholder": _OPTION_PLACEHOLDERS.get(option),
            }
            for option, kind in OPTIONS.get(name, {}).items()
        ]
        names, variadic = POSITIONALS.get(name) or _OWN_POSITIONALS[name]
        first_optional = len(names) - OPTIONAL_POSITIONALS.get(name, 0)
        out.append(
            {
                "name": name,
                "usage": spec.usage,
                "summary": spec.summary,
                "options": options,
                "positionals": [
                    _positional(name, p, servers, i >= first_optional, profiles or []) for i, p in enumerate(names)
                ],
                "variadic": variadic,
                "changes": _CHANGES.get(name),
            }
        )
    return out
