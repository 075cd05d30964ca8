"""A bounded, redacted log of one server's stderr, read from a pipe without blocking.

Secret values are replaced before a line is cut to MAX_LINE_CHARS, never after: cutting
first would keep the start of a secret that straddles the cut (its end, which the
replacement looks for, having been cut away). A line longer than the log keeps is held only
as far as redaction needs (MAX_LINE_CHARS plus the longest secret); the rest of it, up to its
newline, is dropped as it arrives, so an endless line costs no memory and its continuation
never shows up as lines of its own.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from mcp_sidecar.output.redact import LOG_MIN_CHARS, Redactor
from mcp_sidecar.output.sanitize import strip_controls

MAX_LINES = 500
MAX_LINE_CHARS = 2_000
CUT_MARK = " …"
"""Appended to a line that was cut."""


@dataclass(frozen=True, slots=True)
class LogLine:
    time: float
    text: str


def redact_and_cut(text: str, secrets: Redactor, limit: int, complete: bool = True) -> str:
    """`text` with every occurrence of every secret replaced, then cut to `limit` characters.

    `complete` is False when `text` is only the start of a longer line: a secret may then
    begin near its end and go on past it, so the last (longest secret - 1) characters are
    not shown (they could be the start of a secret) and the result is marked as cut.
    """
    visible = len(text) if complete else max(0, len(text) - max(0, secrets.longest - 1))
    out, _ = secrets.replaced(text, visible) if secrets.found_in(text) else (text[:visible], 0)
    if len(out) > limit:
        return out[:limit] + CUT_MARK
    return out if complete else out + CUT_MARK


def _clean(line: str) -> str:
    """Terminal sequences go before redaction, so a secret a server split with one is still found."""
    return strip_controls(line)


class StderrLog:
    """Keeps the last MAX_LINES lines; secret values are replaced before a line is cut and stored."""

    def __init__(self) -> None:
        self.lines: deque[LogLine] = deque(maxlen=MAX_LINES)
        self.dropped = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []
        self._partial_chars = 0
        self._overflowed = False
        """The current line was already stored cut; the rest of it is dropped up to its newline."""
        self._secrets = Redactor(LOG_MIN_CHARS)
        self._held = MAX_LINE_CHARS

    def set_secrets(self, secrets: Iterable[str]) -> None:
        """The values of a new connection attempt (the previous attempt's are forgotten)."""
        self._secrets.replace(secrets)
        self._held_for_secrets()

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Values learnt during the attempt (OAuth tokens, refreshed ones too)."""
        self._secrets.add(secrets)
        self._held_for_secrets()

    def _held_for_secrets(self) -> None:
        # Enough of a long line to find every secret that starts before the cut.
        self._held = MAX_LINE_CHARS + self._secrets.longest

    def redact(self, text: str) -> str:
        return self._secrets.text(text)[0]

    def feed(self, data: bytes) -> None:
        # An incremental decoder: a character split between two reads is not turned into
        # replacement characters (which would also hide a secret holding it from redaction).
        self._take(self._decoder.decode(data))

    def _take(self, text: str) -> None:
        *complete, rest = text.split("\n")
        for piece in complete:
            if self._overflowed:
                self._overflowed = False  # the end of the line already stored cut
            else:
                # Whole (at most the held part and one read): redacted whole, then cut.
                self._partial.append(piece)
                self.add("".join(self._partial))
            self._partial, self._partial_chars = [], 0
        if rest and not self._overflowed:
            self._partial.append(rest)
            self._partial_chars += len(rest)
            if self._partial_chars > self._held:
                # No end in sight: keep the start, redacted as far as it can be, drop the rest.
                start = "".join(self._partial)[: self._held]
                self._store(redact_and_cut(_clean(start), self._secrets, MAX_LINE_CHARS, complete=False))
                self._partial, self._partial_chars = [], 0
                self._overflowed = True

    def add(self, line: str) -> None:
        """Store one complete line: redacted whole, then cut to MAX_LINE_CHARS."""
        self._store(redact_and_cut(_clean(line.rstrip("\r")), self._secrets, MAX_LINE_CHARS))

    def _store(self, text: str) -> None:
        if len(self.lines) == self.lines.maxlen:
            self.dropped += 1
        self.lines.append(LogLine(time.time(), text))

    def flush(self) -> None:
        self._take(self._decoder.decode(b"", final=True))
        if self._partial and not self._overflowed:
            self.add("".join(self._partial))
        self._partial, self._partial_chars, self._overflowed = [], 0, False


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
