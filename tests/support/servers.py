"""Helpers for starting the fixture MCP servers in tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

TESTS_DIR: Path = Path(__file__).resolve().parent.parent
FIXTURES: Path = TESTS_DIR / "fixtures" / "servers"
SERVER_EVERYTHING_JS: Path = (
    TESTS_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)

APP_SERVERS: Path = TESTS_DIR / "node_modules" / "@modelcontextprotocol"
"""The official MCP Apps example servers (`server-basic-vanillajs`, `server-system-monitor`): each
`APP_SERVERS / name / "dist" / "index.js"`, run with `--stdio`."""

_POLL_INTERVAL = 0.05


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fixture_path(script: str) -> Path:
    """Absolute path of a fixture script in FIXTURES (e.g. "basic.py")."""
    return FIXTURES / script


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)


@contextmanager
def http_server(
    script: str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    port: int | None = None,
) -> Iterator[str]:
    """Run `python FIXTURES/script http --port P *args`; yield `http://127.0.0.1:P/mcp`.

    `env` entries are added to the current environment. Waits (polling a TCP connect,
    bounded by `timeout`) until the server listens; fails early if the process exits.
    The server's stderr is kept in a temporary file and included in the error on failure.
    """
    chosen = port if port is not None else free_port()
    argv = [sys.executable, str(fixture_path(script)), "http", "--port", str(chosen), *args]
    with _listening(argv, chosen, env, timeout, script):
        yield f"http://127.0.0.1:{chosen}/mcp"


@contextmanager
def server_everything_http(timeout: float = 60) -> Iterator[str]:
    """Run `PORT=P node SERVER_EVERYTHING_JS streamableHttp`; yield `http://127.0.0.1:P/mcp`.

    Needs the pinned package installed (`cd tests && npm ci`); readiness as for `http_server`.
    """
    chosen = free_port()
    argv = ["node", str(SERVER_EVERYTHING_JS), "streamableHttp"]
    with _listening(argv, chosen, {"PORT": str(chosen)}, timeout, "server-everything"):
        yield f"http://127.0.0.1:{chosen}/mcp"


@contextmanager
def _listening(argv: list[str], port: int, env: dict[str, str] | None, timeout: float, name: str) -> Iterator[None]:
    """Run `argv` until the context ends, after waiting (bounded) until it listens on `port`."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as stderr_file:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=devnull, stderr=stderr_file, env=full_env)
        try:
            deadline = time.monotonic() + timeout
            while not _port_open(port):
                code = proc.poll()
                if code is not None:
                    raise RuntimeError(
                        f"{name} exited with code {code} before listening on port {port}: {_read_tail(stderr_file)}"
                    )
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{name} did not listen on 127.0.0.1:{port} within {timeout}s: {_read_tail(stderr_file)}"
                    )
                time.sleep(_POLL_INTERVAL)
            yield
        finally:
            _stop(proc)


def _read_tail(handle: IO[bytes], limit: int = 4000) -> str:
    handle.flush()
    handle.seek(0)
    data = handle.read()
    return data[-limit:].decode("utf-8", "replace")


def server_everything_js() -> Path | None:
    """Path of the pinned @modelcontextprotocol/server-everything entry point, if installed.

    Run it as `node <path> stdio` (default) or `node <path> streamableHttp`.
    Install with `cd tests && npm ci`.
    """
    return SERVER_EVERYTHING_JS if SERVER_EVERYTHING_JS.is_file() else None


def basic_stdio(*args: str, **options: object) -> dict[str, object]:
    """A config entry running `basic.py stdio *args`; `options` are extra definition fields."""
    return {"command": sys.executable, "args": [str(fixture_path("basic.py")), "stdio", *args], **options}


def fixture_stdio(script: str, *args: str, **options: object) -> dict[str, object]:
    """A config entry running `python FIXTURES/script *args` over stdio."""
    return {"command": sys.executable, "args": [str(fixture_path(script)), *args], **options}


def started_pids(counter_file: Path) -> list[int]:
    """The pids a `--counter-file` fixture recorded, one per start (empty if it never started)."""
    if not counter_file.exists():
        return []
    return [int(line) for line in counter_file.read_text(encoding="utf-8").split()]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers signal 0; only a reaped or running process is conclusive here,
    # so check /proc where it exists.
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text(encoding="utf-8")
    except OSError:
        return not status.parent.parent.exists()


def peak_listing(lines: list[str]) -> tuple[int, int]:
    """From a --concurrency-file log: (servers that listed, the most that were between their
    start and their last list at once)."""
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    for line in lines:
        event, pid, when, *_ = line.split()
        if event == "start":
            starts[pid] = float(when)
        elif event == "listed":
            ends[pid] = max(ends.get(pid, 0.0), float(when))
    # At equal times an end comes first: a server that finished is not concurrent with the next.
    events = sorted([(starts[p], 1) for p in ends] + [(t, -1) for t in ends.values()])
    peak = current = 0
    for _, delta in events:
        current += delta
        peak = max(peak, current)
    return len(ends), peak
