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
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

import mcp_sidecar

# A front imports this module: the standard library's cheap parts only (no pathlib, hashlib,
# tempfile, logging or platformdirs; `tests/unit/engine/test_front.py` keeps it so).
StrPath = str | os.PathLike[str]

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


class EnginePaths(NamedTuple):
    directory: str
    socket: str
    lock: str


KEY_ENVIRONMENT = (
    "MCP_SIDECAR_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "HOME",
    "DBUS_SESSION_BUS_ADDRESS",
    "PYTHON_KEYRING_BACKEND",
    "XDG_DATA_HOME",
)
"""What decides the config and cache homes (`config/paths.py` reads these, through platformdirs)
and the credential store: a front with another `$MCP_SIDECAR_HOME`, in another D-Bus session
(another login, an SSH shell) or with another keyring backend gets an engine of its own, never one
that reads another home's files or another session's keyring."""


def installation_key(config_home: StrPath | None = None) -> str:
    """What an engine must share with a front to serve it: version, installation, interpreter, and the
    environment its homes and credential store depend on (`config_home` replaces `$MCP_SIDECAR_HOME`)."""
    import zlib

    package = os.path.dirname(os.path.realpath(mcp_sidecar.__file__))
    parts = [mcp_sidecar.__version__, package, os.path.realpath(sys.executable)]
    environ = dict(os.environ)
    if config_home is not None:
        environ["MCP_SIDECAR_HOME"] = os.fspath(config_home)
    parts += [f"{name}={environ.get(name, '')}" for name in KEY_ENVIRONMENT]
    text = "\0".join(parts).encode()
    # Two CRCs over the text and its reverse: 64 bits, enough to tell a user's installations apart,
    # without loading OpenSSL (hashlib) in every front.
    return f"{zlib.crc32(text):08x}{zlib.crc32(text[::-1]):08x}"


def engine_paths(config_home: StrPath | None = None) -> EnginePaths:
    """The runtime directory (made private when missing, refused when unsafe), the socket and the lock."""
    directory = runtime_dir()
    name = f"engine-{mcp_sidecar.__version__}-{installation_key(config_home)}"
    sock = os.path.join(directory, f"{name}.sock")
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        directory = _private_dir(_temp_dir())
        sock = os.path.join(directory, f"{name}.sock")
    return EnginePaths(directory, sock, os.path.join(directory, f"{name}.lock"))


def runtime_dir() -> str:
    base = os.environ.get(RUNTIME_ENV)
    if base and os.path.isabs(base) and os.path.isdir(base):
        return _private_dir(os.path.join(base, DIR_NAME))
    return _private_dir(_temp_dir())


def _temp_dir() -> str:
    base = os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base if os.path.isabs(base) else "/tmp", f"{DIR_NAME}-{os.getuid()}")


def _private_dir(path: str) -> str:
    """`path` as a directory only this user can enter: made 0700 when missing; refused when a link,
    not a directory, or another user's (checked on the opened directory, as `fs.private_directory`)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise EngineUnavailable(f"The engine's runtime directory {path} cannot be made ({exc.strerror}).") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        why = "is a symbolic link" if os.path.islink(path) else f"cannot be opened ({exc.strerror})"
        raise EngineUnavailable(f"The engine's runtime directory {path} {why}.") from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid():
            raise EngineUnavailable(f"The engine's runtime directory {path} is owned by another user.")
        if stat.S_IMODE(info.st_mode) != 0o700:
            os.fchmod(fd, 0o700)  # ours, from a looser umask
    finally:
        os.close(fd)
    return path


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket, from the kernel (`SO_PEERCRED`)."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    _pid, uid, _gid = _PEERCRED.unpack(raw)
    return int(uid)


def check_peer(conn: socket.socket) -> None:
    """Refuse a connection from any other uid; the engine closes it without reading a byte."""
    try:
        uid = peer_uid(conn)
    except (OSError, AttributeError) as exc:  # AttributeError: no SO_PEERCRED on this platform
        raise PeerRefused(f"The peer's credentials cannot be read ({type(exc).__name__}).") from None
    if uid != os.getuid():
        raise PeerRefused(f"A connection from uid {uid} was refused: the engine serves uid {os.getuid()} only.")


def listen(path: StrPath, backlog: int = 64) -> socket.socket:
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


def probe(path: StrPath) -> str:
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


def connect_or_start(engine: EnginePaths, start: Callable[[], object], timeout: float = 60.0) -> socket.socket:
    """A connected socket to this user's engine, starting one when none answers; exactly one start among racers.

    `start` may return the started process (anything with `poll()`): one that ends before it listens
    is given up on at once; otherwise the wait is `timeout` (a loaded machine's start-up is slow)."""
    sock = _try_connect(engine.socket)
    if sock is not None:
        return sock
    with start_lock(engine.lock):
        sock = _try_connect(engine.socket)
        if sock is not None:
            return sock
        if probe(engine.socket) == "stale":
            remove_socket(engine.socket)
        started = start()
        return _wait_connect(engine.socket, timeout, getattr(started, "poll", None))


@contextmanager
def start_lock(path: StrPath) -> Iterator[None]:
    """An exclusive `flock` on the lock file (0600, never through a link), held while one front looks for
    and starts the engine."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _try_connect(path: StrPath) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.fspath(path))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK):
            return None
        raise EngineUnavailable(f"The engine's socket {path} cannot be reached ({exc.strerror}).") from None
    return sock


def _wait_connect(path: StrPath, timeout: float, ended: Callable[[], object] | None = None) -> socket.socket:
    """Connect once the started engine listens; backs off from 5 ms to 50 ms, gives up after `timeout`
    or as soon as the started process ended (`ended()` not None) without listening."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        sock = _try_connect(path)
        if sock is not None:
            return sock
        if ended is not None and ended() is not None:
            sock = _try_connect(path)  # it may have listened just before it ended
            if sock is not None:
                return sock
            raise EngineUnavailable(f"The engine ended before it listened on {path} (its log says why).")
        if time.monotonic() >= deadline:
            raise EngineUnavailable(f"The engine did not start listening on {path} within {timeout:g} s.")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def remove_socket(path: StrPath) -> None:
    """Remove the socket file at `path` (never anything else)."""
    try:
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
