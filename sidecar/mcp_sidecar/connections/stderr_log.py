"""A bounded, redacted log of one server's stderr, read from a pipe without blocking."""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import IO

MAX_LINES = 500
MAX_LINE_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class LogLine:
    time: float
    text: str


class StderrLog:
    """Keeps the last MAX_LINES lines; secret values are replaced before a line is stored."""

    def __init__(self) -> None:
        self.lines: deque[LogLine] = deque(maxlen=MAX_LINES)
        self.dropped = 0
        self._partial = ""
        self._secrets: tuple[str, ...] = ()

    def set_secrets(self, secrets: frozenset[str]) -> None:
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = tuple(sorted(secrets, key=len, reverse=True))

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, "***")
        return text

    def feed(self, data: bytes) -> None:
        text = self._partial + data.decode("utf-8", errors="replace")
        *complete, self._partial = text.split("\n")
        if len(self._partial) > MAX_LINE_CHARS:
            complete.append(self._partial)
            self._partial = ""
        for line in complete:
            self.add(line)

    def add(self, line: str) -> None:
        line = line.rstrip("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " …"
        if len(self.lines) == self.lines.maxlen:
            self.dropped += 1
        self.lines.append(LogLine(time.time(), self.redact(line)))

    def flush(self) -> None:
        if self._partial:
            self.add(self._partial)
            self._partial = ""


class _PipeProtocol(asyncio.Protocol):
    def __init__(self, log: StderrLog) -> None:
        self.log = log

    def data_received(self, data: bytes) -> None:
        self.log.feed(data)

    def eof_received(self) -> bool | None:
        self.log.flush()
        return None


class StderrPipe:
    """A pipe whose write end becomes the server's stderr and whose read end feeds a StderrLog."""

    def __init__(self, log: StderrLog) -> None:
        self._log = log
        read_fd, write_fd = os.pipe()
        self.writer: IO[str] = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "rb", buffering=0)
        self._transport: asyncio.ReadTransport | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(lambda: _PipeProtocol(self._log), self._reader)
        self._transport = transport

    def close_writer(self) -> None:
        """Drop our copy of the write end once the child has its own, so EOF can arrive."""
        if not self.writer.closed:
            self.writer.close()

    def close(self) -> None:
        self.close_writer()
        if self._transport is not None:
            self._transport.close()
        elif not self._reader.closed:
            self._reader.close()
