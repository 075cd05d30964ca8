"""The engine process (`mcp-sidecar engine`): accepts fronts on its socket and serves each one's client.

Every accepted connection is checked (`runtime.check_peer`: the same uid), then sends its hello
line (`engine/front.py`) and gets the engine's answer; after that the socket carries the client's
own stream, served as the front's own process would serve it: an LSP front by a pygls server
with its own `Sidecar` (`server.create_server`, `server.run_client`), in the front's own
environment from its hello (`${VAR}`, secret commands, what its stdio servers inherit; the
engine's own environment decides only the engine's homes). When the last front has gone, the
engine waits `grace` seconds for another and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
import os
import select
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_sidecar import __version__, logs, tasks
from mcp_sidecar.engine import resume, runtime
from mcp_sidecar.engine.framing import LineFrames, LspFrames
from mcp_sidecar.engine.front import FRONT_LOG, HELLO_VERSION, MAX_HELLO_BYTES
from mcp_sidecar.engine.kinds import CLI_COMMANDS
from mcp_sidecar.engine.resume import FRONT_ID, FrontSessions, Saved, fronts_dir, gateway_session_name
from mcp_sidecar.gateway.stdio import MAX_LINE_BYTES

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.user_state import UserState

log = logging.getLogger(__name__)

GRACE_ENV = "MCP_SIDECAR_ENGINE_GRACE"
DEFAULT_GRACE_SECONDS = 60.0
SERVER_IDLE_ENV = "MCP_SIDECAR_SERVER_IDLE"
DEFAULT_SERVER_IDLE_SECONDS = 30.0
"""A server no front uses stops after this; a window opened meanwhile finds it running."""
HELLO_SECONDS = 10.0
KINDS = ("lsp", "mcp", "cli")
"""What the engine serves: editors (LSP), hosts (the gateway on stdio) and CLI runs; the gateway's
HTTP mode, `login`, `logout` and `call --elicit` run in their own process."""


@dataclass(frozen=True)
class HelloLine:
    kind: str
    front: str
    resume: str | None
    cwd: Path
    argv: list[str]
    env: dict[str, str] = field(repr=False)
    """The front's environment: its client's `${VAR}` resolve in it (never logged)."""


def parse_hello(line: bytes) -> HelloLine | str:
    """The front's hello, or why it is refused."""
    try:
        raw = json.loads(line)
    except ValueError:
        return "the hello is not JSON"
    if not isinstance(raw, dict) or raw.get("v") != HELLO_VERSION:
        return "another hello version"
    kind, front, cwd, argv, env = (raw.get(k) for k in ("kind", "front", "cwd", "argv", "env"))
    if kind not in KINDS:
        return f"this engine does not serve {kind!r} fronts"
    if not (isinstance(front, str) and FRONT_ID.match(front) and isinstance(cwd, str) and Path(cwd).is_absolute()):
        return "the hello lacks the front's id or an absolute working directory"
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        return "the hello's argv is not a list of strings"
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        return "the hello's environment is not a map of strings"
    resume = raw.get("resume")
    return HelloLine(kind, front, resume if isinstance(resume, str) else None, Path(cwd), argv, env)


class Engine:
    def __init__(self, grace: float, runtime_dir: Path) -> None:
        from mcp_sidecar.services.fronts import EngineInfo
        from mcp_sidecar.services.user_state import UserState

        self._grace = grace
        self._fronts = fronts_dir(runtime_dir)
        resume.sweep(self._fronts)
        self.user = UserState(server_idle_s=seconds_from(SERVER_IDLE_ENV, DEFAULT_SERVER_IDLE_SECONDS))
        """What every front's client shares: connections, catalogs, credentials."""
        self.user.engine = EngineInfo(os.getpid(), __version__, time.time())
        self._clients = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._attached = asyncio.Event()
        self._stop = asyncio.Event()
        self.served = 0

    def stop(self) -> None:
        """End soon, in order (SIGTERM, SIGINT): stop accepting, close the servers, exit. The fronts
        still attached see their engine go and start the next one."""
        self._stop.set()

    async def serve(self, listener: socket.socket) -> None:
        # The gateway reads a host's lines up to 64 MiB, as over its own stdio (gateway/stdio.py).
        server = await asyncio.start_unix_server(self._accept, sock=listener, limit=MAX_LINE_BYTES)
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            while True:
                idle = asyncio.ensure_future(self._idle_for_grace())
                await asyncio.wait({idle, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if stopping.done():
                    idle.cancel()
                    log.info("asked to stop: the engine closes its servers and exits")
                    return
                if idle.result():
                    log.info("no front for %g s: the engine exits", self._grace)
                    return
        finally:
            stopping.cancel()
            server.close()  # no new front while the servers stop: one that comes starts a new engine
            await self.user.close()

    async def _idle_for_grace(self) -> bool:
        """True once no front was attached for the whole grace period."""
        await self._idle.wait()
        self._attached.clear()
        try:
            await asyncio.wait_for(self._attached.wait(), self._grace)
        except TimeoutError:
            return self._clients == 0
        return False

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        try:
            runtime.check_peer(sock)
        except runtime.PeerRefused as exc:
            log.warning("%s", exc)
            writer.close()
            return
        self._clients += 1
        self._idle.clear()
        self._attached.set()
        try:
            await self._serve_front(reader, writer)
        except Exception:
            log.exception("serving a front failed")
        finally:
            self._clients -= 1
            if self._clients == 0:
                self._idle.set()
            with contextlib.suppress(OSError):
                writer.close()

    async def _serve_front(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), HELLO_SECONDS)
        except (TimeoutError, ValueError):
            return
        hello = parse_hello(line[:MAX_HELLO_BYTES])
        if isinstance(hello, str):
            writer.write(json.dumps({"v": HELLO_VERSION, "refused": hello}).encode() + b"\n")
            await writer.drain()
            return
        args = _front_args(hello) if hello.kind != "lsp" else None
        if isinstance(args, str):
            writer.write(json.dumps({"v": HELLO_VERSION, "usage": args, "exit": 2}).encode() + b"\n")
            await writer.drain()
            return
        engine = {"pid": os.getpid(), "version": __version__, "served": self.served}
        writer.write(json.dumps({"v": HELLO_VERSION, "engine": engine}).encode() + b"\n")
        self.served += 1
        log.info("front %s attached (%s, resume=%s)", hello.front, hello.kind, bool(hello.resume))
        from mcp_sidecar.services.fronts import Front, serving

        # The client built for this front is listed as its (`mcp/status`'s `engine.clients`).
        with _client_log(hello, writer).serving(), serving(Front(hello.kind, time.time())):
            if args is None:
                await _serve_lsp(hello, reader, writer, self.user, self._fronts)
            elif hello.kind == "mcp":
                await _serve_gateway(hello, args, reader, writer, self.user, self._fronts)
            else:
                await _serve_cli(hello, args, writer, self.user)
        log.info("front %s detached", hello.front)


async def _serve_lsp(
    hello: HelloLine, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, user: UserState, fronts: Path
) -> None:
    from mcp_sidecar.server import create_server, run_client

    project, trusted, profile = _project_options(hello)
    saved = FrontSessions(fronts, hello.front)
    restore = saved.load() if hello.resume == hello.front else {}
    resume.touch(fronts, f"{hello.front}.json")
    restored = asyncio.Event()
    if not restore:
        restored.set()

    def initialized(app: Sidecar) -> None:
        if restore:
            tasks.spawn(_restore(saved, app, restore, restored), "engine-restore")

    defaults = {"workspace": project or hello.cwd, "trusted": trusted, "environ": hello.env, "profile": profile}
    server, app = create_server(defaults, user, initialized)
    _around_requests(server.fast_handlers, saved, app, restored)
    # pygls' `exit` handler ends the process it thinks it owns: here, only this client's stream.
    try:
        with contextlib.suppress(SystemExit):
            await run_client(server, app, reader, _StreamWriterAdapter(writer), lambda: _hung_up(writer))
    except Exception:
        saved.remove()  # serving this client failed: it is gone
        raise
    # Only here and above: an engine that stops (SIGTERM) or dies leaves its fronts' files for the
    # next engine, which the fronts attach to with `resume` (a cancelled or closed coroutine is no
    # client that went away).
    saved.remove()  # the client is done


async def _restore(saved: FrontSessions, app: Sidecar, restore: Saved, restored: asyncio.Event) -> None:
    try:
        lost = await saved.restore(app, restore)
    finally:
        restored.set()
    if lost:
        log.warning("a front's sessions came back without %d tool(s) that changed or are gone", len(lost))


RESTORE_WAIT_SECONDS = 30.0
"""How long a resumed client's request waits for its sessions to come back before it runs anyway."""


def _around_requests(handlers: dict[str, Any], saved: FrontSessions, app: Sidecar, restored: asyncio.Event) -> None:
    """Every request the client sends through the sidecar's own methods waits until a resumed client's
    sessions are back (so a call to a tool it had active finds it active), and saves its sessions
    after it when they changed: activations, calls that activate, session ends, reloads."""
    for method, handler in list(handlers.items()):

        async def around(params: Any, handler: Any = handler) -> Any:
            if not restored.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(restored.wait(), RESTORE_WAIT_SECONDS)
            try:
                return await handler(params)
            finally:
                saved.save(app)

        handlers[method] = around


def _front_args(hello: HelloLine) -> argparse.Namespace | str:
    """A gateway's or a CLI run's options from the front's command line, or the usage error to print there."""
    from mcp_sidecar import cli_parser
    from mcp_sidecar.gateway.run import usage_error

    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            args = cli_parser.parse_args(hello.argv)
    except SystemExit:
        return errors.getvalue().strip() or "mcp-sidecar mcp: invalid options"
    if hello.kind == "cli":
        return args if args.command in CLI_COMMANDS and not getattr(args, "elicit", False) else "not a CLI run"
    if args.command != "mcp" or args.http is not None:
        return "mcp-sidecar mcp: only the stdio gateway runs as a front of the engine"
    return usage_error(args) or args


async def _serve_cli(hello: HelloLine, args: argparse.Namespace, writer: asyncio.StreamWriter, user: UserState) -> None:
    """One CLI run for a front: what it prints goes back as lines, then its exit status."""
    from mcp_sidecar import cli

    project, _, _ = _project_options(hello)
    out = cli.Output(_PrintedLines(writer, "out"), _PrintedLines(writer, "err"), user, hello.env)
    code = await cli.run_headless(args, project or hello.cwd, out)
    writer.write(json.dumps({"exit": code}).encode() + b"\n")
    await writer.drain()


class _PrintedLines(io.StringIO):
    """A text stream whose writes go to the front as `{"out": ...}` or `{"err": ...}` lines."""

    def __init__(self, writer: asyncio.StreamWriter, name: str) -> None:
        super().__init__()
        self._writer = writer
        self._name = name

    def write(self, text: str) -> int:
        if text and not self._writer.is_closing():
            self._writer.write(json.dumps({self._name: text}).encode() + b"\n")
        return len(text)


async def _serve_gateway(
    hello: HelloLine,
    args: argparse.Namespace,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    user: UserState,
    fronts: Path,
) -> None:
    from mcp_sidecar.gateway.durable import DurableSession
    from mcp_sidecar.gateway.run import serve_front
    from mcp_sidecar.gateway.stdio import HostPipes

    project, _, _ = _project_options(hello)
    own = args.session is None
    durable = DurableSession(gateway_session_name(hello.front), fronts) if own else DurableSession(args.session)
    if own:
        resume.touch(fronts, f"{gateway_session_name(hello.front)}.json")
    try:
        await serve_front(args, project or hello.cwd, HostPipes(reader, writer), user, durable, hello.env)
    except Exception:
        if own:
            durable.remove()
        raise
    if own:
        durable.remove()  # the host is done; a stopping engine leaves the file for the next one


def _client_log(hello: HelloLine, writer: asyncio.StreamWriter) -> logs.ClientLog:
    """The log this client's own process would have kept: `-v`, `--log-file` (against the front's
    directory) and its stderr, which goes to the front as `FRONT_LOG` messages (CLI runs: `{"err"}` lines)."""
    from mcp_sidecar import cli_parser

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args = cli_parser.parse_args(hello.argv)
    except SystemExit:
        args = None
    verbosity = int(getattr(args, "verbose", 0) or 0)
    log_file = getattr(args, "log_file", None)
    path = (hello.cwd / Path(log_file).expanduser()) if log_file else None
    loop = asyncio.get_running_loop()
    frame = LspFrames.frame if hello.kind == "lsp" else LineFrames.frame

    def message(text: str) -> bytes:
        if hello.kind == "cli":
            return json.dumps({"err": text}).encode() + b"\n"
        return frame({"jsonrpc": "2.0", "method": FRONT_LOG, "params": {"text": text}})

    def send(text: str) -> None:
        data = message(text)
        if _in_loop(loop):
            if not writer.is_closing():
                writer.write(data)
        else:  # a record made in a worker thread
            loop.call_soon_threadsafe(lambda: None if writer.is_closing() else writer.write(data))

    return logs.ClientLog(verbosity, path, send)


def _in_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _project_options(hello: HelloLine) -> tuple[Path | None, bool, str | None]:
    """`--project DIR` (resolved against the front's directory, as the CLI resolves it against its
    own), `--trust-project` and `--profile NAME`, read by the command's own parser."""
    from mcp_sidecar import cli_parser

    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            args = cli_parser.parse_args(hello.argv)
    except SystemExit:
        return None, False, None  # an editor's serve takes no other words; a bad one trusts nothing
    project = (hello.cwd / args.project).resolve() if args.project is not None else None
    return project, bool(args.trust_project), args.profile


def _hung_up(writer: asyncio.StreamWriter) -> bool:
    """Whether the front closed its socket both ways (killed, or gone) rather than only its sending
    half (its host's input ended, but it still reads the answers)."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return True
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLHUP)
    try:
        return any(events & (select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))
    except OSError:
        return True


class _StreamWriterAdapter:
    """pygls' writer (write, flush, close) over the front's socket."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._writer.close()


def seconds_from(name: str, default: float) -> float:
    """A number of seconds from the environment (0 or more), else `default` (a bad value is logged)."""
    raw = os.environ.get(name)
    try:
        return max(0.0, float(raw)) if raw else default
    except ValueError:
        log.warning("%s must be a number of seconds; using %g", name, default)
        return default


def main() -> int:
    """Listen on this user's engine socket and serve until idle for the grace period."""
    try:
        paths = runtime.engine_paths()
        listener = runtime.listen(paths.socket)
    except (runtime.EngineUnavailable, OSError) as exc:
        log.error("the engine cannot listen: %s", exc)
        return 1
    logs.route_clients()
    loop = asyncio.new_event_loop()
    engine = Engine(seconds_from(GRACE_ENV, DEFAULT_GRACE_SECONDS), Path(paths.directory))
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, engine.stop)
    try:
        loop.run_until_complete(engine.serve(listener))
    except asyncio.CancelledError:
        pass
    finally:
        # Under the start lock, so a front starting the next engine never has its socket removed.
        with runtime.start_lock(paths.lock):
            listener.close()
            if runtime.probe(paths.socket) == "stale":
                runtime.remove_socket(paths.socket)
    return 0
