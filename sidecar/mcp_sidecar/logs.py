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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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
    level = level_of(verbosity)
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


# -- one log per client, in a process that serves several (the engine) ---------------------------

_CLIENT: ContextVar[ClientLog | None] = ContextVar("mcp_sidecar_client_log", default=None)
_OPEN: set[ClientLog] = set()


def level_of(verbosity: int) -> int:
    return logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG


class ClientLog:
    """One client's log where a process serves many: what its own process would have logged, at its
    `-v` level, to its own `--log-file` and to its own stderr (`stream`, sent on to its front), made of
    the records made while serving it (the context its tasks and threads inherit, `serving`)."""

    def __init__(self, verbosity: int, log_file: Path | None, stream: Callable[[str], None]) -> None:
        level = level_of(verbosity)
        stderr = _TextHandler(stream)
        stderr.setLevel(level)
        self.handlers: list[logging.Handler] = [stderr]
        self.refused: str | None = None
        if log_file is not None:
            try:
                log_file.parent.mkdir(parents=True, exist_ok=True)
                file_handler = PrivateFileHandler(log_file, encoding="utf-8")
            except OSError as exc:
                self.refused = str(exc)
            else:
                file_handler.setLevel(min(level, logging.INFO))
                self.handlers.append(file_handler)
        for handler in self.handlers:
            handler.setFormatter(logging.Formatter(FORMAT))
            handler.addFilter(ForeignRecordScrubber())
        self.level = min(handler.level for handler in self.handlers)

    def handle(self, record: logging.LogRecord) -> None:
        for handler in self.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Records made in this block, and in the tasks and threads started from it, are this client's."""
        _OPEN.add(self)
        _refresh_root_level()
        token = _CLIENT.set(self)
        try:
            if self.refused is not None:
                logging.getLogger(__name__).warning("not logging to the file: %s; logging to stderr only", self.refused)
            yield
        finally:
            _CLIENT.reset(token)
            _OPEN.discard(self)
            for handler in self.handlers:
                handler.close()
            _refresh_root_level()


class _TextHandler(logging.Handler):
    """Formatted records to a function (a front's stderr, over the engine's socket)."""

    def __init__(self, send: Callable[[str], None]) -> None:
        super().__init__()
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._send(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


class _ClientRouter(logging.Handler):
    """On the root logger of a process serving several clients: each record to the client it was made for."""

    def emit(self, record: logging.LogRecord) -> None:
        client = _CLIENT.get()
        if client is not None and client in _OPEN:
            client.handle(record)


_own_level = logging.WARNING


def route_clients() -> None:
    """Give each client served from here its own log (`ClientLog.serving`), besides this process's own."""
    global _own_level
    root = logging.getLogger()
    _own_level = root.level
    root.addHandler(_ClientRouter())


def _refresh_root_level() -> None:
    """The root logger lets through what this process or any client's log wants, and no more."""
    logging.getLogger().setLevel(min([_own_level, *(client.level for client in _OPEN)]))
