"""Logging for the sidecar itself: stderr and an optional file, never stdout.

Records from other libraries (pygls, the SDK, httpx) keep their message template but lose
their arguments and exception text, which can carry message bodies, server output or
credentials.

The log file is private: created 0600 (an existing one of ours is made 0600), never opened
through a symbolic link, and refused when it is not a regular file of this user's, since a
file another user prepared (in a shared directory such as /tmp) would let them read the log
or have it appended to a file of their choosing. A refused file leaves logging on stderr.
"""

from __future__ import annotations

import io
import logging
import os
import re
import stat
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-.]{16,}")


class ForeignRecordScrubber(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("mcp_sidecar"):
            if record.levelno < logging.WARNING:
                return False  # their INFO and DEBUG text can embed bodies and session ids
            if record.args:
                record.msg = _withheld(record.msg, record.args)
            elif isinstance(record.msg, str):
                # A pre-formatted message may embed anything: keep its start, mask long tokens.
                record.msg = _LONG_TOKEN.sub("***", record.msg[:200])
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        return True


class _Withheld:
    """An argument that was not logged: `%s` and `%r` both print `<withheld>`."""

    def __repr__(self) -> str:
        return "<withheld>"

    __str__ = __repr__


def _withheld(template: object, args: object) -> str:
    """The template with each argument shown as `<withheld>`, so a log line never prints a bare `%r`."""
    try:
        return str(template) % ((_Withheld(),) * len(args) if isinstance(args, tuple) else _Withheld())
    except (TypeError, ValueError, KeyError):
        return f"{template} [arguments withheld]"


FILE_MODE = 0o600


class UnsafeLogFile(OSError):
    """The log file path is a link, not a regular file, or another user's file."""


class PrivateFileHandler(logging.FileHandler):
    """A FileHandler whose file is created 0600 and checked before every (re)open."""

    def _open(self) -> io.TextIOWrapper:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(self.baseFilename, flags, FILE_MODE)
        except OSError:
            if os.path.islink(self.baseFilename):
                raise UnsafeLogFile(f"{self.baseFilename} is a symbolic link") from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise UnsafeLogFile(f"{self.baseFilename} is not a regular file")
            if hasattr(os, "getuid") and info.st_uid != os.getuid():
                raise UnsafeLogFile(f"{self.baseFilename} is owned by another user")
            if info.st_nlink > 1:
                # A hard link to another of the user's files (O_NOFOLLOW does not see one).
                raise UnsafeLogFile(f"{self.baseFilename} has other hard links")
            os.set_blocking(fd, True)
            if stat.S_IMODE(info.st_mode) != FILE_MODE:
                os.fchmod(fd, FILE_MODE)  # ours, from a looser umask or an older sidecar
        except BaseException:
            os.close(fd)
            raise
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def setup(verbosity: int, log_file: str | None) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if log_file else level)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    stderr = logging.StreamHandler()
    stderr.setLevel(level)
    handlers: list[logging.Handler] = [stderr]
    refused: str | None = None
    if log_file:
        Path(log_file).expanduser().parent.mkdir(parents=True, exist_ok=True)
        try:
            file_handler = PrivateFileHandler(Path(log_file).expanduser(), encoding="utf-8")
        except UnsafeLogFile as exc:
            refused = str(exc)
        else:
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
    if refused is not None:
        logging.getLogger(__name__).warning("not logging to the file: %s; logging to stderr only", refused)
