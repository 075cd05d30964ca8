"""Where the per-user engine lives and who may reach it: its runtime directory, socket and start lock.

One engine serves every front of one user, one installation, one version and one config home.
Its socket sits in a private runtime directory (0700, owned by the user: `$XDG_RUNTIME_DIR/mcp-sidecar`,
else `<tmp>/mcp-sidecar-<uid>`), is itself 0600, and every connection's peer credentials are
checked (`SO_PEERCRED`: the same uid, else refused). The socket's name carries the version and a
hash of the installation and the config home, so another installation or another
`$MCP_SIDECAR_HOME` starts its own engine and never attaches to this one.

A front attaches with `connect_or_start`: it connects when an engine answers; else it takes the
start lock (`flock`, so two fronts racing start exactly one engine), looks again, removes a stale
socket (a file nobody listens on: the engine died without cleaning up) and starts one. Nothing
here starts a process itself; the caller passes how.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import socket
import stat
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import mcp_sidecar
from mcp_sidecar import fs
from mcp_sidecar.config import paths

RUNTIME_ENV = "XDG_RUNTIME_DIR"
DIR_NAME = "mcp-sidecar"
MAX_SOCKET_PATH = 100
"""`sun_path` holds 108 bytes on Linux (104 on macOS); a longer path falls back to the temp dir."""

_PEERCRED = struct.Struct("3i")


class EngineUnavailable(Exception):
    """The engine cannot be used here (an unsafe runtime directory, no Unix sockets, a start that failed).

    The front then runs in-process, as with `MCP_SIDECAR_ENGINE=off`, and logs this message.
    """


class PeerRefused(Exception):
    """A connection from another user (or one whose credentials cannot be read)."""


@dataclass(frozen=True)
class EnginePaths:
    directory: Path
    socket: Path
    lock: Path


KEY_ENVIRONMENT = ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND", "XDG_DATA_HOME")
"""What reaches the credential store: a front in another D-Bus session (another login, an SSH
shell) or with another keyring backend gets an engine of its own, never one that reads another
session's keyring."""


def installation_key(config_home: Path | None = None) -> str:
    """What an engine must share with a front to serve it: version, installation, interpreter, config
    and cache homes, and the environment the credential store depends on."""
    package = Path(mcp_sidecar.__file__).resolve().parent
    home = config_home if config_home is not None else paths.config_dir()
    parts = [mcp_sidecar.__version__, str(package), os.path.realpath(sys.executable), str(home), str(paths.cache_dir())]
    parts += [f"{name}={os.environ.get(name, '')}" for name in KEY_ENVIRONMENT]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def engine_paths(config_home: Path | None = None) -> EnginePaths:
    """The runtime directory (made private when missing, refused when unsafe), the socket and the lock."""
    directory = runtime_dir()
    name = f"engine-{mcp_sidecar.__version__}-{installation_key(config_home)}"
    sock = directory / f"{name}.sock"
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        directory = _private_dir(Path(tempfile.gettempdir()) / f"{DIR_NAME}-{os.getuid()}")
        sock = directory / f"{name}.sock"
    return EnginePaths(directory, sock, directory / f"{name}.lock")


def runtime_dir() -> Path:
    base = os.environ.get(RUNTIME_ENV)
    if base and Path(base).is_absolute() and Path(base).is_dir():
        return _private_dir(Path(base) / DIR_NAME)
    return _private_dir(Path(tempfile.gettempdir()) / f"{DIR_NAME}-{os.getuid()}")


def _private_dir(path: Path) -> Path:
    """`path` as a directory only this user can enter (`fs.private_directory`: made 0700, refused when a
    link, not a directory, or another user's)."""
    try:
        with fs.private_directory(path, create=True):
            return path
    except fs.UnsafeDirectory as exc:
        raise EngineUnavailable(f"The engine's runtime directory {exc.path} {exc.why}.") from None
    except OSError as exc:
        raise EngineUnavailable(f"The engine's runtime directory {path} cannot be made ({exc.strerror}).") from None


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket, from the kernel (`SO_PEERCRED`)."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    _pid, uid, _gid = _PEERCRED.unpack(raw)
    return int(uid)


def check_peer(conn: socket.socket) -> None:
    """Refuse a connection from any other uid; the engine closes it without reading a byte."""
    try:
        uid = peer_uid(conn)
    except OSError as exc:
        raise PeerRefused(f"The peer's credentials cannot be read ({exc.strerror}).") from None
    if uid != os.getuid():
        raise PeerRefused(f"A connection from uid {uid} was refused: the engine serves uid {os.getuid()} only.")


def listen(path: Path, backlog: int = 64) -> socket.socket:
    """Bind the engine's socket (0600 from the start) and listen; a stale file there is replaced, a live one is not."""
    if probe(path) == "live":
        raise EngineUnavailable(f"Another engine already listens on {path}.")
    remove_socket(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(os.fspath(path))
    except OSError:
        server.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    server.listen(backlog)
    return server


def probe(path: Path) -> str:
    """`"live"` when an engine accepts on `path`; `"stale"` when a socket file is there but nobody
    listens (an engine that died without cleaning up); else `"absent"`."""
    sock = _try_connect(path)
    if sock is not None:
        sock.close()
        return "live"
    try:
        return "stale" if stat.S_ISSOCK(os.lstat(path).st_mode) else "absent"
    except FileNotFoundError:
        return "absent"


def connect_or_start(engine: EnginePaths, start: Callable[[], None], timeout: float = 10.0) -> socket.socket:
    """A connected socket to this user's engine, starting one when none answers; exactly one start among racers."""
    sock = _try_connect(engine.socket)
    if sock is not None:
        return sock
    with start_lock(engine.lock):
        sock = _try_connect(engine.socket)
        if sock is not None:
            return sock
        if probe(engine.socket) == "stale":
            remove_socket(engine.socket)
        start()
        return _wait_connect(engine.socket, timeout)


@contextmanager
def start_lock(path: Path) -> Iterator[None]:
    """An exclusive `flock` on the lock file (0600), held while one front looks for and starts the engine."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _try_connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.fspath(path))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK):
            return None
        raise EngineUnavailable(f"The engine's socket {path} cannot be reached ({exc.strerror}).") from None
    return sock


def _wait_connect(path: Path, timeout: float) -> socket.socket:
    """Connect once the started engine listens; backs off from 5 ms to 50 ms, gives up after `timeout`."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        sock = _try_connect(path)
        if sock is not None:
            return sock
        if time.monotonic() >= deadline:
            raise EngineUnavailable(f"The engine did not start listening on {path} within {timeout:g} s.")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def remove_socket(path: Path) -> None:
    """Remove the socket file at `path` (never anything else)."""
    try:
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
