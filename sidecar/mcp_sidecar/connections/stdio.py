"""The stdio transport: the server process starts before the SDK is imported.

A cold sidecar pays about a second of `import mcp` before its first connection, and a stdio
server pays about as long for its own start. The SDK's `stdio_client` spawns only once the
SDK is loaded, so the two would add up; `spawn` needs nothing but the event loop, and `transport`
hands the running process to the SDK's `Client` as a pair of message streams
(`stdio_pipes.py`: no pump tasks, lines split in linear time, a line longer than MAX_LINE_BYTES
dropped and reported instead of held in memory).

It follows the SDK's `mcp/client/stdio.py` (the same environment, process group, and the
shutdown order of the MCP lifecycle: close stdin, wait, then kill the process tree). Stopping a
server needs nothing from the SDK either, and runs as a task of its own, so a caller cancelled
(even twice) while it waits cannot leave the server running. POSIX only (`SUPPORTED`); on
Windows connections use the SDK's `stdio_client`, with its own process handling.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import IO, Any

from mcp_sidecar import tasks
from mcp_sidecar.connections.stdio_pipes import (
    MAX_LINE_BYTES,
    LineSplitter,
    OversizedLine,
    ServerPipes,
    StdinMessages,
    StdoutMessages,
    parse_line,
    pruned_message,
)

log = logging.getLogger(__name__)

SUPPORTED = sys.platform != "win32"

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""What a server inherits from its client's environment (the SDK's default list): nothing else of
it, so clients whose environments differ elsewhere still share a server (`connections/sharing.py`)."""
STDIN_GRACE_S = 2.0
"""Time for the server to exit on its own after its stdin closes."""
TERM_GRACE_S = 2.0
"""Time after SIGTERM before SIGKILL."""
REAP_S = 2.0
FLUSH_S = 0.5
"""Time for messages already written to reach stdin before it closes."""
_POLL_S = 0.01
QUICK_GRACE_S = 0.03
"""The grace before SIGKILL once the process is stopping on a signal (`hurry`): stdin is closed and
SIGTERM sent at once, since a host that stops its MCP server waits about 100 ms before it escalates."""
_hurried = False


def hurry() -> None:
    """From now on (this process is ending), every stop, those under way included, gives each of its
    steps QUICK_GRACE_S: stdin closed, then SIGTERM, then SIGKILL, as before, only sooner."""
    global _hurried
    _hurried = True


def _grace(normal_s: float) -> float:
    return min(normal_s, QUICK_GRACE_S) if _hurried else normal_s


def inherited_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The basics a server inherits from the client's `environ` (shell functions excluded)."""
    inherited = {key: value for key in INHERITED_ENV if (value := environ.get(key)) is not None}
    return {key: value for key, value in inherited.items() if not value.startswith("()")}


def server_environment(env: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """Everything a server process starts with: the basics inherited from the client's `environ`, then
    the server's own variables."""
    return inherited_environment(environ) | dict(env)


class ServerProcess:
    """A spawned server; whoever ends up owning it (the transport, or else the caller) stops it."""

    def __init__(self, transport: asyncio.SubprocessTransport, pipes: ServerPipes) -> None:
        self.transport = transport
        self.pipes = pipes
        self.taken_over = False
        """Set once `transport` runs: from then on it stops the process."""

    @property
    def pid(self) -> int:
        return self.transport.get_pid()

    @property
    def returncode(self) -> int | None:
        return self.transport.get_returncode()


async def spawn(
    command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None, stderr: IO[str] | int
) -> ServerProcess:
    """Start the server in a session of its own, so the whole tree can be stopped together; `env` is all
    it gets (`server_environment`)."""
    loop = asyncio.get_running_loop()
    transport, pipes = await loop.subprocess_exec(
        ServerPipes,
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
    )
    return ServerProcess(transport, pipes)


@asynccontextmanager
async def transport(server: ServerProcess) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's transport streams over a running process; leaving it stops the process."""
    server.taken_over = True
    read, write = StdoutMessages(server.pipes), StdinMessages(server.pipes)
    try:
        yield read, write
    finally:
        read.close()
        write.close()
        # Every wait inside is bounded. A task of its own: a cancelled caller must not leave
        # the server running.
        await asyncio.shield(tasks.spawn(_flush_and_stop(server), "mcp-stdio-shutdown"))


async def _flush_and_stop(server: ServerProcess) -> None:
    """What was written reaches stdin (at most FLUSH_S), then the MCP shutdown order."""
    server.pipes.writes.flush()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(server.pipes.drain(), _grace(FLUSH_S))
    await _stop(server)


async def stop(server: ServerProcess) -> None:
    """Close stdin, give the server STDIN_GRACE_S to exit, then stop its whole process group.

    Runs to the end in a task of its own, even when the caller is cancelled meanwhile."""
    await asyncio.shield(tasks.spawn(_stop(server), "mcp-stdio-stop"))


async def _stop(server: ServerProcess) -> None:
    server.pipes.discard_output()  # a server flushing output can still exit
    server.pipes.writes.flush()
    stdin = server.pipes.stdin_pipe()
    if stdin is not None:
        stdin.close()  # after what is buffered is written
    # Hurried, the server gets no time to itself: SIGTERM follows the closed stdin at once.
    if not await _exited(server, 0 if _hurried else STDIN_GRACE_S):
        await _terminate_group(server, TERM_GRACE_S)
        if not await _exited(server, REAP_S, hurried_too=False):
            log.warning("server process %d is still alive after SIGKILL; abandoning it", server.pid)
    # A surviving child may hold the pipes open: close them (the process itself has ended).
    with contextlib.suppress(PermissionError, ProcessLookupError):
        server.transport.close()


async def _terminate_group(server: ServerProcess, grace_s: float) -> None:
    """SIGTERM to the server's process group, SIGKILL to what is left after `grace_s`.

    The group id is the server's pid (`start_new_session`), so children that outlived their
    parent are reached too. EPERM proves nothing either way, so it only means: keep waiting.
    """
    group = server.pid
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        log.warning("no permission to signal all of process group %d; waiting for it anyway", group)
    loop = asyncio.get_running_loop()
    started = loop.time()
    while loop.time() - started < _grace(grace_s):
        if not _group_alive(group):
            return
        await asyncio.sleep(_POLL_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


async def _exited(server: ServerProcess, within_s: float, *, hurried_too: bool = True) -> bool:
    """Whether the server ended within `within_s` (not the end of its pipes: a child may hold them),
    shortened by `hurry`, even while waiting, unless `hurried_too` is False (reaping after SIGKILL
    takes what it takes)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while server.returncode is None:
        limit = _grace(within_s) if hurried_too else within_s
        if loop.time() - started >= limit:
            return False
        await asyncio.sleep(_POLL_S)
    return True


__all__ = [
    "MAX_LINE_BYTES",
    "SUPPORTED",
    "LineSplitter",
    "OversizedLine",
    "ServerProcess",
    "hurry",
    "inherited_environment",
    "parse_line",
    "pruned_message",
    "server_environment",
    "spawn",
    "stop",
    "transport",
]
