"""The conversations the host tests script: query → activate → call, natively or through `mcp_call`."""

from __future__ import annotations

import sys
from typing import Any

from support.hosts.script import Await, Call, Say, Turn
from support.servers import fixture_path

ECHO = "the gateway passed this through"
"""What the model asks `basic.echo` to echo: it must come back in the next request's tool result."""

DESCRIPTION = "Echoes, sums and failures for the host tests"
"""The `basic` server's description: its line of the server directory is `- basic: DESCRIPTION`."""

DIRECTORY_LINE = f"- basic: {DESCRIPTION}"

ACTIVATED = "basic.echo"

QUERY = Call("mcp_tools", {"query": "echo the given text"})
ACTIVATE = Call("mcp_tools", {"activate": [ACTIVATED]})
PROXY_CALL = Call("mcp_call", {"id": ACTIVATED, "arguments": {"text": ECHO}})
NATIVE_CALL = Call("basic__echo", {"text": ECHO})


def servers() -> dict[str, Any]:
    """The gateway's configuration: the `basic` fixture server, with a description."""
    return {
        "basic": {
            "command": sys.executable,
            "args": [str(fixture_path("basic.py")), "stdio"],
            "description": DESCRIPTION,
        }
    }


def tool_search(*names: str) -> Call:
    """Claude Code's tool search, loading deferred tools by their exact names."""
    return Call("ToolSearch", {"query": "select:" + ",".join(names)}, exact=True)


def native(*, load: Turn | None = None) -> list[Turn]:
    """Query, activate, wait (querying again) until the host shows the activated tool, call it.
    `load` is a turn that makes the tool callable once it is shown (Claude's tool search)."""
    turns: list[Turn] = [QUERY, ACTIVATE, Await("basic__echo", QUERY)]
    if load is not None:
        turns.append(load)
    return [*turns, NATIVE_CALL, Say("finished")]


def proxied() -> list[Turn]:
    """Query, activate, and call the activated tool through `mcp_call`."""
    return [QUERY, ACTIVATE, PROXY_CALL, Say("finished")]
