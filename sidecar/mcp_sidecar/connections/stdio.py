"""The stdio transport: the server process starts before the SDK is imported.

A cold sidecar pays about a second of `import mcp` before its first connection, and a stdio
server pays about as long for its own start. The SDK's `stdio_client` spawns only once the
SDK is loaded, so the two would add up; `spawn` needs nothing but anyio, and `transport`
hands the running process to the SDK's `Client` as a pair of message streams.

It follows the SDK's `mcp/client/stdio.py` (the same environment, process group, and the
shutdown order of the MCP lifecycle: close stdin, wait, then kill the process tree) with two
changes: stdout is split into lines in linear time, and a line longer than MAX_LINE_BYTES
is dropped and reported instead of being held in memory. Stopping a server needs nothing from
the SDK either, and runs as a task of its own, so a caller cancelled (even twice) while it
waits cannot leave the server running. POSIX only (`SUPPORTED`); on Windows connections use
the SDK's `stdio_client`, with its own process handling.
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
from typing import IO, TYPE_CHECKING, Any

from mcp_sidecar import tasks

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream, Process

log = logging.getLogger(__name__)

SUPPORTED = sys.platform != "win32"

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""What a server inherits from the sidecar's environment (the SDK's default list)."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message taken from a stdio server. Larger ones are dropped unparsed, and the
request they answer ends with its time limit; full results are kept (and spilled) below this."""
STDIN_GRACE_S = 2.0
"""Time for the server to exit on its own after its stdin closes."""
TERM_GRACE_S = 2.0
"""Time after SIGTERM before SIGKILL."""
REAP_S = 2.0
FLUSH_S = 0.5
"""Time for messages already accepted to reach stdin before it closes."""
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


class OversizedLine(ValueError):
    """A line on the server's stdout longer than MAX_LINE_BYTES; it was dropped unread."""


def server_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The inherited basics (shell functions excluded), then the server's own variables."""
    inherited = {key: value for key in INHERITED_ENV if (value := os.environ.get(key)) is not None}
    return {k: v for k, v in inherited.items() if not v.startswith("()")} | dict(env)


class ServerProcess:
    """A spawned server; whoever ends up owning it (the transport, or else the caller) stops it."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.taken_over = False
        """Set once `transport` runs: from then on it stops the process."""


async def spawn(
    command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None, stderr: IO[str] | int
) -> ServerProcess:
    """Start the server in a session of its own, so the whole tree can be stopped together."""
    import anyio

    process = await anyio.open_process(
        [command, *args], env=server_environment(env), stderr=stderr, cwd=cwd, start_new_session=True
    )
    return ServerProcess(process)


class LineSplitter:
    """Splits a byte stream into lines, joining each line's pieces once (never re-scanning)."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._dropping = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        """Complete lines in `chunk`; None stands for a line that was too long and dropped."""
        *complete, rest = chunk.split(b"\n")
        lines: list[bytes | None] = []
        for piece in complete:
            if self._dropping or self._size + len(piece) > self._limit:
                lines.append(None)
            else:
                self._parts.append(piece)
                lines.append(b"".join(self._parts))
            self._parts, self._size, self._dropping = [], 0, False
        if not self._dropping and rest:
            self._parts.append(rest)
            self._size += len(rest)
            if self._size > self._limit:
                self._parts, self._size, self._dropping = [], 0, True
        return lines


def parse_line(line: bytes | None) -> Any:
    """A SessionMessage, or the error as a value: the session counts it and goes on.

    A message nested deeper than the SDK's parser goes (a tool schema of 900 levels) is read with
    its deepest values replaced by a marker (`json_depth.prune`): the request it answers gets its
    answer at once, and the catalog refuses the entry that held them (`catalog/names.py`).
    """
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    if line is None:
        return OversizedLine(f"a line of more than {MAX_LINE_BYTES} bytes on stdout was dropped")
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        pruned = pruned_message(line)
        if pruned is not None:
            try:
                return SessionMessage(jsonrpc_message_adapter.validate_json(pruned, by_name=False))
            except ValueError:
                pass
        log.debug("a line on stdout is not a JSON-RPC message: %s", type(exc).__name__)
        return exc


def pruned_message(line: bytes) -> bytes | None:
    """A message with values nested past `json_depth.MESSAGE_DEPTH` left out, or None when none are
    (or it is no JSON)."""
    from mcp_sidecar import json_depth

    pruned = json_depth.prune(line)
    if pruned is None or pruned is line:
        return None
    log.info("a message nests deeper than %d levels: its deepest values are left out", json_depth.MESSAGE_DEPTH)
    return pruned


@asynccontextmanager
async def transport(server: ServerProcess) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's transport streams over a running process; leaving it stops the process."""
    import anyio

    server.taken_over = True
    pipes = _Pipes(server.process)
    async with anyio.create_task_group() as group:
        group.start_soon(pipes.read_stdout)
        group.start_soon(pipes.write_stdin)
        try:
            yield pipes.read_stream, pipes.write_stream
        finally:
            # Every wait inside is bounded. A task of its own: anyio's shield does not hold against
            # asyncio's Task.cancel(), and a cancelled caller must not leave the server running.
            try:
                await asyncio.shield(tasks.spawn(pipes.shutdown(), "mcp-stdio-shutdown"))
            finally:
                group.cancel_scope.cancel()


class _Pipes:
    """The process's stdin and stdout as the SDK's pair of message streams, pumped by two tasks."""

    def __init__(self, process: Process) -> None:
        import anyio
        from mcp.shared.message import SessionMessage

        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin, self.stdout = process.stdin, process.stdout
        self.read_writer, self.read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self.write_stream, self.write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        self.writer_done = anyio.Event()

    async def read_stdout(self) -> None:
        import anyio

        try:
            async with self.read_writer:
                try:
                    await self._deliver_lines()
                finally:
                    await _drain(self.stdout)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session went away, or our shutdown closed the pipe under the read
        except OSError as exc:
            # The session sees the end of the stream either way; a failing pipe is worth a line.
            log.info("reading a server's stdout failed: %s", type(exc).__name__)

    async def _deliver_lines(self) -> None:
        lines = LineSplitter()
        # One chunk at a time: no read-ahead while a delivery is blocked.
        async for chunk in self.stdout:
            for line in lines.feed(chunk):
                if line is None or line.strip():
                    await self.read_writer.send(parse_line(line))

    async def write_stdin(self) -> None:
        import anyio

        try:
            async with self.write_reader:
                async for message in self.write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await self.stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may live on with a broken stdin: end the session rather than hang it.
            await self.read_writer.aclose()
        finally:
            self.writer_done.set()

    async def shutdown(self) -> None:
        import anyio
        import anyio.lowlevel

        # Unblock the reader into its drain first: a server stuck writing cannot read stdin.
        self.read_stream.close()
        self.write_stream.close()
        with anyio.move_on_after(_grace(FLUSH_S)):
            await self.writer_done.wait()
        await _stop(self.process)
        for stream in (self.read_stream, self.write_stream, self.read_writer, self.write_reader):
            await stream.aclose()
        await anyio.lowlevel.checkpoint()


async def stop(process: Process) -> None:
    """Close stdin, give the server STDIN_GRACE_S to exit, then stop its whole process group.

    Runs to the end in a task of its own, even when the caller is cancelled meanwhile."""
    await asyncio.shield(tasks.spawn(_stop(process), "mcp-stdio-stop"))


async def _stop(process: Process) -> None:
    if process.stdin is not None:
        await _close(process.stdin)
    # Hurried, the server gets no time to itself: SIGTERM follows the closed stdin at once.
    if not await _exited(process, 0 if _hurried else STDIN_GRACE_S):
        await _terminate_group(process, TERM_GRACE_S)
        if not await _exited(process, REAP_S, hurried_too=False):
            log.warning("server process %d is still alive after SIGKILL; abandoning it", process.pid)
    if process.stdout is not None:
        await _close(process.stdout)  # a surviving child may hold the pipe open
    # Without this the asyncio transport stays open (and warns at exit) while a child holds a pipe.
    pipes = getattr(getattr(process, "_process", None), "_transport", None)
    with contextlib.suppress(PermissionError, AttributeError):
        pipes.close()  # type: ignore[union-attr]


async def _terminate_group(process: Process, grace_s: float) -> None:
    """SIGTERM to the server's process group, SIGKILL to what is left after `grace_s`.

    The group id is the server's pid (`start_new_session`), so children that outlived their
    parent are reached too. EPERM proves nothing either way, so it only means: keep waiting.
    """
    import anyio

    group = process.pid
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        log.warning("no permission to signal all of process group %d; waiting for it anyway", group)
    started = anyio.current_time()
    while anyio.current_time() - started < _grace(grace_s):
        if not _group_alive(group):
            return
        _ = process.returncode  # reaps the leader, whose zombie would keep the group alive
        await anyio.sleep(_POLL_S)
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


async def _exited(process: Process, within_s: float, *, hurried_too: bool = True) -> bool:
    """Whether the process exited within `within_s` (shortened by `hurry`, even while waiting,
    unless `hurried_too` is False: reaping after SIGKILL takes what it takes)."""
    # Not process.wait(): it also waits for pipe EOF, which a child holding the pipes never sends.
    import anyio

    started = anyio.current_time()
    while process.returncode is None:
        limit = _grace(within_s) if hurried_too else within_s
        if anyio.current_time() - started >= limit:
            return False
        await anyio.sleep(_POLL_S)
    return True


async def _drain(stdout: ByteReceiveStream) -> None:
    """Read and discard what is left, so a server flushing output can still exit."""
    import anyio

    with anyio.CancelScope(shield=True):
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            while True:
                await stdout.receive()


async def _close(stream: Any) -> None:
    import anyio

    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.aclose()
