"""`mcp-sidecar mcp`: the gateway over stdio or, with `--http`, Streamable HTTP on loopback (both
protocol eras), with the CLI's configuration rules.

One `Sidecar` app per process, as for every entry point: the same configuration files, project
trust (`--project`, `--trust-project`), catalog caches, keyring and diagnostics. No pygls: the
MCP face is the SDK's server alone. stdout carries only MCP messages; logs go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcp_sidecar.gateway.durable import DurableSession
from mcp_sidecar.gateway.face import Gateway, Mode
from mcp_sidecar.services.app import Sidecar

EXIT_USAGE = 2


def gateway_app(workspace: Path, trust_project: bool, approved_only: bool = False) -> Sidecar:
    """The app behind a gateway: no editor to notify; configuration files watched, since a host
    keeps the gateway running for a whole conversation.

    `--trust-project` approves the project's definitions as they are, as on the CLI; with
    `--approved-only` it only reads the project's file, and what was never approved (in an
    editor, or by an earlier `--trust-project`) waits, as in a trusted editor workspace. An
    editor that starts the gateway for its own trusted workspace passes both: starting the
    gateway is no approval the person gave.
    """
    return Sidecar(
        lambda method, params: None,
        workspace=workspace,
        trusted=trust_project,
        watch_config=True,
        approve_project=trust_project and not approved_only,
    )


async def serve(args: argparse.Namespace, workspace: Path) -> int:
    if args.trust_project and args.project is None:
        # A host's configuration is often global: trusting "whatever directory it starts in" would
        # trust every repository the user opens.
        print("mcp-sidecar mcp: --trust-project needs --project DIR, the one project to trust", file=sys.stderr)
        return EXIT_USAGE
    if args.token_file is not None and args.http is None:
        print("mcp-sidecar mcp: --token-file needs --http", file=sys.stderr)
        return EXIT_USAGE
    app = gateway_app(workspace, args.trust_project, args.approved_only)
    mode: Mode = args.tools
    durable = DurableSession(args.session) if args.session else None
    gateway = Gateway(app, mode, durable, resources=args.resources)
    try:
        app.ensure_loaded()
        if args.http is not None:
            from mcp_sidecar.gateway import http

            return await http.serve(gateway, args.http, args.token_file)
        await _stdio(gateway)
    finally:
        await app.shutdown()
    return 0


async def _stdio(gateway: Gateway) -> None:
    from mcp.server.stdio import stdio_server

    from mcp_sidecar.gateway import stdio

    async with stdio.stdio_streams() if stdio.usable() else stdio_server() as (read, write):
        await gateway.server.run(read, write, gateway.initialization_options())
