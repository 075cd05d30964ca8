"""The `mcp-sidecar` command's first step: a front of the engine, or the whole CLI.

Decided before anything else is imported (`engine/kinds.py`: standard library `os` only), so a front
(`engine/front.py`) loads only what it needs to relay bytes and stays small, and the in-process
paths pay nothing for the choice.
"""

from __future__ import annotations

import sys

from mcp_sidecar.engine.kinds import command_of, wanted


def main() -> int:
    argv = sys.argv[1:]
    kind = wanted(argv)
    if kind is not None:
        from mcp_sidecar.engine import front

        code = front.main(kind, argv)
        if code is not None:
            return code
        # No engine here (an unsafe runtime directory, one that would not start): in-process, as
        # with MCP_SIDECAR_ENGINE=off; nothing of the client's was read yet.
    if command_of(argv) == "engine":
        return _engine(argv)
    from mcp_sidecar.cli import main as cli_main

    return cli_main(argv)


def _engine(argv: list[str]) -> int:
    """`mcp-sidecar engine`: the per-user engine (the fronts start it, detached)."""
    from mcp_sidecar import logs
    from mcp_sidecar.cli_parser import parse_args
    from mcp_sidecar.engine import server

    args = parse_args(argv)
    logs.setup(args.verbose, args.log_file)
    return server.main()
