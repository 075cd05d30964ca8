"""Typed params from a `/mcp` line or from the CLI's arguments: what the fronts add to `protocol/params.py`.

A `/mcp` line and a subcommand's argv carry the same values as a method's JSON params, in
words: these turn the words into the same params types (and name a usage failure the way
each front always has).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.config_params import ConfigImportParams
from mcp_sidecar.protocol.errors import command_invalid
from mcp_sidecar.protocol.params import ProfileParams, SessionParams, parse_server
from mcp_sidecar.services.activation import NotActivated
from mcp_sidecar.services.command_line import usage_of

if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Awaitable

    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.command_line import ParsedCommand

DEFAULT = SessionParams(methods.DEFAULT_SESSION)
"""The params of a method that takes none (or only a session) from a front that has no session."""
CLI_SESSION = "cli"


@dataclass(frozen=True, slots=True)
class ToolsParams:
    """`mcp/server/tools` (`tool` None), or with `tool` one tool's signature (`/mcp tools NAME TOOL`, CLI `tools`)."""

    server: str
    tool: str | None = None


# `/mcp` lines ---------------------------------------------------------------------------------


def profile_params(parsed: ParsedCommand) -> ProfileParams:
    """`profile` shows, `profile NAME` chooses (its tools start active in the default session), `--clear` clears."""
    if parsed.clear:
        return ProfileParams(None, True, methods.DEFAULT_SESSION)
    if parsed.rest:
        return ProfileParams(parsed.rest[0], True, methods.DEFAULT_SESSION)
    return ProfileParams(None, False, methods.DEFAULT_SESSION)


def server(parsed: ParsedCommand) -> str:
    assert parsed.server is not None
    return parsed.server


def uri(parsed: ParsedCommand) -> str:
    assert parsed.uri is not None
    return parsed.uri


def scope(parsed: ParsedCommand) -> Literal["global", "project"]:
    return "project" if parsed.scope == "project" else "global"


def prompt_arguments(parsed: ParsedCommand) -> dict[str, str]:
    """`prompt NAME PROMPT ARG=VALUE...`: each ARG once."""
    arguments: dict[str, str] = {}
    for word in parsed.rest[1:]:
        key, sep, value = word.partition("=")
        if not sep or not key or key in arguments:
            raise command_invalid("prompt", f"Arguments are ARG=VALUE, once per name: {word!r}.", usage_of("prompt"))
        arguments[key] = value
    return arguments


def import_params(parsed: ParsedCommand) -> ConfigImportParams:
    if parsed.confirm and not parsed.select:
        raise command_invalid("import", "--confirm needs --select naming the servers to import.", usage_of("import"))
    assert parsed.file is not None
    return ConfigImportParams(parsed.file, scope(parsed), parsed.select, parsed.confirm, parsed.replace)


# JSON params -------------------------------------------------------------------------------------


def parse_tools(operation: str, raw: Any) -> ToolsParams:
    """`mcp/server/tools`: `{server}` (no TOOL on the wire)."""
    return ToolsParams(parse_server(operation, raw).server)


def completion_kind(kind: str) -> Literal["template", "prompt"]:
    return "template" if kind == "template" else "prompt"


# CLI arguments ----------------------------------------------------------------------------------


def pairs(words: list[str]) -> dict[str, Any] | None:
    """NAME=VALUE words; a repeated NAME collects an array of strings."""
    out: dict[str, Any] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or not name:
            return None
        if name in out:
            previous = out[name]
            out[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            out[name] = value
    return out


def single_pairs(words: list[str]) -> dict[str, str] | None:
    """NAME=VALUE words, each NAME once; None otherwise."""
    found = pairs(words)
    if found is None or any(isinstance(v, list) for v in found.values()):
        return None
    return found


def single_pairs_usage(words: list[str], usage: str) -> str | None:
    return None if single_pairs(words) is not None else f"mcp-sidecar: {usage}"


def read_request(args: Namespace) -> dict[str, Any] | str:
    """`read`'s JSON params, or the usage failure to print."""
    if args.template is None:
        if args.uri is None or args.values:
            return "mcp-sidecar: read SERVER URI, or read SERVER --template T NAME=VALUE..."
        return {"server": args.server, "uri": args.uri}
    words = ([args.uri] if args.uri is not None else []) + list(args.values)
    arguments = pairs(words)
    if arguments is None:
        return "mcp-sidecar: template values are NAME=VALUE"
    return {"server": args.server, "template": args.template, "arguments": arguments}


def read_usage(args: Namespace) -> str | None:
    request = read_request(args)
    return request if isinstance(request, str) else None


def discover_request(args: Namespace) -> dict[str, Any]:
    request: dict[str, Any] = {"query": args.query, "kind": args.kind, "limit": args.limit}
    if args.server:
        request["server"] = args.server
    return request


def json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def call_usage(args: Namespace) -> str | None:
    return None if json_object(args.arguments) is not None else "mcp-sidecar: the arguments must be a JSON object"


async def cli_call(app: Sidecar, namespace: Namespace, called: Awaitable[Any]) -> Any:
    """`call`: an id that did not load answers with its activation (a failure); the call's own
    result drops the activation it carries."""
    try:
        result = await called
    except NotActivated as exc:
        return {"activation": exc.activation}
    result.pop("activation")
    return result


def nothing_loaded(result: Any) -> bool:
    """`activate`'s exit rule: a failure when no id loaded."""
    return all(r["status"] == "not loaded" for r in result["results"])
