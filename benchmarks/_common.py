"""Shared helpers for the benchmark scripts: a raw stdio JSON-RPC client, statistics, tables.

Not a benchmark itself. The client frames messages by hand (Content-Length headers over
asyncio subprocess pipes) so that it adds as little as possible to what it measures, and it
imports neither pygls nor the mcp SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT: Path = Path(__file__).resolve().parent.parent
BENCHMARKS: Path = ROOT / "benchmarks"
BASIC_SERVER: Path = ROOT / "tests" / "fixtures" / "servers" / "basic.py"
BARE_PYGLS: Path = BENCHMARKS / "_bare_pygls.py"
PYTHON: str = sys.executable

os.environ.setdefault("MCP_SIDECAR_ENGINE", "off")
"""Every benchmark measures a sidecar in its own process, as the figures recorded before the engine
did (set MCP_SIDECAR_ENGINE=on to measure through the engine); `engine.py` sets each setup's mode."""

SIDECAR_ARGV: list[str] = [PYTHON, "-m", "mcp_sidecar"]
BARE_ARGV: list[str] = [PYTHON, str(BARE_PYGLS)]


class RpcError(Exception):
    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.error = error


@dataclass
class RawClient:
    """A minimal LSP-framed JSON-RPC client over a child process's stdin/stdout."""

    proc: asyncio.subprocess.Process
    notifications: list[dict[str, Any]] = field(default_factory=list)
    _pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        stderr: int | None = asyncio.subprocess.DEVNULL,
    ) -> RawClient:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
            limit=1 << 24,
        )
        client = cls(proc)
        client._reader = asyncio.get_running_loop().create_task(client._read_loop())
        return client

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps(message, separators=(",", ":")).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def _read_loop(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while True:
                length = None
                while True:
                    line = await stdout.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if length is None:
                    continue
                message = json.loads(await stdout.readexactly(length))
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the process closed its stdout"))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message:
            if "id" in message:  # a request from the server (e.g. workDoneProgress/create)
                self._write({"jsonrpc": "2.0", "id": message["id"], "result": None})
            else:
                self.notifications.append(message)
            return
        future = self._pending.pop(message.get("id"), None)
        if future is not None and not future.done():
            future.set_result(message)

    async def request(self, method: str, params: Any = None, limit_s: float = 120) -> Any:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        reply = await asyncio.wait_for(future, limit_s)
        if "error" in reply:
            raise RpcError(method, reply["error"])
        return reply.get("result")

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    async def initialize(self, initialized: bool = False) -> Any:
        result = await self.request("initialize", initialize_params())
        if initialized:
            self.notify("initialized", {})
        return result

    async def close(self, limit_s: float = 15) -> int | None:
        """LSP shutdown + exit, then wait for the process; kill it if it does not go."""
        if self.proc.returncode is None:
            with contextlib.suppress(Exception):
                await self.request("shutdown", None, limit_s=limit_s)
                self.notify("exit")
            with contextlib.suppress(Exception):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), limit_s)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        return self.proc.returncode


def initialize_params() -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "rootUri": None,
        "capabilities": {},
        "initializationOptions": {"trustedWorkspace": False, "interactive": False},
    }


def sidecar_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MCP_SIDECAR_HOME"] = str(home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def write_config(home: Path, servers: dict[str, Any]) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path


def basic_server_entry(protocol: str = "auto", timeout_ms: int | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": PYTHON, "args": [str(BASIC_SERVER), "stdio"], "protocol": protocol}
    if timeout_ms is not None:
        entry["timeoutMs"] = timeout_ms
    return entry


# --------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (p95 of 20 samples is the 19th smallest)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class Summary:
    n: int
    min: float
    median: float
    p95: float
    max: float
    mean: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        return cls(
            n=len(values),
            min=min(values),
            median=statistics.median(values),
            p95=percentile(values, 95),
            max=max(values),
            mean=statistics.fmean(values),
        )


# --------------------------------------------------------------------------- output


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> str:
    """A plain-text table; numbers right-aligned, everything else left-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    numeric = [all(_is_number(row[i]) for row in cells) if cells else False for i in range(len(headers))]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def fmt(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if numeric[i] else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths, strict=True))]
        return "  ".join(parts).rstrip()

    lines = []
    if title:
        lines += [title, "=" * len(title)]
    lines += [fmt(list(headers)), fmt(["-" * w for w in widths])]
    lines += [fmt(row) for row in cells]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("x%"))
    except ValueError:
        return False
    return True


def machine_line() -> str:
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"machine: {cpus} CPUs, Python {platform.python_version()} ({PYTHON}), load average {load}"


def now() -> float:
    return time.perf_counter()


# --------------------------------------------------------------------------- /proc


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, ... from /proc/PID/status, in kB."""
    values: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return values
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if (key.startswith("Vm") and len(parts) == 2 and parts[1] == "kB") or key == "Threads":
            values[key] = int(parts[0])
    return values


def descendants(pid: int) -> list[int]:
    """Every descendant process of pid (children first), from /proc/*/stat."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    queue = [pid]
    while queue:
        for child in parents.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    return found


def mib(kb: float) -> float:
    return kb / 1024
