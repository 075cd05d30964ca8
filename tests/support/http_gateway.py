"""Starting `mcp-sidecar mcp --http 127.0.0.1:0` as a real subprocess and connecting to it over HTTP."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from support.expose import searched

ANNOUNCED = re.compile(r"^mcp-sidecar: MCP over HTTP at (http://\S+) \(send the header: Authorization: Bearer (.+)\)$")
"""The one line the gateway prints at start: its URL and the token (or `<the token in PATH>`)."""
START_TIMEOUT_S = 60.0
_LIMITED = (
    "import os, resource, sys; n = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)
"""Run with `N COMMAND...`: lower the open-file limit to N, then exec the command."""


@dataclass
class HttpGateway:
    url: str
    token: str
    proc: subprocess.Popen[bytes]
    stderr_path: Path
    log_path: Path
    announced: str
    """The line naming the URL, as printed."""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def authority(self) -> str:
        """`127.0.0.1:PORT`, as in the URL."""
        return self.url.split("/")[2]

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Send `sig` and wait for the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)


def gateway_command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_sidecar", "-vv", "--log-file", str(home / "gateway.log"), "mcp", *searched(args)]


def gateway_env(home: Path) -> dict[str, str]:
    return {**os.environ, "MCP_SIDECAR_HOME": str(home)}


def _announced(stderr_path: Path, proc: subprocess.Popen[bytes]) -> re.Match[str]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        text = stderr_path.read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            if (found := ANNOUNCED.match(line)) is not None:
                return found
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited with {proc.returncode} before serving:\n{text}")
        if time.monotonic() > deadline:
            raise AssertionError(f"the gateway did not announce its URL within {START_TIMEOUT_S} s:\n{text}")
        time.sleep(0.05)


@contextmanager
def http_gateway(
    home: Path,
    *args: str,
    token_file: Path | None = None,
    open_files: int | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[HttpGateway]:
    """`mcp-sidecar -vv --log-file HOME/gateway.log mcp --http 127.0.0.1:0 ARGS...`, stopped at the end;
    `open_files`: its limit of open file descriptors (RLIMIT_NOFILE), lowered to that; `env`: its
    whole environment (default: ours, with MCP_SIDECAR_HOME)."""
    stderr_path = home / "gateway.stderr"
    extra = ["--token-file", str(token_file)] if token_file is not None else []
    command = gateway_command(home, "--http", "127.0.0.1:0", *extra, *args)
    if open_files is not None:
        command = [sys.executable, "-c", _LIMITED, str(open_files), *command]
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            command, env=env or gateway_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        found = _announced(stderr_path, proc)
        token = token_file.read_text(encoding="utf-8").strip() if token_file is not None else found.group(2)
        yield HttpGateway(found.group(1), token, proc, stderr_path, home / "gateway.log", found.group(0))
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def http_client(headers: dict[str, str] | None = None) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(30.0, read=300.0))


@asynccontextmanager
async def http_host(url: str, headers: dict[str, str], *, legacy: bool = True, **client: Any) -> AsyncIterator[Client]:
    """The SDK's `Client` over Streamable HTTP sending `headers` (the token): `legacy` the handshake
    era, else 2026-07-28 (negotiated by the SDK's probe)."""
    async with http_client(headers) as http:
        transport = streamable_http_client(url, http_client=http)
        mode: Any = "legacy" if legacy else "auto"
        async with Client(transport, mode=mode, read_timeout_seconds=60, **client) as host:
            yield host
