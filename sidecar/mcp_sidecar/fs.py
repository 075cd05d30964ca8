"""File writes that never leave half a file behind, and private directories checked on every use."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any


def atomic_write(path: Path, text: str | bytes, mode: int = 0o600) -> None:
    """Replace `path` with `text` (UTF-8) or bytes: a temporary file in the same directory, fsync, rename.

    A crash at any point leaves either the old file or the new one. `mode` applies to the
    new file (callers that keep an existing file's permissions pass them in).
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        handle: IO[Any] = os.fdopen(fd, "w", encoding="utf-8") if isinstance(text, str) else os.fdopen(fd, "wb")
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# -- private directories ----------------------------------------------------------------------

PRIVATE_DIR_MODE = 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class UnsafeDirectory(Exception):
    """A private directory (spill files, catalog cache) that is not safe to use: a symbolic
    link, not a directory, or owned by another user. Nothing in it is read, written or removed."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path} {why}")
        self.path = path
        self.why = why


@contextlib.contextmanager
def private_directory(path: Path, *, create: bool) -> Iterator[int | None]:
    """An open descriptor of `path`, checked to be a real directory owned by this user and made
    0700; None when it does not exist and `create` is false.

    Every use opens the directory anew without following a symbolic link and checks what was
    opened, so callers work inside it through the descriptor (`dir_fd`), never through a path
    that could be swapped for a link after the check. Its parents are the user's own choice
    (a home directory on a symlink is common) and are followed.
    """
    if not (_NOFOLLOW and _DIRECTORY and hasattr(os, "getuid")):
        raise UnsafeDirectory(path, "cannot be checked on this platform")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, PRIVATE_DIR_MODE)  # what exists already is checked below
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
    except FileNotFoundError:
        if create:
            raise
        yield None
        return
    except OSError as exc:
        if os.path.islink(path):
            raise UnsafeDirectory(path, "is a symbolic link") from None
        if exc.errno == errno.ENOTDIR:
            raise UnsafeDirectory(path, "is not a directory") from None
        raise
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid():
            raise UnsafeDirectory(path, "is owned by another user")
        if stat.S_IMODE(info.st_mode) != PRIVATE_DIR_MODE:
            os.fchmod(fd, PRIVATE_DIR_MODE)  # ours, from a looser umask
        yield fd
    finally:
        os.close(fd)


def create_private_file(dir_fd: int, name: str, mode: int = 0o600) -> int:
    """A new file in a checked directory: created exclusively, never through a link."""
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode, dir_fd=dir_fd)


def write_new_file(dir_fd: int, name: str, write: Callable[[IO[bytes]], object], mode: int = 0o600) -> int:
    """Create `name` in a checked directory and fill it with `write`; return its size.

    A write that fails part of the way (a full disk, the file size limit) removes the
    partial file: half a result must not stay behind looking like a whole one.
    """
    fd = create_private_file(dir_fd, name, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            return os.fstat(handle.fileno()).st_size
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise


def atomic_write_at(dir_fd: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """`atomic_write` inside a checked directory: a temporary file, fsync, rename, all by `dir_fd`."""
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = create_private_file(dir_fd, tmp, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(ValueError):
    """What is there is no regular file (a FIFO, a device, a directory), or not this user's."""


def open_regular(path: str | Path, *, dir_fd: int | None = None, own: bool = True, follow: bool = False) -> int:
    """A descriptor of `path` open for reading, checked to be a regular file (and, with `own`, this user's).

    The open never waits: a FIFO put in a file's place would block a plain open until someone
    writes to it (a hung discovery, an editor sidecar that stops answering), so it is opened
    non-blocking and refused once `fstat` shows what it is. Without `follow`, a symbolic link is
    refused too (`OSError`). Every file the sidecar reads from its cache goes through here.
    """
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile("not a regular file")
        if own and hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise NotRegularFile("not this user's file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(
    path: str | Path, limit: int, *, dir_fd: int | None = None, own: bool = True, follow: bool = False
) -> bytes:
    """`open_regular`, then at most `limit` bytes (a larger file raises ValueError)."""
    fd = open_regular(path, dir_fd=dir_fd, own=own, follow=follow)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError("larger than the limit")
    return data


def read_private_file(dir_fd: int, name: str, limit: int) -> bytes:
    """A regular file of this user's in a checked directory, at most `limit` bytes (else ValueError)."""
    return read_regular(name, limit, dir_fd=dir_fd)


def unlink_own_file(dir_fd: int, name: str) -> None:
    """Remove `name` in a checked directory when it is a regular file of this user's (never a link,
    another user's file or a directory); absent is fine."""
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
            os.unlink(name, dir_fd=dir_fd)


def remove_private_file(directory: Path, name: str) -> None:
    """Remove `name` from a private directory (`unlink_own_file`); a missing directory is fine."""
    with private_directory(directory, create=False) as dir_fd:
        if dir_fd is not None:
            unlink_own_file(dir_fd, name)
