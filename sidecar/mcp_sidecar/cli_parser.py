"""The `mcp-sidecar` command line: its parser, apart from what runs it (`cli.py`), so the engine can
read a front's command line as the command would without importing the CLI."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mcp_sidecar import __version__

_GLOBAL_DEFAULTS: dict[str, Any] = {
    "log_file": None,
    "verbose": 0,
    "project": None,
    "trust_project": False,
    "json": False,
    "profile": None,
}


def _add_serving(sub: Any) -> None:
    sub.add_parser("serve", help="serve JSON-RPC on stdio (the default)")
    sub.add_parser("engine", help="the per-user engine that fronts attach to (started by the first one)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-sidecar",
        description="Owns MCP server connections for editors. With no command, serves JSON-RPC on stdio.",
    )
    parser.add_argument("--version", action="version", version=f"mcp-sidecar {__version__}")
    _add_global_options(parser, _GLOBAL_DEFAULTS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_serving(sub)
    sub.add_parser("status", help="one row per configured server")
    get = sub.add_parser("get", help="inspect a server (connection values hidden)")
    get.add_argument("server")
    tools = sub.add_parser("tools", help="a server's tool catalog, filters applied; with TOOL, that tool's signature")
    tools.add_argument("server")
    tools.add_argument("tool", nargs="?", help="one tool's name: its parameters, description and annotations")
    logs = sub.add_parser("logs", help="a server's captured stderr (after this process connected it)")
    logs.add_argument("server")
    discover = sub.add_parser("discover", help="ranked search over tools, resources, templates and prompts")
    discover.add_argument("query")
    discover.add_argument("--kind", choices=["all", "tools", "resources", "prompts"], default="all")
    discover.add_argument("--server")
    discover.add_argument("--limit", type=int, default=5, help="1 to 50 candidates (default 5)")
    refresh = sub.add_parser("refresh", help="fetch a server's tool, resource and prompt metadata again")
    refresh.add_argument("server")
    activate = sub.add_parser("activate", help="activate exact tool ids (server.tool)")
    activate.add_argument("ids", nargs="+")
    run = sub.add_parser("run", help="run one /mcp command line, e.g. run 'add --scope global docs https://...'")
    run.add_argument("line", nargs=argparse.REMAINDER, help="the line as one quoted argument (or as separate words)")
    call = sub.add_parser("call", help="activate and call one tool: call SERVER.TOOL [JSON-ARGUMENTS]")
    call.add_argument("id")
    call.add_argument("arguments", nargs="?", default="{}")
    call.add_argument(
        "--elicit",
        action="store_true",
        help="offer the server elicitation and answer its questions on this terminal (stdin and stderr)",
    )
    read = sub.add_parser("read", help="read a resource: read SERVER URI, or read SERVER --template T NAME=VALUE...")
    read.add_argument("server")
    read.add_argument("uri", nargs="?")
    read.add_argument("--template", help="an advertised URI template; values as NAME=VALUE (repeat NAME for arrays)")
    read.add_argument("values", nargs="*", default=[], metavar="NAME=VALUE")
    complete = sub.add_parser("complete", help="suggest values: complete SERVER TEMPLATE NAME [VALUE]")
    complete.add_argument("server")
    complete.add_argument("template")
    complete.add_argument("name")
    complete.add_argument("value", nargs="?", default="")
    complete.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE", help="a known variable")
    prompt = sub.add_parser("prompt", help="preview a prompt: prompt SERVER NAME [ARG=VALUE...] [--use]")
    prompt.add_argument("server")
    prompt.add_argument("name")
    prompt.add_argument("values", nargs="*", default=[], metavar="ARG=VALUE")
    prompt.add_argument("--use", action="store_true", help="print the accepted snapshot instead of the preview")
    from mcp_sidecar import cli_app, cli_auth, cli_conformance

    for add_parsers in (cli_auth.add_parsers, cli_app.add_parser, cli_conformance.add_parser):
        add_parsers(sub)
    from mcp_sidecar.gateway import options as gateway_options

    gateway_options.add_parser(sub)
    for command in sub.choices.values():
        # The same options after the command: `status --json` as well as `--json status`. Their
        # defaults stay the top-level parser's, so a flag given before the command is kept.
        _add_global_options(command, None)
    return parser


def _add_global_options(parser: argparse.ArgumentParser, defaults: dict[str, Any] | None) -> None:
    """The options every command takes; `defaults` None leaves an absent option unset (SUPPRESS)."""

    def default(name: str) -> Any:
        return argparse.SUPPRESS if defaults is None else defaults[name]

    parser.add_argument("--log-file", default=default("log_file"), help="also write the sidecar's log to this file")
    parser.add_argument(
        "-v", "--verbose", action="count", default=default("verbose"), help="more logging on stderr (-vv: debug)"
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=default("project"),
        help="workspace directory (its .mcp.json, cwd for stdio servers)",
    )
    parser.add_argument(
        "--trust-project", action="store_true", default=default("trust_project"), help="read the project's .mcp.json"
    )
    parser.add_argument("--json", action="store_true", default=default("json"), help="print results as JSON")
    parser.add_argument(
        "--profile",
        default=default("profile"),
        metavar="NAME",
        help="a profile of mcp.json: only its servers are searched, and its tools start active (mcp: listed at once)",
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    # `read SERVER --template T NAME=VALUE...`: values after the option are positionals that
    # argparse leaves over; only `read` takes them.
    args, extra = parser.parse_known_args(argv)
    if extra:
        if args.command != "read":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.values = [*args.values, *extra]
    if args.command == "run":
        _trailing_options(args)
    return args


def _trailing_options(args: argparse.Namespace) -> None:
    """`run 'list' --json`: global options after the line are options, not words of the line.

    Only the longest tail that is nothing but global options counts, and never after a `--`
    (what follows it is a stdio server's own command line, whose flags must stay its own).
    """
    words: list[str] = args.line
    if "--" in words:
        return
    options = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    _add_global_options(options, None)
    for start in range(1, len(words)):
        try:
            parsed, rest = options.parse_known_args(words[start:])
        except argparse.ArgumentError:
            continue
        if not rest:
            for name, value in vars(parsed).items():
                setattr(args, name, value + getattr(args, name) if name == "verbose" else value)
            args.line = words[:start]
            return
