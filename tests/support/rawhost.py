"""A hand-written MCP host for the gateway's stdio face: newline-delimited JSON-RPC, both eras.

The SDK's `Client` speaks one era per connection and never sends a malformed or out-of-era
request; a real host may. This one writes exactly what a test gives it and records every line
the gateway writes, with the time it arrived, so a test can ask what came back and when.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.expose import searched

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
CLIENT_INFO = {"name": "raw-host", "version": "0"}
TOOLS_CHANGED = "notifications/tools/list_changed"


def envelope(version: str = MODERN, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `_meta` every 2026-07-28 request carries."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }


def modern(params: dict[str, Any] | None = None) -> dict[str, Any]:
    """`params` with the 2026-07-28 envelope."""
    return {**(params or {}), "_meta": {**(params or {}).get("_meta", {}), **envelope()}}


def initialize_params(version: str = HANDSHAKE, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": capabilities or {}, "clientInfo": CLIENT_INFO}


@dataclass
class Line:
    at: float
    """Seconds since the gateway was started."""
    message: dict[str, Any]


@dataclass
class RawHost:
    proc: asyncio.subprocess.Process
    started: float
    lines: list[Line] = field(default_factory=list)
    garbage: list[bytes] = field(default_factory=list)
    """Lines on stdout that are not JSON-RPC messages."""
    _ids: int = 0
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                self.garbage.append(line)
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.garbage.append(line)
                continue
            self.lines.append(Line(time.monotonic() - self.started, message))
            self._arrived.set()

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)

    def request(self, method: str, params: dict[str, Any] | None = None, request_id: Any = None) -> Any:
        """Send a request (a fresh numeric id unless given); returns its id."""
        if request_id is None:
            self._ids += 1
            request_id = self._ids
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    async def wait_for(self, what: str, found: Any, timeout: float = 30) -> Line:
        """The first line `found(message)` accepts, waiting up to `timeout` seconds for it."""
        seen = 0
        async with asyncio.timeout(timeout):
            while True:
                for line in self.lines[seen:]:
                    if found(line.message):
                        return line
                seen = len(self.lines)
                self._arrived.clear()
                if self.proc.stdout is not None and self.proc.stdout.at_eof() and self.proc.returncode is not None:
                    raise AssertionError(f"the gateway exited before {what}")
                await self._arrived.wait()

    async def answer(self, request_id: Any, timeout: float = 30) -> dict[str, Any]:
        """The response to `request_id` (result or error)."""
        line = await self.wait_for(
            f"the answer to request {request_id!r}",
            lambda m: m.get("id") == request_id and ("result" in m or "error" in m),
            timeout,
        )
        return line.message

    async def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        return await self.answer(self.request(method, params), timeout)

    async def result(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        answer = await self.call(method, params, timeout)
        assert "result" in answer, f"{method} failed: {answer}"
        result: dict[str, Any] = answer["result"]
        return result

    def notifications(self, method: str) -> list[Line]:
        return [line for line in self.lines if line.message.get("method") == method and "id" not in line.message]

    async def relist(self, params: Any = None) -> None:
        """Act as Claude Code and Gemini CLI do: list the tools again on every `list_changed` (run as a task)."""
        told = 0
        while True:
            async with asyncio.timeout(3600):
                while len(self.notifications(TOOLS_CHANGED)) <= told:
                    self._arrived.clear()
                    await self._arrived.wait()
            changed = len(self.notifications(TOOLS_CHANGED))
            for _ in range(changed - told):
                self.request("tools/list", params)
            told = changed

    def index(self, found: Any) -> int:
        """The position of the first line `found` accepts among all lines received."""
        return next(i for i, line in enumerate(self.lines) if found(line.message))

    async def handshake(self, version: str = HANDSHAKE, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.result("initialize", initialize_params(version, capabilities))
        self.notify("notifications/initialized")
        return result


def gateway_argv(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_sidecar", "-v", "--log-file", str(home / "gateway.log"), "mcp", *searched(args)]


@asynccontextmanager
async def raw_gateway(
    home: Path, *args: str, stderr: Any = asyncio.subprocess.DEVNULL, env: dict[str, str] | None = None
) -> AsyncIterator[RawHost]:
    """`mcp-sidecar mcp` with `MCP_SIDECAR_HOME=home`, driven by a raw host; stopped (stdin closed,
    then killed if it lingers) on the way out."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *gateway_argv(home, *args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env={**os.environ, "MCP_SIDECAR_HOME": str(home), **(env or {})},
    )
    host = RawHost(proc, started)
    reader = asyncio.get_running_loop().create_task(host.read())
    try:
        yield host
    finally:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        with contextlib.suppress(asyncio.CancelledError):
            reader.cancel()
            await reader
