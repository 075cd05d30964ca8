"""mcp-sidecar side by side with mcp-hub (the Node sidecar behind mcphub.nvim) on the same stdio servers.

mcp-hub 4.2.1 is installed from npm into benchmarks/node_modules (pinned by benchmarks/package.json and
package-lock.json; `scripts/setup --test` installs it). Each run starts, one after the other and
with the other one idle:
  * mcp-hub: `node --require _loopback_only.cjs node_modules/mcp-hub/dist/cli.js --port P --config F`,
    F = {"mcpServers": {...}} naming N copies of tests/fixtures/servers/basic.py (stdio, the repo's
    .venv python). Its HOME and XDG directories point into a temp dir, with a fresh marketplace cache
    so that it does not fetch the marketplace registry over the network on start. The preload makes
    it bind 127.0.0.1 only (mcp-hub has no host option), and the listening socket is checked in
    /proc/net/tcp{,6}. It is driven the way mcphub.nvim drives it: an SSE connection to /api/events,
    REST calls on a keep-alive HTTP/1.1 connection (a hand-written asyncio client, no library).
  * the sidecar: `python -m mcp_sidecar` with a temp MCP_SIDECAR_HOME whose mcp.json names the same N
    servers, driven by the raw stdio JSON-RPC client of _common.py. Like the hub's marketplace cache,
    its start-up code cache (startup.py: what attrs compiles for lsprotocol, written by any earlier
    start) is in place, copied from one untimed start before the runs; no catalog is cached.

Figures, per server count:
  1. start to the first tool list: for mcp-hub, spawn -> port accepting -> SSE `hub_state` "ready"
     -> GET /api/servers shows every server connected with its tools; for the sidecar, spawn ->
     `initialize` + `initialized` -> `mcp/server/tools` for every server (sent at once) answered.
     Also shown: a second sidecar start on the same home, answered from its 24-hour disk cache
     (mcp-hub has no catalog cache, so it has no such row).
  2. tool-call round trip: `echo {"text": "hello"}`, rotating over the servers, sequential and
     interleaved (the order alternates every round): POST /api/servers/tools vs `mcp/callTool`
     (after `mcp/activate` of every echo).
  3. memory of the hub process and of the sidecar process alone (the server processes, their
     descendants, are summed separately): VmRSS once settled after the first tool list, VmRSS once
     settled after the calls (steady), and VmHWM (peak) at the end, all from /proc/PID/status.

Every process started is shut down (SIGTERM for mcp-hub, LSP shutdown/exit for the sidecar), and any
descendant still alive afterwards is killed by its pid and counted in the output.

Goal (issue 10): the sidecar ahead of mcp-hub on every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    BASIC_SERVER,
    BENCHMARKS,
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    Summary,
    basic_server_entry,
    descendants,
    machine_line,
    mib,
    now,
    proc_status,
    sidecar_env,
    table,
    write_config,
)
from memory import settle

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
    leftovers: int = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def call(self, server: str) -> None:
        assert self.http is not None
        body = {"server_name": server, "tool": "echo", "arguments": ARGUMENTS}
        status, answer = await asyncio.wait_for(self.http.request("POST", "/api/servers/tools", body), CALL_LIMIT_S)
        if status != 200 or answer["result"].get("isError") or answer["result"]["content"][0]["text"] != "hello":
            raise RuntimeError(f"unexpected mcp-hub answer: {status} {answer}")

    async def reconnect(self) -> None:
        """A fresh keep-alive connection: node closes one that was idle for 5 s (keepAliveTimeout)."""
        if self.http is not None:
            await self.http.close()
        self.http = await HttpConnection.open(self.port)

    async def close(self) -> None:
        pids = descendants(self.pid)
        for conn in (self.http, self.events):
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


async def start_hub(node: str, names: list[str], base: Path) -> tuple[Hub, dict[str, float]]:
    config = base / "servers.json"
    servers = {name: {"command": PYTHON, "args": [str(BASIC_SERVER), "stdio"]} for name in names}
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


@dataclass
class Sidecar:
    client: RawClient
    leftovers: int = 0

    @property
    def pid(self) -> int:
        return self.client.pid

    async def call(self, server: str) -> None:
        params = {"id": f"{server}.echo", "arguments": ARGUMENTS}
        result = await self.client.request("mcp/callTool", params, limit_s=CALL_LIMIT_S)
        if result.get("isError") or result["content"][0]["text"] != "hello":
            raise RuntimeError(f"unexpected sidecar answer: {result}")

    async def close(self) -> None:
        pids = descendants(self.pid)
        await self.client.close()
        self.leftovers += await reap_leftovers(pids)


async def start_sidecar(names: list[str], home: Path, from_cache: bool = False) -> tuple[Sidecar, dict[str, float]]:
    """Spawn to every server's tool list (`mcp/server/tools`, always live), or with `from_cache` to
    the first `mcp/discover {kind: tools}` (catalogs from the disk cache, no server needed)."""
    start = now()
    client = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
    sidecar = Sidecar(client)
    seen: dict[int, float] = {}
    watcher = asyncio.get_running_loop().create_task(watch_spawns(client.pid, start, seen))
    try:
        await client.initialize(initialized=True)
        initialized = now()
        if from_cache:
            params = {"query": "", "kind": "tools", "limit": 50}
            found = await client.request("mcp/discover", params, limit_s=START_LIMIT_S)
            tools_listed = now()
            if not found["candidates"] or found.get("unavailable"):
                raise RuntimeError(f"discovery from the cache failed: {found.get('unavailable')}")
        else:
            listings = await asyncio.gather(
                *(client.request("mcp/server/tools", {"server": name}, limit_s=START_LIMIT_S) for name in names)
            )
            tools_listed = now()
            if any(not listing["tools"] for listing in listings):
                raise RuntimeError("a server listed no tools through the sidecar")
        spawns = await stop_watching(watcher, seen, 0 if from_cache else len(names))
    except BaseException:
        watcher.cancel()
        await sidecar.close()
        raise
    return sidecar, {"first_tools": tools_listed - start, "ready": initialized - start, **spawns}


# --------------------------------------------------------------------------- one run


async def seed_code_cache(home: Path) -> list[Path]:
    """One untimed start on an empty home: the start-up code cache files a user's sidecar has."""
    client = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
    try:
        await client.initialize(initialized=True)
    finally:
        await client.close()
    return sorted((home / "cache").glob("attrs-code.*"))


async def one_run(
    count: int,
    hub_first: bool,
    calls: int,
    warmup: int,
    node: str,
    protocol: str,
    quiet_s: float,
    code_cache: list[Path],
) -> dict[str, Any]:
    names = [f"basic{i:02d}" for i in range(1, count + 1)]
    result: dict[str, Any] = {"count": count}
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home, hub_base = Path(tmp) / "sidecar", Path(tmp) / "hub"
        hub_base.mkdir()
        write_config(home, {name: basic_server_entry(protocol, timeout_ms=120_000) for name in names})
        (home / "cache").mkdir(mode=0o700)
        for path in code_cache:
            shutil.copy2(path, home / "cache" / path.name)
        hub: Hub | None = None
        sidecar: Sidecar | None = None
        try:
            for side in ("hub", "sidecar") if hub_first else ("sidecar", "hub"):
                if side == "hub":
                    hub, result["hub_start"] = await start_hub(node, names, hub_base)
                else:
                    sidecar, result["sidecar_start"] = await start_sidecar(names, home)
            assert hub is not None
            assert sidecar is not None
            info = await sidecar.client.request("mcp/server/get", {"server": names[0]})
            result["negotiated"] = info["protocol"]["negotiated"]

            for side in (hub, sidecar):
                await settle(side.pid, quiet_s=quiet_s, limit_s=quiet_s * 10)
            result["mem_start"] = {"hub": proc_status(hub.pid), "sidecar": proc_status(sidecar.pid)}

            activated = await sidecar.client.request("mcp/activate", {"ids": [f"{name}.echo" for name in names]})
            if any(row["status"] == "not loaded" for row in activated["results"]):
                raise RuntimeError(f"activation failed: {activated['results']}")
            await hub.reconnect()
            result["samples"], result["cpu_per_call"] = await _measure_calls(hub, sidecar, names, calls, warmup)

            for side in (hub, sidecar):
                await settle(side.pid, quiet_s=quiet_s, limit_s=quiet_s * 10)
            result["mem_end"] = {"hub": proc_status(hub.pid), "sidecar": proc_status(sidecar.pid)}
            result["children"] = {"hub": children_memory(hub.pid), "sidecar": children_memory(sidecar.pid)}
        finally:
            for side in (sidecar, hub):
                if side is not None:
                    await side.close()
        result["leftovers"] = {"hub": hub.leftovers if hub else 0, "sidecar": sidecar.leftovers if sidecar else 0}

        # A second sidecar start on the same home: its first discovery reads the disk cache.
        warm, timings = await start_sidecar(names, home, from_cache=True)
        try:
            started = len(descendants(warm.pid))
        finally:
            await warm.close()
        result["sidecar_cached"] = {**timings, "servers_started": started}
        result["leftovers"]["sidecar"] += warm.leftovers
    return result


async def _measure_calls(
    hub: Hub, sidecar: Sidecar, names: list[str], calls: int, warmup: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Milliseconds per call on each side, alternating which goes first, and CPU seconds per call."""
    count = len(names)
    paths: dict[str, Callable[[str], Any]] = {"hub": hub.call, "sidecar": sidecar.call}
    for i in range(max(warmup, count)):  # every server at least once
        for call in paths.values():
            await call(names[i % count])
    samples: dict[str, list[float]] = {"hub": [], "sidecar": []}
    cpu_before = {"hub": cpu_seconds(hub.pid), "sidecar": cpu_seconds(sidecar.pid)}
    for i in range(calls):
        order = ("hub", "sidecar") if i % 2 == 0 else ("sidecar", "hub")
        for side_name in order:
            begin = now()
            await paths[side_name](names[i % count])
            samples[side_name].append((now() - begin) * 1000)
    cpu_per_call = {
        "hub": (cpu_seconds(hub.pid) - cpu_before["hub"]) / calls,
        "sidecar": (cpu_seconds(sidecar.pid) - cpu_before["sidecar"]) / calls,
    }
    return samples, cpu_per_call


# --------------------------------------------------------------------------- report


def _verdict(sidecar: float, hub: float) -> str:
    return "ahead" if sidecar < hub else "BEHIND"


def _verdict_rows(label: str, figures: list[tuple[str, float, float]], behind: list[str]) -> list[list[Any]]:
    """One row per figure; the figures where the sidecar is behind are added to `behind`."""
    rows: list[list[Any]] = []
    for figure, side_value, hub_value in figures:
        verdict = _verdict(side_value, hub_value)
        if verdict != "ahead":
            behind.append(f"{figure} ({label})")
        rows.append([label, figure, side_value, hub_value, f"{side_value / hub_value:.2f}x", verdict])
    return rows


def report(results: list[dict[str, Any]], counts: list[int]) -> list[str]:
    start_rows, call_rows, mem_rows, verdict_rows = [], [], [], []
    behind: list[str] = []
    for count in counts:
        runs = [r for r in results if r["count"] == count]
        label = f"{count} server{'s' if count > 1 else ''}"

        def ms(key: str, what: str, runs: list[dict[str, Any]] = runs) -> list[float]:
            return [r[key][what] * 1000 for r in runs if what in r[key]]

        def med(values: list[float]) -> str:
            return f"{statistics.median(values):.0f}" if values else "-"

        started = max(r["sidecar_cached"]["servers_started"] for r in runs)
        for key, name, ready_label in (
            ("hub_start", "mcp-hub", "port accepting"),
            ("sidecar_start", "mcp-sidecar", "initialize answered"),
            ("sidecar_cached", f"mcp-sidecar restart, mcp/discover from disk cache ({started} started)", "initialize"),
        ):
            s = Summary.of(ms(key, "first_tools"))
            spawned = f"{med(ms(key, 'spawn_first'))} / {med(ms(key, 'spawn_last'))}"
            ready = f"{med(ms(key, 'ready'))} ({ready_label})"
            start_rows.append([label, name, s.n, s.min, s.median, s.max, ready, spawned])
        hub_first, side_first = ms("hub_start", "first_tools"), ms("sidecar_start", "first_tools")

        hub_calls = Summary.of([v for r in runs for v in r["samples"]["hub"]])
        side_calls = Summary.of([v for r in runs for v in r["samples"]["sidecar"]])
        for side, name, s in (
            ("hub", "mcp-hub POST /api/servers/tools", hub_calls),
            ("sidecar", "mcp-sidecar mcp/callTool", side_calls),
        ):
            cpu = sum(r["cpu_per_call"][side] for r in runs) / len(runs) * 1000
            call_rows.append([label, name, s.n, s.min, s.median, s.p95, s.max, cpu])

        def mem(phase: str, side: str, key: str, runs: list[dict[str, Any]] = runs) -> float:
            return statistics.median(mib(r[phase][side].get(key, 0)) for r in runs)

        def kids(side: str, runs: list[dict[str, Any]] = runs) -> tuple[int, float]:
            n = max(len(r["children"][side]) for r in runs)
            rss = statistics.median(mib(sum(c.get("VmRSS", 0) for c in r["children"][side])) for r in runs)
            return n, rss

        memory: dict[str, tuple[float, float, float]] = {}
        for side, name in (("hub", "mcp-hub (node)"), ("sidecar", "mcp-sidecar (python)")):
            after_start = mem("mem_start", side, "VmRSS")
            steady = mem("mem_end", side, "VmRSS")
            peak = mem("mem_end", side, "VmHWM")
            memory[side] = (after_start, steady, peak)
            n, rss = kids(side)
            mem_rows.append([label, name, after_start, steady, peak, f"{n} / {rss:.1f}"])

        figures = [
            ("first tool list, median ms", statistics.median(side_first), statistics.median(hub_first)),
            ("call latency, median ms", side_calls.median, hub_calls.median),
            ("call latency, p95 ms", side_calls.p95, hub_calls.p95),
            ("memory steady (VmRSS), MiB", memory["sidecar"][1], memory["hub"][1]),
            ("memory peak (VmHWM), MiB", memory["sidecar"][2], memory["hub"][2]),
        ]
        verdict_rows += _verdict_rows(label, figures, behind)

    print(
        table(
            ["servers", "process", "runs", "min", "median", "max", "median to", "first / last server spawned"],
            start_rows,
            "Start to the first tool list of every server (ms; the last two columns are medians)",
        )
    )
    print()
    print(
        table(
            ["servers", "path", "n", "min", "median", "p95", "max", "CPU per call"],
            call_rows,
            'Tool call round trip, echo {"text": "hello"}, rotating over the servers (ms; CPU of the hub or'
            " sidecar process alone, from /proc/PID/stat)",
        )
    )
    print()
    print(
        table(
            ["servers", "process", "VmRSS after start", "VmRSS steady", "VmHWM peak", "server procs / VmRSS sum"],
            mem_rows,
            "Memory of the hub or sidecar process alone (MiB; its server processes shown apart)",
        )
    )
    print()
    print(
        table(
            ["servers", "figure", "mcp-sidecar", "mcp-hub", "sidecar / hub", "sidecar is"],
            verdict_rows,
            "Side by side",
        )
    )
    return behind


def node_version(node: str) -> tuple[int, str]:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    text = done.stdout.strip()
    return int(text.lstrip("v").split(".")[0]), text


async def run(counts: list[int], runs: int, calls: int, warmup: int, node: str, protocol: str, quiet_s: float) -> int:
    print(machine_line())
    hub_version = json.loads((HUB_PACKAGE / "package.json").read_text())["version"]
    _, node_text = node_version(node)
    print(
        f"mcp-hub {hub_version} on node {node_text} (its client proposes protocol {HUB_PROPOSED_PROTOCOL}); "
        f"mcp-sidecar with protocol {protocol!r}; servers: {BASIC_SERVER.relative_to(ROOT)} over stdio"
    )
    print(f"{runs} run(s) per server count, {calls} measured calls per path and run; times in ms\n")
    results = []
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-seed-") as seed:
        code_cache = await seed_code_cache(Path(seed))
        print(f"sidecar start-up code cache: {', '.join(p.name for p in code_cache) or 'none (not written)'}\n")
        for count in counts:
            for run_no in range(runs):
                result = await one_run(count, run_no % 2 == 0, calls, warmup, node, protocol, quiet_s, code_cache)
                results.append(result)
                print(
                    f"  {count} server(s), run {run_no + 1}: first tool list hub "
                    f"{result['hub_start']['first_tools'] * 1000:.0f} ms, sidecar "
                    f"{result['sidecar_start']['first_tools'] * 1000:.0f} ms "
                    f"({'hub' if run_no % 2 == 0 else 'sidecar'} started first); sidecar negotiated "
                    f"{result['negotiated']}",
                    flush=True,
                )
    print()
    behind = report(results, counts)
    leftovers = {side: sum(r["leftovers"][side] for r in results) for side in ("hub", "sidecar")}
    print()
    verdict = "MET" if not behind else "MISSED (behind on: " + "; ".join(behind) + ")"
    print(f"goal: the sidecar ahead of mcp-hub on every figure -> {verdict}")
    print(f"leftover processes killed after shutdown: mcp-hub {leftovers['hub']}, mcp-sidecar {leftovers['sidecar']}")
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--servers", default="1,10", help="comma-separated server counts (default 1,10)")
    parser.add_argument("--runs", type=int, default=3, help="runs per server count (default 3)")
    parser.add_argument("--calls", type=int, default=200, help="measured calls per path and run (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up calls per path and run (default 20)")
    parser.add_argument("--protocol", choices=("auto", "legacy"), default="auto", help="the sidecar's protocol field")
    parser.add_argument("--node", default=os.environ.get("NODE", "node"), help="node binary (default: node on PATH)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 server, 1 run, 20 calls")
    args = parser.parse_args(argv)
    quiet_s = 1.0
    if args.quick:
        args.servers, args.runs, args.calls, args.warmup, quiet_s = "1", 1, 20, 5, 0.3
        print("--quick: a smoke run; too few samples for the verdicts below to mean anything\n")
    counts = [int(c) for c in args.servers.split(",") if c.strip()]
    if args.runs < 1 or args.calls < 1 or not counts or min(counts) < 1:
        parser.error("--runs, --calls and every --servers count must be at least 1")
    node = shutil.which(args.node)
    if not HUB_CLI.is_file() or node is None:
        missing = "node" if node is None else str(HUB_CLI.relative_to(ROOT))
        print(f"SKIPPED: {missing} not found; install it with `scripts/setup --test` (npm ci in benchmarks/)")
        return 0
    major, text = node_version(node)
    if major < 18:
        print(f"SKIPPED: mcp-hub needs node 18 or newer; {node} is {text}")
        return 0
    return asyncio.run(run(counts, args.runs, args.calls, args.warmup, node, args.protocol, quiet_s))


if __name__ == "__main__":
    sys.exit(main())
