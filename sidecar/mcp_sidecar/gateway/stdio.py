"""The gateway's stdio transport: the host's pipes, read and written on the event loop, no SDK.

The SDK's `stdio_server` goes through anyio's file wrapper, so every line it reads, every write
and every flush is a hand-off to a worker thread and back: three per request and answer, a fifth
of the gateway's CPU per call in `benchmarks/gateway.py` (a third when calls overlap). Here
stdin is an asyncio pipe reader and stdout an asyncio pipe writer: one JSON-RPC message per
line, UTF-8; and, while serving, fd 0 reads the null device and fd 1 writes to stderr, so a
stray print or a descriptor a child inherits never reaches the host's stream. Both are restored
on the way out. Nothing here needs the SDK: the start-up front (`front.py`) reads and answers
on these pipes before `import mcp` has finished; `eras.py` turns lines into the SDK's messages
once it has.

Pipes and sockets on POSIX only (`usable`), which is how hosts start a stdio server; anything
else (a terminal, a file as stdin, Windows) is served by the SDK's `stdio_server`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message taken from the host (as from a stdio server); a longer line is dropped."""
EOF_DRAIN_S = 60.0
"""After the end of input, how long the requests already read may take to be answered."""


def usable() -> bool:
    """fd 0 and fd 1 are pipes or sockets, on POSIX."""
    if sys.platform == "win32":
        return False
    try:
        modes = [os.fstat(fd).st_mode for fd in (0, 1)]
    except OSError:
        return False
    return all(stat.S_ISFIFO(m) or stat.S_ISSOCK(m) for m in modes)


@contextlib.contextmanager
def _claimed() -> Iterator[tuple[int, int]]:
    """Private duplicates of fd 0 and 1 (the host's stream); meanwhile 0 reads /dev/null and 1 writes to stderr."""
    import fcntl

    if sys.stdout is not None:
        sys.stdout.flush()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        _divert(0, os.open(os.devnull, os.O_RDONLY))
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr: the null device, as the SDK does
            _divert(1, os.open(os.devnull, os.O_WRONLY))
        yield wire_in, wire_out
    finally:
        for wire, fd in ((wire_in, 0), (wire_out, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)
                os.dup2(wire, fd)
            os.close(wire)


def _divert(fd: int, to: int) -> None:
    try:
        os.dup2(to, fd)
    finally:
        os.close(to)


@dataclass
class HostPipes:
    """The host's stdin as a reader of lines and its stdout as a writer of messages."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def write(self, data: bytes) -> None:
        """One message (its JSON without the newline); a host that went away is not written to."""
        with contextlib.suppress(ConnectionError):
            self.writer.write(data + b"\n")
            await self.writer.drain()

    async def write_json(self, message: dict[str, Any]) -> None:
        await self.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode())


@contextlib.asynccontextmanager
async def host_pipes() -> AsyncIterator[HostPipes]:
    """The host's pipes, on the event loop; fd 0 and 1 are diverted meanwhile (`_claimed`)."""
    loop = asyncio.get_running_loop()
    with _claimed() as (wire_in, wire_out):
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_pipe, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0, closefd=False)
        )
        write_pipe, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0, closefd=False)
        )
        try:
            yield HostPipes(reader, asyncio.StreamWriter(write_pipe, protocol, None, loop))
        finally:
            write_pipe.close()
            read_pipe.close()


class Unanswered:
    """The host's requests read and not answered yet, so that the end of input does not cancel them.

    The SDK's session cancels what is in flight when its input ends; a host (or a script) that
    writes its requests and closes stdin still gets their answers, up to EOF_DRAIN_S, as from the
    editor entry point. `subscriptions/listen` is left out (it is answered only when it ends), and so is
    a request the host cancelled.
    """

    def __init__(self) -> None:
        self._ids: set[Any] = set()
        self._none = asyncio.Event()
        self._none.set()

    def read(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if "id" in message and isinstance(method, str) and method != "subscriptions/listen":
            self._ids.add(_key(message["id"]))
            self._none.clear()
        elif method == "notifications/cancelled" and isinstance(message.get("params"), dict):
            self.written(message["params"].get("requestId"))  # a cancelled request is never answered

    def written(self, request_id: Any) -> None:
        self._ids.discard(_key(request_id))
        if not self._ids:
            self._none.set()

    def __bool__(self) -> bool:
        return bool(self._ids)

    async def answered(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._none.wait(), EOF_DRAIN_S)


def _key(request_id: Any) -> Any:
    """An id as a set member: JSON-RPC ids are strings or numbers; anything else is kept by its text."""
    return request_id if isinstance(request_id, str | int | float) else repr(request_id)


async def next_line(reader: asyncio.StreamReader) -> bytes | Exception | None:
    """The next line (the last may lack its newline); None at the end; a ValueError for a dropped line."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial or None
    except asyncio.LimitOverrunError:
        while True:  # drop the rest of the line: it is never held whole
            try:
                await reader.readuntil(b"\n")
                break
            except asyncio.LimitOverrunError as more:
                await reader.readexactly(more.consumed)
            except asyncio.IncompleteReadError:
                break
        return ValueError(f"a line of more than {MAX_LINE_BYTES} bytes on stdin was dropped")
