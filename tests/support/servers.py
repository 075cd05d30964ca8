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
    timeout: float = 20,
    port: int | None = None,
) -> Iterator[str]:
    """Run `python FIXTURES/script http --port P *args`; yield `http://127.0.0.1:P/mcp`.

    `env` entries are added to the current environment. Waits (polling a TCP connect,
    bounded by `timeout`) until the server listens; fails early if the process exits.
    The server's stderr is kept in a temporary file and included in the error on failure.
    """
    chosen = port if port is not None else free_port()
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    argv = [sys.executable, str(fixture_path(script)), "http", "--port", str(chosen), *args]
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as stderr_file:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=devnull, stderr=stderr_file, env=full_env)
        try:
            deadline = time.monotonic() + timeout
            while not _port_open(chosen):
                code = proc.poll()
                if code is not None:
                    raise RuntimeError(
                        f"{script} exited with code {code} before listening on port {chosen}: {_read_tail(stderr_file)}"
                    )
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{script} did not listen on 127.0.0.1:{chosen} within {timeout}s: {_read_tail(stderr_file)}"
                    )
                time.sleep(_POLL_INTERVAL)
            yield f"http://127.0.0.1:{chosen}/mcp"
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
