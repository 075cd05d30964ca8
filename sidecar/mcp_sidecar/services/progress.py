"""A tool call's progress as LSP work-done progress (`$/progress` on the request's `workDoneToken`).

The server's progress notifications become `report`s: a percentage when it gave a total (never
going back, as LSP wants), its message sanitised on one line. A server may send thousands: at
most one report per REPORT_EVERY_S reaches the editor (the others are dropped, except the one
reaching 100 %).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.services.notifier import Notify

if TYPE_CHECKING:
    from mcp_sidecar.connections.content_requests import ProgressSink

PROGRESS = "$/progress"
REPORT_EVERY_S = 0.1
MESSAGE_CHARS = 200


class WorkDone:
    def __init__(self, notify: Notify, token: int | str, title: str) -> None:
        self._notify = notify
        self._token = token
        self._title = one_line(title)[:MESSAGE_CHARS]
        self._percentage = 0
        self._last = 0.0
        self._ended = False

    def _send(self, value: dict[str, Any]) -> None:
        self._notify(PROGRESS, {"token": self._token, "value": value})

    def begin(self) -> None:
        self._send({"kind": "begin", "title": self._title, "cancellable": True})

    def report(self, progress: float | None, total: float | None, message: str | None) -> None:
        """One progress notification of the server (progress None: a status message alone)."""
        if self._ended:
            return
        value: dict[str, Any] = {"kind": "report"}
        before = self._percentage
        if progress is not None and total and math.isfinite(progress / total):
            self._percentage = max(self._percentage, min(100, int(progress / total * 100)))
            value["percentage"] = self._percentage
        if message:
            value["message"] = one_line(message)[:MESSAGE_CHARS]
        now = time.monotonic()
        reached_the_end = self._percentage == 100 and before < 100
        if now - self._last < REPORT_EVERY_S and not reached_the_end:
            return
        self._last = now
        self._send(value)

    def end(self) -> None:
        if not self._ended:
            self._ended = True
            self._send({"kind": "end"})


@contextmanager
def work_done(notify: Notify, token: int | str | None, title: str) -> Iterator[ProgressSink | None]:
    """`begin` now, `end` however the block ends; the sink reports. No token: no sink, nothing sent."""
    if token is None:
        yield None
        return
    work = WorkDone(notify, token, title)
    work.begin()
    try:
        yield work.report
    finally:
        work.end()
