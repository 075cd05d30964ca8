"""Logging for the sidecar itself: stderr and an optional file, never stdout.

Records from other libraries (pygls, the SDK, httpx) keep their message template but lose
their arguments and exception text, which can carry message bodies, server output or
credentials.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-.]{16,}")


class ForeignRecordScrubber(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("mcp_sidecar"):
            if record.levelno < logging.WARNING:
                return False  # their INFO and DEBUG text can embed bodies and session ids
            if record.args:
                record.msg = f"{record.msg} [arguments withheld]"
            elif isinstance(record.msg, str):
                # A pre-formatted message may embed anything: keep its start, mask long tokens.
                record.msg = _LONG_TOKEN.sub("***", record.msg[:200])
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        return True


def setup(verbosity: int, log_file: str | None) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if log_file else level)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    stderr = logging.StreamHandler()
    stderr.setLevel(level)
    handlers: list[logging.Handler] = [stderr]
    if log_file:
        Path(log_file).expanduser().parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(Path(log_file).expanduser(), encoding="utf-8")
        file_handler.setLevel(min(level, logging.INFO))
        handlers.append(file_handler)
    for handler in handlers:
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.addFilter(ForeignRecordScrubber())
        root.addHandler(handler)
    # pygls logs whole message bodies at INFO and DEBUG.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("mcp").setLevel(logging.WARNING)
