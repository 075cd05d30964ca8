"""Which command lines run as fronts of the engine, and of which kind; read without the parser.

Imported by `entry.py` before anything else, so: standard library `os` and `sys` only.
"""

from __future__ import annotations

import os
import sys

ENGINE_ENV = "MCP_SIDECAR_ENGINE"
OFF = frozenset({"off", "0", "false", "no"})
CLI_COMMANDS = frozenset(
    {"status", "get", "tools", "logs", "discover", "refresh", "activate", "run", "call", "read", "complete", "prompt"}
)
"""The subcommands the engine runs for a front; `login`, `logout` and `call --elicit` talk to the
terminal and the browser, so they run in their own process."""
_VALUE_OPTIONS = {"--log-file", "--project"}


def wanted(argv: list[str]) -> str | None:
    """The kind of front this command line runs as (`lsp`, `mcp`, `cli`), or None to run in-process.

    The editor's serve, the stdio gateway and the CLI's read-only subcommands run as fronts unless
    `MCP_SIDECAR_ENGINE` says `off` (or `0`, `false`, `no`).
    """
    if os.environ.get(ENGINE_ENV, "").strip().lower() in OFF or any(a in ("-h", "--help", "--version") for a in argv):
        return None
    if sys.platform != "linux":
        return None  # the peer check reads Linux's SO_PEERCRED
    command = command_of(argv)
    if command in (None, "serve"):
        return "lsp"
    if command == "mcp" and not any(a == "--http" or a.startswith("--http=") for a in argv):
        return "mcp"
    if command in CLI_COMMANDS and "--elicit" not in argv:
        return "cli"
    return None


def command_of(argv: list[str]) -> str | None:
    """The subcommand of a `mcp-sidecar` command line (None: serve), read without the parser."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None
