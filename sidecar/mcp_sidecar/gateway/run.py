"""`mcp-sidecar mcp`: the gateway over stdio or, with `--http`, Streamable HTTP on loopback (both
protocol eras), with the CLI's configuration rules.

One `Sidecar` app per process, as for every entry point: the same configuration files, project
trust (`--project`, `--trust-project`), catalog caches, keyring and diagnostics. No pygls: the
MCP face is the SDK's server alone. stdout carries only MCP messages; logs go to stderr.

Over stdio the start-up front (`front.py`) answers the host's opening requests while the SDK is
imported in a worker thread; then the SDK's server (`face.py`) takes over, in both eras at once
(`eras.py`). SIGINT, SIGTERM or the end of input stop the gateway: its servers are stopped
without the usual grace (a host waits about 100 ms before it escalates), and the process exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_sidecar import heavy, tasks
from mcp_sidecar.gateway import options, stdio, texts
from mcp_sidecar.gateway.durable import DurableSession
from mcp_sidecar.gateway.front import Front
from mcp_sidecar.gateway.prompt_snapshot import PromptSnapshot
from mcp_sidecar.services import lifecycle
from mcp_sidecar.services.app import Sidecar

if TYPE_CHECKING:
    from mcp_sidecar.gateway.eras import Router
    from mcp_sidecar.gateway.face import Gateway
    from mcp_sidecar.services.user_state import UserState

log = logging.getLogger(__name__)

EXIT_USAGE = 2
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def gateway_app(
    workspace: Path,
    trust_project: bool,
    approved_only: bool = False,
    user: UserState | None = None,
    environ: Mapping[str, str] | None = None,
) -> Sidecar:
    """The app behind a gateway: no editor to notify; configuration files watched, since a host
    keeps the gateway running for a whole conversation; `user` and `environ`, the engine's shared
    state and the front's environment, in the engine.

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
        user=user,
        environ=environ,
    )


def choose_profile(app: Sidecar, args: argparse.Namespace) -> None:
    """`--profile NAME`: the gateway's profile, for every host it serves. One it cannot use (not defined,
    invalid, waiting for approval) is logged, and every server is searched: a host still gets its tools.
    And `--max-active-tools` / `--max-active-tokens`, its session budget over the files'."""
    app.configuration.budget_setting = options.budget_of(args)  # a client's own setting, as its profile is
    name = getattr(args, "profile", None)
    if name is None:
        return
    app.profiles.choose_at_start(name)
    if app.configuration.profile() is None:
        for problem in app.configuration.profile_diagnostics():
            log.warning("gateway --profile: %s", problem.message)


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with a valid parse of the `mcp` command's options, for the person who typed them."""
    if args.trust_project and args.project is None:
        # A host's configuration is often global: trusting "whatever directory it starts in" would
        # trust every repository the user opens.
        return "mcp-sidecar mcp: --trust-project needs --project DIR, the one project to trust"
    if args.token_file is not None and args.http is None:
        return "mcp-sidecar mcp: --token-file needs --http"
    return None


async def serve(args: argparse.Namespace, workspace: Path) -> int:
    wrong = usage_error(args)
    if wrong is not None:
        print(wrong, file=sys.stderr)
        return EXIT_USAGE
    app = gateway_app(workspace, args.trust_project, args.approved_only)
    try:
        app.ensure_loaded()
        choose_profile(app, args)
        if args.http is not None:
            from mcp_sidecar.gateway import http

            return await http.serve(_gateway(app, args), args.http, args.token_file)
        with _stop_signals() as stopped:
            serving = asyncio.ensure_future(_stdio(app, args))
            await asyncio.wait({serving, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not serving.done():
                log.info("gateway: stopping on a signal")
                serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
    finally:
        await app.shutdown(quick=True)
    return 0


@contextlib.contextmanager
def _stop_signals() -> Iterator[asyncio.Future[None]]:
    """A future set by SIGINT or SIGTERM while serving (no `KeyboardInterrupt`, no traceback)."""
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[None] = loop.create_future()

    def stop() -> None:
        if not stopped.done():
            stopped.set_result(None)

    installed = []
    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not on this platform
            loop.add_signal_handler(signum, stop)
            installed.append(signum)
    try:
        yield stopped
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def _gateway(
    app: Sidecar,
    args: argparse.Namespace,
    snapshot: PromptSnapshot | None = None,
    durable: DurableSession | None = None,
) -> Gateway:
    from mcp_sidecar.gateway.face import Gateway

    durable = durable or (DurableSession(args.session) if args.session else None)
    return Gateway(
        app,
        args.tools,
        durable,
        resources=args.resources,
        relist_wait_s=args.list_wait,
        background_after_s=args.background_after or None,
        prompts=snapshot or PromptSnapshot(app),
        expose=args.expose,
        expose_budget=args.expose_budget,
    )


async def serve_front(
    args: argparse.Namespace,
    workspace: Path,
    pipes: stdio.HostPipes,
    user: UserState,
    durable: DurableSession,
    environ: Mapping[str, str],
) -> None:
    """One host's gateway in the engine, over its front's socket: the stdio gateway on shared state, in
    the front's `environ`, continuing `durable` (the `--session` named, else the front's own, which a
    new engine restores)."""
    app = gateway_app(workspace, args.trust_project, args.approved_only, user, environ)
    try:
        app.ensure_loaded()
        choose_profile(app, args)
        await _serve_pipes(app, args, pipes, durable)
    finally:
        await app.shutdown()


async def _stdio(app: Sidecar, args: argparse.Namespace) -> None:
    if not stdio.usable():
        await _sdk_stdio(_gateway(app, args))
        return
    async with stdio.host_pipes() as pipes:
        await _serve_pipes(app, args, pipes)


async def _serve_pipes(
    app: Sidecar, args: argparse.Namespace, pipes: stdio.HostPipes, durable: DurableSession | None = None
) -> None:
    snapshot = PromptSnapshot(app)
    front = Front(
        app,
        args.tools,
        pipes,
        resources=args.resources,
        # A first list that may hold every tool (`--expose`) waits for the SDK side, which measures them.
        restoring=bool(args.session) or durable is not None or texts.profile_tools(app) or _may_expose(args),
        prompts=snapshot,
        prepare=lambda arguments: app.activation.connect_servers_soon(app.model_tool.servers_to_contact(arguments)),
    )
    # Everything the front answers with is computed once here, on this thread, before the SDK is
    # imported on another: no module is then imported by both at once.
    texts.instructions(app.model_tool)
    texts.opening_tools(app.model_tool, args.tools)
    snapshot.listed(modern=False)
    started: list[Router] = []
    gateways: list[Gateway] = []

    async def start() -> Router:
        from mcp_sidecar.gateway.eras import Router

        gateway = _gateway(app, args, snapshot, durable)
        gateways.append(gateway)
        router = Router(gateway.server, pipes, front.unanswered)
        router.start()
        if front.prompts_served:
            gateway.prompts.refresh_soon()
        started.append(router)
        return router

    sdk = tasks.spawn(_sdk_loaded(start), "gateway-sdk")
    try:
        await front.serve(sdk)
    finally:
        sdk.cancel()
        for router in started:
            await router.finish()
        for gateway in gateways:
            await gateway.host_tasks.close()  # the host is gone: so are the calls it followed as tasks


def _may_expose(args: argparse.Namespace) -> bool:
    return bool(args.expose != "search" and args.tools == "native")


async def _sdk_loaded(start: Callable[[], Awaitable[Router]]) -> Callable[[], Awaitable[Router]]:
    """The SDK (client and server halves) and the gateway's SDK modules, imported off the event loop
    by the owner of the heavy imports (`heavy.py`), in its one thread."""
    await lifecycle.load_sdk()
    await heavy.import_modules("mcp_sidecar.gateway.eras", "mcp_sidecar.gateway.face")
    return start


async def _sdk_stdio(gateway: Gateway) -> None:
    """Not pipes (a terminal, a file, Windows): the SDK's own stdio transport, no front."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await gateway.server.run(read, write, gateway.initialization_options())
