"""Writes made during one turn of the event loop go out in as few system calls as possible.

The first write of a turn goes out at once (a lone answer waits for nothing); the ones after it
in the same turn are kept and written together when the turn ends. With 50 calls in flight,
their 50 requests to a server, or 50 answers to the editor, cost one or two `write()` calls and
one wake-up of the process reading them, instead of 50 of each: on two cores, those wake-ups
were most of a call's time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


class CorkedWrites:
    """Coalesces the writes of one event-loop turn in front of `write` (which must take any size)."""

    def __init__(self, write: Callable[[bytes], None], on_error: Callable[[OSError], None] | None = None) -> None:
        self._write = write
        self._on_error = on_error
        self._pending: list[bytes] = []
        self._corked = False

    def write(self, data: bytes) -> None:
        if self._corked:
            self._pending.append(data)
            return
        try:
            asyncio.get_running_loop().call_soon(self._uncork)
        except RuntimeError:  # no event loop running: nothing to wait for
            self._send(data)
            return
        self._corked = True
        self._send(data)

    def flush(self) -> None:
        """Write what is kept now (before the process exits)."""
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._send(data)

    def _uncork(self) -> None:
        self._corked = False
        self.flush()

    def _send(self, data: bytes) -> None:
        try:
            self._write(data)
        except OSError as exc:
            if self._on_error is None:
                raise
            self._on_error(exc)
