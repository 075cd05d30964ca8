"""A hand-framed JSON-RPC client for the sidecar: raw bytes in, every byte of stdout checked.

pytest-lsp cannot send malformed frames or skip `initialize`; this client can. Its reader
parses stdout strictly as LSP frames (`Content-Length` header, blank line, a JSON object
body) and records anything else as a framing violation, so a test can prove that stdout
carries JSON-RPC only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

_HEADER_PREFIX = b"Content-Length: "


def frame(body: bytes, *, header: bytes | None = None) -> bytes:
    """`body` with an LSP header; `header` replaces the whole header block (without the blank line)."""
    head = header if header is not None else _HEADER_PREFIX + str(len(body)).encode()
    return head + b"\r\n\r\n" + body


def encode(message: Any) -> bytes:
    return frame(json.dumps(message).encode())


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process, stderr_path: Path) -> None:
        self.proc = proc
        self.stderr_path = stderr_path
        self.messages: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.stdout_bytes = 0
        self._next_id = 0
        assert proc.stdout is not None
        self._reader = asyncio.get_running_loop().create_task(self._read(proc.stdout))

    # -- reading -----------------------------------------------------------------------------

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        while True:
            try:
                header = await stdout.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                self.stdout_bytes += len(exc.partial)
                if exc.partial:
                    self.violations.append(f"trailing bytes without a frame: {exc.partial[:200]!r}")
                return
            except asyncio.LimitOverrunError:
                self.violations.append("a header block longer than the stream limit")
                return
            self.stdout_bytes += len(header)
            lines = header[:-4].split(b"\r\n")
            lengths = [line[len(_HEADER_PREFIX) :] for line in lines if line.startswith(_HEADER_PREFIX)]
            others = [line for line in lines if not line.startswith((_HEADER_PREFIX, b"Content-Type: "))]
            if len(lengths) != 1 or not lengths[0].isdigit() or others:
                self.violations.append(f"not an LSP header block: {header[:200]!r}")
                return
            try:
                body = await stdout.readexactly(int(lengths[0]))
            except asyncio.IncompleteReadError as exc:
                self.violations.append(f"a truncated body: {exc.partial[:200]!r}")
                return
            self.stdout_bytes += len(body)
            try:
                message = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                self.violations.append(f"a body that is not UTF-8 JSON: {body[:200]!r}")
                return
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.violations.append(f"a body that is not a JSON-RPC 2.0 object: {body[:200]!r}")
                return
            self.messages.append(message)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 30, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.violations:
                raise AssertionError(f"stdout violated the framing: {self.violations}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; received {self.messages!r}")
            await asyncio.sleep(0.01)

    def responses(self, msg_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.messages if "method" not in m and m.get("id") == msg_id]

    async def response(self, msg_id: Any, timeout: float = 30) -> dict[str, Any]:
        """The one response with this id (for id None: the oldest not yet taken)."""
        await self.wait_for(lambda: bool(self.responses(msg_id)), timeout, f"a response to id {msg_id!r}")
        found = self.responses(msg_id)[0]
        self.messages.remove(found)
        return found

    # -- writing -----------------------------------------------------------------------------

    async def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def send(self, message: Any) -> None:
        await self.send_bytes(encode(message))

    async def request(self, method: str, params: Any = None, timeout: float = 30) -> dict[str, Any]:
        """Send a request and return its whole response message (`result` or `error`)."""
        self._next_id += 1
        msg_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.response(msg_id, timeout)

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self.proc.stdin.wait_closed()

    async def wait_exit(self, timeout: float = 30) -> int:
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        await asyncio.wait_for(self._reader, timeout)
        return code

    async def stop_reading(self) -> None:
        """Stop the task that reads the sidecar's stdout (after the process ended or was killed)."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


@asynccontextmanager
async def raw_sidecar(home: Path, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[RawClient]:
    """`python -m mcp_sidecar *args` on pipes, with MCP_SIDECAR_HOME=home (an existing directory).

    The process is killed if it still runs at the end; its stderr goes to `home/sidecar.stderr`.
    """
    stderr_path = home / "sidecar.stderr"
    with stderr_path.open("wb") as stderr:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mcp_sidecar",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, "MCP_SIDECAR_HOME": str(home), **(env or {})},
            cwd=home,
        )
    client = RawClient(proc, stderr_path)
    try:
        yield client
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await client.stop_reading()
