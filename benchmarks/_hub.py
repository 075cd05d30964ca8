"""Driving mcp-hub 4.2.1 (the Node sidecar behind mcphub.nvim) from a benchmark: start, REST calls, stop.

mcp-hub is installed from npm into benchmarks/node_modules (pinned by benchmarks/package.json and
package-lock.json; `scripts/setup --test` installs it). It is started as `node --require
_loopback_only.cjs node_modules/mcp-hub/dist/cli.js --port P --config F`; its HOME and XDG
directories point into a temp dir, with a fresh marketplace cache so that it does not fetch the
marketplace registry over the network on start. The preload makes it bind 127.0.0.1 only (mcp-hub
has no host option), and the listening socket is checked in /proc/net/tcp{,6}. It is driven the
way mcphub.nvim drives it: an SSE connection to /api/events, REST calls on keep-alive HTTP/1.1
connections (a hand-written asyncio client, no library). Not a benchmark itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import BENCHMARKS, descendants, now, proc_status

HUB_PACKAGE = BENCHMARKS / "node_modules" / "mcp-hub"
HUB_CLI = HUB_PACKAGE / "dist" / "cli.js"
LOOPBACK_PRELOAD = BENCHMARKS / "_loopback_only.cjs"
ARGUMENTS = {"text": "hello"}
START_LIMIT_S = 180.0
CALL_LIMIT_S = 30.0
HUB_PROPOSED_PROTOCOL = "2025-06-18"  # the latest version in mcp-hub 4.2.1's bundled TypeScript SDK


# --------------------------------------------------------------------------- HTTP/1.1 + SSE client


class HttpConnection:
    """One keep-alive HTTP/1.1 connection to 127.0.0.1, JSON bodies, one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int) -> None:
        self.reader = reader
        self.writer = writer
        self.port = port

    @classmethod
    async def open(cls, port: int) -> HttpConnection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 24)
        return cls(reader, writer, port)

    def send(self, method: str, path: str, body: Any = None, headers: tuple[str, ...] = ()) -> None:
        data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "Connection: keep-alive", *headers]
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)

    async def read_head(self) -> tuple[int, dict[str, str]]:
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("mcp-hub closed the connection")
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                return status, headers
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()

    async def read_chunk(self) -> bytes:
        """One chunk of a chunked body; b"" for the last one."""
        size = int((await self.reader.readline()).split(b";")[0].strip() or b"0", 16)
        data = await self.reader.readexactly(size) if size else b""
        await self.reader.readline()  # the CRLF after the chunk, or the end of the (empty) trailers
        return data

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        self.send(method, path, body)
        status, headers = await self.read_head()
        if "content-length" in headers:
            raw = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while chunk := await self.read_chunk():
                parts.append(chunk)
            raw = b"".join(parts)
        else:
            raise RuntimeError(f"{method} {path}: a response with neither a length nor chunks")
        return status, (json.loads(raw) if raw else None)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


@dataclass
class EventStream:
    """GET /api/events (Server-Sent Events), parsed in a background task."""

    conn: HttpConnection
    events: list[tuple[str, Any]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, port: int) -> EventStream:
        conn = await HttpConnection.open(port)
        conn.send("GET", "/api/events", headers=("Accept: text/event-stream",))
        stream = cls(conn)
        stream._task = asyncio.get_running_loop().create_task(stream._read())
        return stream

    async def _read(self) -> None:
        try:
            status, headers = await self.conn.read_head()
            if status != 200:
                raise RuntimeError(f"/api/events answered {status}")
            chunked = headers.get("transfer-encoding", "").lower() == "chunked"
            buffer = b""
            while True:
                data = await self.conn.read_chunk() if chunked else await self.conn.reader.read(65536)
                if not data:
                    return
                buffer += data
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    name, payload = "message", []
                    for line in block.decode().splitlines():
                        if line.startswith("event:"):
                            name = line[6:].strip()
                        elif line.startswith("data:"):
                            payload.append(line[5:].lstrip())
                    self.events.append((name, json.loads("\n".join(payload)) if payload else None))
                    self._changed.set()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._changed.set()

    async def wait_for(self, predicate: Callable[[str, Any], bool], limit_s: float) -> tuple[str, Any]:
        seen = 0
        async with asyncio.timeout(limit_s):
            while True:
                for event in self.events[seen:]:
                    if predicate(*event):
                        return event
                seen = len(self.events)
                assert self._task is not None
                if self._task.done():
                    self._task.result()  # re-raise what ended it
                    raise ConnectionError("mcp-hub closed /api/events")
                self._changed.clear()
                await self._changed.wait()

    async def close(self) -> None:
        await self.conn.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


# --------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening_addresses(port: int) -> list[str]:
    """Local addresses of the sockets listening on `port` (all processes), from /proc/net/tcp{,6}."""
    found = []
    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            address, _, hex_port = parts[1].partition(":")
            if parts[3] != "0A" or int(hex_port, 16) != port:  # 0A = LISTEN
                continue
            raw = b"".join(bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8))
            found.append(socket.inet_ntop(family, raw))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


async def reap_leftovers(pids: list[int]) -> int:
    """Kill, by pid, every process of `pids` still alive (our servers, orphaned); return how many."""
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for _ in range(60):  # up to 3 s; these are not our children any more, so there is nothing to await
        if not any(_alive(pid) for pid in left):
            break
        await asyncio.sleep(0.05)
    for pid in left:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return len(left)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the process itself (its threads, not its children)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_of(pid: int) -> list[int]:
    """Direct children, from /proc/PID/task/*/children (one small read per thread, cheap to poll)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(child) for child in (task / "children").read_text().split()]
    return found


async def watch_spawns(pid: int, start: float, seen: dict[int, float]) -> None:
    """Record when each child (a server process) first appears, polling every 10 ms."""
    while True:
        for child in children_of(pid):
            seen.setdefault(child, now() - start)
        await asyncio.sleep(0.01)


async def stop_watching(watcher: asyncio.Task[None], seen: dict[int, float], expected: int) -> dict[str, float]:
    watcher.cancel()
    with contextlib.suppress(BaseException):
        await watcher
    if len(seen) < expected:
        raise RuntimeError(f"saw {len(seen)} server processes start, expected {expected}")
    times = sorted(seen.values())
    return {"spawn_first": times[0], "spawn_last": times[-1]} if times else {}


def children_memory(pid: int) -> list[dict[str, int]]:
    return [status for status in (proc_status(child) for child in descendants(pid)) if status]


@dataclass
class Hub:
    proc: asyncio.subprocess.Process
    port: int
    events: EventStream | None = None
    http: HttpConnection | None = None
    arguments: dict[str, Any] = field(default_factory=lambda: dict(ARGUMENTS))
    """What `echo` is called with; its answer must be `expect`."""
    expect: str = "hello"
    pool: list[HttpConnection] = field(default_factory=list)
    """Keep-alive connections for concurrent calls, one call on each at a time."""
    leftovers: int = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def call(self, server: str) -> None:
        assert self.http is not None
        await self.call_on(self.http, server)

    async def call_on(self, conn: HttpConnection, server: str) -> None:
        body = {"server_name": server, "tool": "echo", "arguments": self.arguments}
        status, answer = await asyncio.wait_for(conn.request("POST", "/api/servers/tools", body), CALL_LIMIT_S)
        if status != 200 or answer["result"].get("isError") or answer["result"]["content"][0]["text"] != self.expect:
            raise RuntimeError(f"unexpected mcp-hub answer: {status} {answer}")

    async def reconnect(self) -> None:
        """A fresh keep-alive connection: node closes one that was idle for 5 s (keepAliveTimeout)."""
        if self.http is not None:
            await self.http.close()
        self.http = await HttpConnection.open(self.port)

    async def open_pool(self, size: int) -> None:
        """`size` fresh keep-alive connections (node closes one idle for 5 s, so open them just before use)."""
        for conn in self.pool:
            await conn.close()
        self.pool = [await HttpConnection.open(self.port) for _ in range(size)]

    async def close(self) -> None:
        pids = descendants(self.pid)
        for conn in (self.http, self.events, *self.pool):
            if conn is not None:
                await conn.close()
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)  # mcp-hub's graceful shutdown: closes every server
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                await self.proc.wait()
        self.leftovers += await reap_leftovers(pids)


def hub_environment(base: Path) -> dict[str, str]:
    """mcp-hub's HOME and XDG dirs in `base`, with a marketplace cache it takes as fresh (no fetch)."""
    env = dict(os.environ)
    env.pop("MCP_HUB_ENV", None)
    for variable, name in (
        ("HOME", "home"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        (base / name).mkdir(parents=True, exist_ok=True)
        env[variable] = str(base / name)
    # mcp-hub fetches its marketplace registry before it starts any server unless this file holds
    # a non-empty list fetched less than an hour ago (1 h TTL); a user's hub mostly starts that way.
    cache = base / "data" / "mcp-hub" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    servers = [{"id": "none", "name": "none"}]
    registry = {"version": "benchmark", "generatedAt": 0, "totalServers": 1, "servers": servers}
    marketplace = {"registry": registry, "lastFetchedAt": int(time.time() * 1000), "serverDocumentation": {}}
    (cache / "registry.json").write_text(json.dumps(marketplace), encoding="utf-8")
    return env


async def start_hub(node: str, servers: dict[str, dict[str, Any]], base: Path) -> tuple[Hub, dict[str, float]]:
    """mcp-hub with `servers` (mcpServers entries), from its spawn to every server connected with tools."""
    names = list(servers)
    config = base / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    env = hub_environment(base)
    port = free_port()
    argv = [node, "--require", str(LOOPBACK_PRELOAD), str(HUB_CLI), "--port", str(port), "--config", str(config)]
    start = now()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,  # its JSON log lines; they also go to its log file
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=base,
    )
    hub = Hub(proc, port)
    seen: dict[int, float] = {}
    watcher = asyncio.get_running_loop().create_task(watch_spawns(proc.pid, start, seen))
    try:
        async with asyncio.timeout(START_LIMIT_S):
            while True:
                try:
                    hub.events = await EventStream.open(port)
                    break
                except OSError:
                    if proc.returncode is not None:
                        raise RuntimeError(f"mcp-hub exited with {proc.returncode} before listening") from None
                    await asyncio.sleep(0.005)
            listening = now()
            addresses = listening_addresses(port)
            if not addresses or set(addresses) != {"127.0.0.1"}:
                raise RuntimeError(f"mcp-hub listens on {addresses}, not on 127.0.0.1 only")
            hub.http = await HttpConnection.open(port)
            _, state = await hub.events.wait_for(
                lambda name, data: name == "hub_state" and data.get("state") in ("ready", "error"), START_LIMIT_S
            )
            if state["state"] != "ready":
                raise RuntimeError(f"mcp-hub state {state}")
            status, answer = await hub.http.request("GET", "/api/servers")
            tools_listed = now()
        spawns = await stop_watching(watcher, seen, len(names))
        rows = {row["name"]: row for row in answer["servers"]}
        for name in names:
            row = rows.get(name)
            if status != 200 or row is None or row["status"] != "connected" or not row["capabilities"]["tools"]:
                raise RuntimeError(f"mcp-hub: server {name} not connected with tools: {row and row['status']}")
    except BaseException:
        watcher.cancel()
        await hub.close()
        raise
    return hub, {"first_tools": tools_listed - start, "ready": listening - start, **spawns}


def node_version(node: str) -> tuple[int, str]:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    text = done.stdout.strip()
    return int(text.lstrip("v").split(".")[0]), text
