"""`mcp-sidecar`: serve stdio JSON-RPC (no subcommand), or run one headless operation.

Headless subcommands run the same services in-process and print JSON (`--json`) or text.
Stdout carries only the JSON-RPC stream when serving, and only the result otherwise. What is
printed to a terminal is sanitised (`output/sanitize.py`): text loses control, bidi,
zero-width and TAG characters; JSON keeps every value but writes those characters as
`\\uXXXX` escapes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from mcp_sidecar.operations.row import Operation
    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.user_state import UserState

from mcp_sidecar.cli_parser import build_parser, parse_args

__all__ = ["build_parser", "main", "parse_args", "run_row"]

EXIT_FAILED = 1
EXIT_USAGE = 2


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from mcp_sidecar import logs

    logs.setup(args.verbose, args.log_file)
    project = args.project.resolve() if args.project else None
    if args.command in (None, "serve"):
        from mcp_sidecar.config.paths import cache_dir
        from mcp_sidecar.startup import attrs_code_cache, attrs_sources_not_kept, collector_paused

        with collector_paused(), attrs_code_cache(cache_dir()), attrs_sources_not_kept():
            from mcp_sidecar.server import serve_stdio

        return serve_stdio({"workspace": project or Path.cwd(), "trusted": args.trust_project, "profile": args.profile})
    if args.command == "engine":
        print(
            "mcp-sidecar engine: started by the fronts (unless MCP_SIDECAR_ENGINE=off), through `mcp-sidecar`",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.command == "run":
        return asyncio.run(_run_line(args, project or Path.cwd()))
    if args.command == "mcp":
        return _gateway(args, project or Path.cwd())
    if args.command == "app":
        from mcp_sidecar import cli_app

        return asyncio.run(cli_app.show_app(args, project or Path.cwd()))
    if args.command in ("login", "logout", "conformance-client"):
        from mcp_sidecar import cli_auth

        if args.command == "conformance-client":
            from mcp_sidecar import cli_conformance

            return asyncio.run(cli_conformance.conformance_client(args.url))
        return asyncio.run(cli_auth.login_or_logout(args, project or Path.cwd()))
    return asyncio.run(_headless(args, project or Path.cwd()))


def _gateway(args: argparse.Namespace, workspace: Path) -> int:
    """`mcp-sidecar mcp`, ended quickly and quietly: a host sends SIGINT or SIGTERM and escalates
    after about 100 ms, so a signal before the event loop serves ends the process at once (nothing
    has been started that needs stopping), the loop's own handlers stop it once it serves, and the
    interpreter's teardown (tens of milliseconds of module clean-up) is skipped once the servers
    are stopped and the logs flushed."""
    import logging
    import os
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: os._exit(0))
    from mcp_sidecar.gateway import run as gateway_run

    # Not asyncio.run: it waits for the worker threads, and one may still be importing the SDK
    # (a second) when a host stops the gateway just after starting it.
    loop = asyncio.new_event_loop()
    code = loop.run_until_complete(gateway_run.serve(args, workspace))
    leftovers = asyncio.all_tasks(loop)
    for task in leftovers:
        task.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.wait(leftovers, timeout=0.05))
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    os._exit(code)


def _command_line(words: list[str]) -> str:
    """One argument is the line itself; several are words the shell already split (kept literal)."""
    if len(words) == 1:
        return words[0]
    from mcp_sidecar.output.command_text import quote_word

    return " ".join(quote_word(word) for word in words)


async def _run_line(args: argparse.Namespace, project: Path, out: Output | None = None) -> int:
    from mcp_sidecar.operations.table import run_command
    from mcp_sidecar.output.sanitize import json_text, one_line, strip_controls
    from mcp_sidecar.protocol.errors import SidecarError
    from mcp_sidecar.services.app import Sidecar

    io = out or Output()
    app = Sidecar.headless(project, args.trust_project, io.user, io.environ)
    if (refused := _profile_refused(app, args)) is not None:
        await app.shutdown()
        print(refused, file=io.err)
        return EXIT_USAGE
    try:
        result = await run_command(app, _command_line(args.line))
    except SidecarError as exc:
        diag = exc.diagnostic
        if args.json:
            print(json_text({"error": diag.to_json()}), file=io.out)
        else:
            print(one_line(diag.render()), file=io.err)
            if diag.usage:
                print(strip_controls(diag.usage), file=io.err)
        return EXIT_USAGE if diag.code == "command_invalid" else EXIT_FAILED
    finally:
        await app.shutdown()
        _report_grant(app, io.err)
    print(json_text(result) if args.json else strip_controls(result["text"]), file=io.out)
    return 0


class Output:
    """Where a run prints (this process's stdout and stderr, or a front's through the engine), the
    user state it shares (the engine's; None: its own) and the environment it runs in (the front's;
    None: this process's)."""

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        user: UserState | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.user = user
        self.environ = environ


def _report_grant(app: Sidecar, err: TextIO) -> None:
    """`--trust-project` approves the project's definitions as they are: say which were new or changed."""
    for pending in app.configuration.granted:
        print(
            f"mcp-sidecar: --trust-project approved the {pending.change} project server {pending.server!r}: "
            f"{pending.summary}",
            file=err,
        )


async def run_headless(args: argparse.Namespace, project: Path, out: Output | None = None) -> int:
    """One subcommand (a `/mcp` line for `run`), printed to `out`; its exit status."""
    if args.command == "run":
        return await _run_line(args, project, out)
    return await _headless(args, project, out)


async def _headless(args: argparse.Namespace, project: Path, out: Output | None = None) -> int:
    from mcp_sidecar.operations.table import CLI_ROWS
    from mcp_sidecar.output.sanitize import json_text, one_line, strip_controls
    from mcp_sidecar.protocol.errors import SidecarError
    from mcp_sidecar.services.app import Sidecar

    io = out or Output()
    app = Sidecar.headless(project, args.trust_project, io.user, io.environ)
    app.ensure_loaded()
    row = CLI_ROWS[args.command]
    if (refused := _profile_refused(app, args) or _usage(app, row, args)) is not None:
        await app.shutdown()
        print(refused, file=io.err)
        return EXIT_USAGE
    try:
        result = await run_row(app, row, args)
    except SidecarError as exc:
        diag = exc.diagnostic
        if args.json:
            print(json_text({"error": diag.to_json()}), file=io.out)
        else:
            print(one_line(diag.render()), file=io.err)
        return EXIT_FAILED
    finally:
        await app.shutdown()
        _report_grant(app, io.err)
    assert row.cli is not None
    failure = row.cli.failed is not None and row.cli.failed(result)
    if args.json:
        print(json_text(result), file=io.out)
    else:
        # A call that never ran, or an activation that loaded nothing, is a failure like any
        # diagnostic: its reason goes to stderr.
        print(strip_controls(row.cli_text()(result)), file=io.err if failure else io.out)
    failed = failure or bool(result.get("isError")) if isinstance(result, dict) else False
    return EXIT_FAILED if failed else 0


def _profile_refused(app: Sidecar, args: argparse.Namespace) -> str | None:
    """`--profile NAME`: this run's profile (it narrows what is searched and activated); a name that is not
    a profile the run can use is a usage failure, never a run over every server."""
    name = getattr(args, "profile", None)
    if name is None:
        return None
    app.ensure_loaded()
    app.profiles.choose_at_start(name)
    if app.configuration.profile() is not None:
        return None
    problem = next(
        d for d in app.configuration.profile_diagnostics() if d.code in ("profile_not_found", "trust_required")
    )
    choosable = ", ".join(app.profiles.choosable()) or "none"
    return f"mcp-sidecar: --profile: {problem.message} (profiles: {choosable})"


def _usage(app: Sidecar, row: Operation[Any], args: argparse.Namespace) -> str | None:
    """A usage failure to print (exit status 2, nothing run); `call --elicit` offers elicitation."""
    assert row.cli is not None
    if row.cli.usage is not None and (refused := row.cli.usage(args)) is not None:
        return refused
    if args.command == "call" and args.elicit:
        from mcp_sidecar import cli_elicit

        if (refused := cli_elicit.refusal()) is not None:
            return refused
        cli_elicit.enable(app)
    return None


async def run_row(app: Sidecar, row: Operation[Any], args: argparse.Namespace) -> Any:
    """A subcommand's result: the row's call on the params its arguments carry."""
    from mcp_sidecar.operations.row import invoke

    assert row.cli is not None
    called = invoke(row, app, row.cli.from_args(args))
    return await (row.cli.finish(app, args, called) if row.cli.finish is not None else called)
