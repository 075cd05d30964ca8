"""A stdio server's pipes as the SDK's pair of message streams, without tasks of their own.

The event loop's subprocess protocol receives the server's stdout in its own callback: it splits
it into lines there (in linear time, dropping a line longer than MAX_LINE_BYTES), and the
session's reader, the SDK's dispatcher, takes them one by one and parses each. The session's
writers write a message straight into the stdin pipe (the messages of one event-loop turn in one
write, `corked.py`), waiting only when the pipe's buffer is full. An earlier version pumped each
direction through a task and an anyio memory stream: two more tasks woken per message, about a
fifth of the sidecar's work per tool call.

Reading stops while more than READ_AHEAD_BYTES of lines wait for the reader (a server that
writes faster than the session reads is not buffered without bound). Once the transport is
left, stdout is read and dropped, so a server still writing can exit.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import TYPE_CHECKING, Any

from mcp_sidecar.corked import CorkedWrites

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message taken from a stdio server. Larger ones are dropped unparsed, and the
request they answer ends with its time limit; full results are kept (and spilled) below this."""
READ_AHEAD_BYTES = 1024 * 1024
STDIN, STDOUT = 0, 1


class OversizedLine(ValueError):
    """A line on the server's stdout longer than MAX_LINE_BYTES; it was dropped unread."""


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
    (or it is no JSON).

    Only for a message that may nest that deep (a line the SDK's parser refused, an HTTP body whose
    brackets do not pair): rare enough to wait here for numpy, which finds its brackets (loaded by
    its owner, `heavy.NUMPY`, if no discovery has loaded it yet)."""
    from mcp_sidecar import heavy, json_depth

    heavy.NUMPY.wait()

    pruned = json_depth.prune(line)
    if pruned is None or pruned is line:
        return None
    log.info("a message nests deeper than %d levels: its deepest values are left out", json_depth.MESSAGE_DEPTH)
    return pruned


class ServerPipes(asyncio.SubprocessProtocol):
    """The subprocess protocol of a stdio server: its stdout as lines, its stdin's flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.SubprocessTransport | None = None
        self.lines: collections.deque[bytes | None] = collections.deque()
        self._waiting_bytes = 0
        self._splitter = LineSplitter()
        self.stdout_ended = False
        self.stdin_broken = False
        self.discarding = False
        """Set once the transport is left: what the server still writes is dropped."""
        self._reader: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._reading_paused = False
        self.writes = CorkedWrites(self._write_stdin)

    # -- the event loop's callbacks ---------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != STDOUT or self.discarding:
            return
        for line in self._splitter.feed(data):
            if line is None or line.strip():
                self.lines.append(line)
                self._waiting_bytes += len(line) if line is not None else 0
        if self.lines:
            self._wake_reader()
            if self._waiting_bytes > READ_AHEAD_BYTES:
                self._pause_reading(True)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == STDOUT:
            self.stdout_ended = True
            self._wake_reader()
        elif fd == STDIN and not self.discarding:
            self.broken_stdin()  # the server closed it: not our own close at the end

    def pause_writing(self) -> None:
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        self._release_writers()

    # -- for the streams ---------------------------------------------------------------------

    def broken_stdin(self) -> None:
        """The server can no longer be written to: end the session rather than hang it."""
        self.stdin_broken = True
        self.stdout_ended = True
        self._wake_reader()
        self._release_writers()

    def take(self) -> bytes | None:
        line = self.lines.popleft()
        self._waiting_bytes -= len(line) if line is not None else 0
        if self._reading_paused and self._waiting_bytes <= READ_AHEAD_BYTES:
            self._pause_reading(False)
        return line

    async def next_line(self) -> None:
        """Until a line (or the end of stdout) is there for the reader."""
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_future()
        await self._reader

    async def drain(self) -> None:
        if self._drained is not None:
            await asyncio.shield(self._drained)

    def discard_output(self) -> None:
        """From now on stdout is read and dropped (a server flushing output can still exit)."""
        self.discarding = True
        self.lines.clear()
        self._waiting_bytes = 0
        self._pause_reading(False)
        self._wake_reader()

    def _write_stdin(self, data: bytes) -> None:
        pipe = self.stdin_pipe()
        if pipe is not None and not pipe.is_closing():
            pipe.write(data)

    def stdin_pipe(self) -> asyncio.WriteTransport | None:
        pipe = self.transport.get_pipe_transport(STDIN) if self.transport is not None else None
        return pipe if isinstance(pipe, asyncio.WriteTransport) else None

    def _wake_reader(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and not reader.done():
            reader.set_result(None)

    def _release_writers(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _pause_reading(self, pause: bool) -> None:
        pipe = self.transport.get_pipe_transport(STDOUT) if self.transport is not None else None
        if not isinstance(pipe, asyncio.ReadTransport) or pipe.is_closing():
            return
        if pause and not self._reading_paused:
            pipe.pause_reading()
        elif not pause and self._reading_paused:
            pipe.resume_reading()
        self._reading_paused = pause


class StdoutMessages:
    """The session's read stream (the SDK's `ReadStream`): one parsed message per line."""

    def __init__(self, pipes: ServerPipes) -> None:
        self._pipes = pipes
        self._closed = False

    async def receive(self) -> SessionMessage | Exception:
        import anyio

        pipes = self._pipes
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if pipes.lines:
                parsed: SessionMessage | Exception = parse_line(pipes.take())
                return parsed
            if pipes.stdout_ended or pipes.discarding:
                raise anyio.EndOfStream
            await pipes.next_line()

    def __aiter__(self) -> StdoutMessages:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        self._closed = True
        self._pipes.discard_output()

    async def __aenter__(self) -> StdoutMessages:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class StdinMessages:
    """The session's write stream (the SDK's `WriteStream`): a message is written at once."""

    def __init__(self, pipes: ServerPipes) -> None:
        self._pipes = pipes
        self._closed = False

    async def send(self, message: SessionMessage) -> None:
        import anyio

        if self._closed:
            raise anyio.ClosedResourceError
        pipe = self._pipes.stdin_pipe()
        if self._pipes.stdin_broken or pipe is None or pipe.is_closing():
            raise anyio.BrokenResourceError
        data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        self._pipes.writes.write(data)
        await self._pipes.drain()
        if self._pipes.stdin_broken:
            raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        self._closed = True

    async def __aenter__(self) -> StdinMessages:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
