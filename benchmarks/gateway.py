"""The gateway (`mcp-sidecar mcp`) against a direct SDK client: latency, throughput, memory, context.

Every figure is measured side by side in one run, the host being the SDK's `mcp.Client` over
stdio in each path:

  * gateway: host → `python -m mcp_sidecar mcp` (temp MCP_SIDECAR_HOME whose mcp.json points at
    tests/fixtures/servers/basic.py over stdio) → basic.py. `mcp_tools {activate:
    ["basic.echo"]}`, then calls of the native tool `basic__echo`;
  * direct: host → its own basic.py process, calls of `echo`.

1. Latency, per protocol mode (the host's `mode=` and the server's `protocol` field): after a
   warm-up, sequential calls of `echo {"text": "hello"}`, interleaved (the order alternates every
   round), plus a `tools/call` of a name the gateway does not have, which it answers without
   upstream I/O (the host → gateway hop alone). Added latency = gateway minus direct.
2. Throughput, per mode: rounds of 50 concurrent calls (`asyncio.gather`), alternating which
   path goes first; calls per second of each round. For both, the CPU per call of each process
   on the path (this script, the gateway, the server), from /proc/PID/stat.
3. Memory: VmRSS/VmHWM of the gateway process after it connected the server and made the calls,
   against a process that is only an SDK client connected to basic.py after the same calls
   (`_bare_client.py`). A separate untimed run of each with `-X importtime` counts the modules
   they import, by top-level package, and checks that the gateway imports no pygls.
4. Context cost: the `tools/list` results a host receives (compact JSON, UTF-8 bytes / 4) from
   every server of `data/reference_catalogs.json` connected directly, against the gateway's over
   the same servers: before any activation (catalogs not fetched yet, then fetched by a query, so
   its server directory lists tool names) and after activating 5 tools. Each reference server is
   `_synthetic_server.py --catalog ... --server NAME`, a real stdio server of that catalog; the
   host here is a raw newline-delimited JSON-RPC client, so the sizes are those of the wire.

5. Start-up (issue 29, `_gateway_startup.py`): launch to the first answer (`initialize` or
   `server/discover`) and to the first `tools/list`, 20 launches per era, alternating with a bare
   SDK `MCPServer` (the floor); and SIGINT to exit with a connected server, 10 stops.

Goals (issue 19): added latency at the median at most 0.5 ms; throughput at 50 concurrent calls
at least 0.6x direct; gateway RSS at most 1.2x a bare SDK client process; `tools/list` before
activation at least 90 % smaller than the direct servers' lists. Issue 29: the first answer and the
first `tools/list` at most 300 ms at the median, whatever the number of configured servers; SIGINT
ends the gateway within 100 ms, exit 0, no server left.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from _common import (
    BASIC_SERVER,
    BENCHMARKS,
    PYTHON,
    ROOT,
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
from _gateway_startup import bench_startup, bench_stop, report_startup, report_stop
from _hub import cpu_seconds
from memory import settle

GOAL_ADDED_MS = 0.5
GOAL_THROUGHPUT = 0.6
GOAL_RSS = 1.2
GOAL_SMALLER = 0.9
ARGUMENTS = {"text": "hello"}
CALL_TIMEOUT_S = 30.0
CATALOGS = BENCHMARKS / "data" / "reference_catalogs.json"
SYNTHETIC = BENCHMARKS / "_synthetic_server.py"
BARE_CLIENT = BENCHMARKS / "_bare_client.py"
ACTIVATED = (
    "filesystem.read_text_file",
    "git.git_status",
    "memory.search_nodes",
    "fetch.fetch",
    "time.get_current_time",
)
"""The 5 tools activated for the context figure: one each of five servers, as a task would need."""
QUERY = "read a text file"
HANDSHAKE = "2025-11-25"


def gateway_argv(*python_flags: str) -> list[str]:
    return [PYTHON, *python_flags, "-m", "mcp_sidecar", "mcp"]


def _params(argv: Sequence[str], env: dict[str, str] | None = None) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=argv[0], args=list(argv[1:]), env=env or dict(os.environ), cwd=str(ROOT))


@contextlib.asynccontextmanager
async def host_client(argv: Sequence[str], mode: str, errlog: TextIO, env: dict[str, str] | None = None) -> Any:
    """An SDK `Client` over stdio to `argv` (the host of both paths)."""
    from mcp import Client
    from mcp.client.stdio import stdio_client

    transport = stdio_client(_params(argv, env), errlog=errlog)
    async with Client(transport, mode=mode, cache=None, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        yield client


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode(errors="replace").split("\0")


def gateway_pid() -> int:
    """The one gateway process among this process's descendants."""
    found = [pid for pid in descendants(os.getpid()) if _cmdline(pid)[-3:-1] == ["mcp_sidecar", "mcp"]]
    if len(found) != 1:
        raise RuntimeError(f"expected one gateway process, found {found}")
    return found[0]


async def activate(host: Any, ids: Sequence[str]) -> str:
    result = await host.call_tool("mcp_tools", {"activate": list(ids)})
    text: str = result.content[0].text
    if result.is_error or "not loaded" in text:
        raise RuntimeError(f"activation failed: {text}")
    return text


def _echoed(result: Any) -> None:
    if result.is_error or result.content[0].text != "hello":
        raise RuntimeError(f"unexpected result: {result}")


# --------------------------------------------------------------------------- 1 and 2: calls


@dataclass
class Meter:
    """CPU seconds of the processes on one path: this process (the host) and the others by pid."""

    pids: dict[str, int]

    def read(self) -> dict[str, float]:
        return {"host": time.process_time(), **{label: cpu_seconds(pid) for label, pid in self.pids.items()}}


@dataclass
class Series:
    call: Callable[[], Awaitable[None]]
    meter: Meter
    ms: list[float] = field(default_factory=list)
    """Milliseconds per call (sequential) or calls per second per round (bursts)."""
    cpu: Counter[str] = field(default_factory=Counter)
    calls: int = 0

    async def timed(self, n: int = 1) -> float:
        before = self.meter.read()
        start = now()
        if n == 1:
            await self.call()
        else:
            await asyncio.gather(*(self.call() for _ in range(n)))
        elapsed = now() - start
        after = self.meter.read()
        self.cpu.update({k: after[k] - before[k] for k in after})
        self.calls += n
        return elapsed

    def cpu_ms(self) -> dict[str, float]:
        return {k: v / self.calls * 1000 for k, v in self.cpu.items()}


def _server_pid(parent: int) -> int:
    found = [pid for pid in descendants(parent) if str(BASIC_SERVER) in _cmdline(pid)]
    if not found:
        raise RuntimeError(f"no basic.py under process {parent}")
    return found[0]


async def bench_calls(mode: str, calls: int, warmup: int, rounds: int, concurrency: int, devnull: TextIO) -> Any:
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {"basic": basic_server_entry(mode)})
        async with (
            host_client(gateway_argv(), mode, devnull, sidecar_env(home)) as gateway,
            host_client([PYTHON, str(BASIC_SERVER), "stdio"], mode, devnull) as direct,
        ):
            await activate(gateway, ["basic.echo"])
            listed = {t.name for t in (await gateway.list_tools()).tools}
            if "basic__echo" not in listed:
                raise RuntimeError(f"basic__echo not listed after activation: {sorted(listed)}")
            gw_pid = gateway_pid()
            direct_server = next(p for p in descendants(os.getpid()) if p != gw_pid and _is_direct_server(p, gw_pid))

            async def via_gateway() -> None:
                _echoed(await gateway.call_tool("basic__echo", ARGUMENTS, read_timeout_seconds=CALL_TIMEOUT_S))

            async def via_direct() -> None:
                _echoed(await direct.call_tool("echo", ARGUMENTS, read_timeout_seconds=CALL_TIMEOUT_S))

            async def hop() -> None:
                result = await gateway.call_tool("no_such_tool", {}, read_timeout_seconds=CALL_TIMEOUT_S)
                if not result.is_error:
                    raise RuntimeError("a call of an unknown name was not refused")

            gw_meter = Meter({"gateway": gw_pid, "server": _server_pid(gw_pid)})
            direct_meter = Meter({"server": direct_server})

            def paths(with_hop: bool) -> dict[str, Series]:
                found = {"gateway": Series(via_gateway, gw_meter), "direct": Series(via_direct, direct_meter)}
                return found | ({"hop": Series(hop, Meter({"gateway": gw_pid}))} if with_hop else {})

            await _rounds(paths(True), warmup, 1)
            sequential = await _rounds(paths(True), calls, 1)
            await _rounds(paths(False), 2, concurrency)
            bursts = await _rounds(paths(False), rounds, concurrency)
            negotiated = {"gateway": gateway.protocol_version, "direct": direct.protocol_version}
    return {"mode": mode, "sequential": sequential, "bursts": bursts, "negotiated": negotiated}


def _is_direct_server(pid: int, gateway: int) -> bool:
    return str(BASIC_SERVER) in _cmdline(pid) and pid not in descendants(gateway)


async def _rounds(series: dict[str, Series], rounds: int, n: int) -> dict[str, Series]:
    """`rounds` rounds of `n` calls at once on each path, the order reversed every other round.

    n == 1: each series' `ms` holds milliseconds per call; else calls per second of each round."""
    names = list(series)
    for round_no in range(rounds):
        for name in names if round_no % 2 == 0 else names[::-1]:
            elapsed = await series[name].timed(n)
            series[name].ms.append(elapsed * 1000 if n == 1 else n / elapsed)
    return series


def report_calls(results: list[Any], calls: int, warmup: int, rounds: int, concurrency: int) -> list[str]:
    rows: list[list[Any]] = []
    added: list[list[Any]] = []
    rate_rows: list[list[Any]] = []
    cpu_rows: list[list[Any]] = []
    verdicts: list[str] = []
    for r in results:
        mode, seq, bursts = r["mode"], r["sequential"], r["bursts"]
        gw, direct, hop = (Summary.of(seq[k].ms) for k in ("gateway", "direct", "hop"))
        for path, version, s in (
            ("host -> gateway -> server", r["negotiated"]["gateway"], gw),
            ("host -> server (direct)", r["negotiated"]["direct"], direct),
            ("host -> gateway, unknown tool (no upstream I/O)", r["negotiated"]["gateway"], hop),
        ):
            rows.append([mode, path, version, s.n, s.min, s.median, s.p95])
        added_median = gw.median - direct.median
        added.append([mode, added_median, gw.p95 - direct.p95, gw.min - direct.min])
        gw_rate, direct_rate = (statistics.median(bursts[k].ms) for k in ("gateway", "direct"))
        ratio = gw_rate / direct_rate
        for path in ("gateway", "direct"):
            values = bursts[path].ms
            rate_rows.append([mode, path, len(values), min(values), statistics.median(values), max(values)])
        rate_rows.append([mode, "gateway / direct (median)", "", "", f"{ratio:.2f}x", ""])
        for section, found in (("sequential", seq), (f"{concurrency} at once", bursts)):
            for path, series in found.items():
                cpu = series.cpu_ms()
                values = [cpu.get(k) for k in ("host", "gateway", "server")]
                cells = ["-" if v is None else f"{v:.2f}" for v in values]
                cpu_rows.append([mode, section, path, *cells, f"{sum(v or 0 for v in values):.2f}"])
        verdicts.append(
            f"goal ({mode}): at most {GOAL_ADDED_MS} ms added at the median -> {added_median:.2f} ms: "
            + ("MET" if added_median <= GOAL_ADDED_MS else "MISSED")
        )
        verdicts.append(
            f"goal ({mode}): throughput at {concurrency} concurrent calls at least {GOAL_THROUGHPUT}x direct -> "
            f"{ratio:.2f}x: " + ("MET" if ratio >= GOAL_THROUGHPUT else "MISSED")
        )
    print(table(["mode", "path", "negotiated", "n", "min", "median", "p95"], rows, "1. Call round trip, echo (ms)"))
    print()
    print(
        table(["mode", "added median", "added p95", "added min"], added, "Added by the gateway (gateway - direct, ms)")
    )
    print(f"\n{calls} sequential calls per path and mode after {warmup} warm-up calls, interleaved.\n")
    title = f"2. Throughput: {rounds} rounds of {concurrency} concurrent calls per path (calls per second)"
    print(table(["mode", "path", "rounds", "min", "median", "max"], rate_rows, title))
    print()
    print(
        table(
            ["mode", "calls", "path", "host", "gateway", "server", "total"],
            cpu_rows,
            "CPU per call by process (ms; host = this script, which runs both hosts' clients)",
        )
    )
    print()
    return verdicts


# --------------------------------------------------------------------------- 3: memory


async def gateway_memory(calls: int, quiet_s: float, devnull: TextIO) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {"basic": basic_server_entry("auto")})
        async with host_client(gateway_argv(), "auto", devnull, sidecar_env(home)) as host:
            await host.list_tools()
            await activate(host, ["basic.echo"])
            await host.list_tools()
            for _ in range(calls):
                _echoed(await host.call_tool("basic__echo", ARGUMENTS))
            pid = gateway_pid()
            await settle(pid, quiet_s)
            return {"self": proc_status(pid), "servers": [proc_status(p) for p in descendants(pid)]}


async def bare_memory(
    calls: int, quiet_s: float, *python_flags: str, stderr: Any = asyncio.subprocess.DEVNULL
) -> dict[str, Any]:
    argv = [PYTHON, *python_flags, str(BARE_CLIENT), "--mode", "auto", "--calls", str(calls)]
    proc = await asyncio.create_subprocess_exec(
        *argv, "--", PYTHON, str(BASIC_SERVER), "stdio",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        if line.strip() != b"ready":
            raise RuntimeError(f"the bare client did not get ready: {line!r}")
        await settle(proc.pid, quiet_s)
        return {"self": proc_status(proc.pid), "servers": [proc_status(p) for p in descendants(proc.pid)]}
    finally:
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 15)
        except TimeoutError:
            proc.kill()
            await proc.wait()


_IMPORT_LINE = re.compile(r"^import time:\s+\d+\s+\|\s+\d+\s+\|( *)(\S+)")


def imported_modules(log: str) -> list[str]:
    """Module names from a `-X importtime` log."""
    return [m.group(2) for m in map(_IMPORT_LINE.match, log.splitlines()) if m]


def _log_file(path: Path) -> TextIO:
    """A file for a child's stderr (opened before the child starts, so blocking is harmless)."""
    return open(path, "w", encoding="utf-8")


async def import_census(calls: int, devnull: TextIO) -> dict[str, list[str]]:
    """What each process imported by the time it had made its calls (an untimed `-X importtime` run)."""
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {"basic": basic_server_entry("auto")})
        log_path = home / "gateway-imports.log"
        with _log_file(log_path) as log:
            async with host_client(gateway_argv("-X", "importtime"), "auto", log, sidecar_env(home)) as host:
                await activate(host, ["basic.echo"])
                await host.list_tools()
                for _ in range(calls):
                    _echoed(await host.call_tool("basic__echo", ARGUMENTS))
        gateway = imported_modules(log_path.read_text(encoding="utf-8", errors="replace"))
        bare_log = home / "bare-imports.log"
        with _log_file(bare_log) as log:
            await bare_memory(calls, 0.0, "-X", "importtime", stderr=log)
        bare = imported_modules(bare_log.read_text(encoding="utf-8", errors="replace"))
    return {"gateway": gateway, "bare": bare}


async def bench_memory(runs: int, calls: int, quiet_s: float, census: bool, devnull: TextIO) -> dict[str, Any]:
    gateway: list[dict[str, Any]] = []
    bare: list[dict[str, Any]] = []
    for run_no in range(runs):  # alternate which one goes first
        if run_no % 2 == 0:
            gateway.append(await gateway_memory(calls, quiet_s, devnull))
            bare.append(await bare_memory(calls, quiet_s))
        else:
            bare.append(await bare_memory(calls, quiet_s))
            gateway.append(await gateway_memory(calls, quiet_s, devnull))
    imports = await import_census(calls, devnull) if census else None
    return {"gateway": gateway, "bare": bare, "imports": imports}


def _report_imports(imports: dict[str, list[str]] | None) -> None:
    if imports is None:
        print("\nmodules imported: not counted (--quick)")
        return
    by_package = {side: Counter(m.split(".")[0] for m in set(mods)) for side, mods in imports.items()}
    extra = by_package["gateway"] - by_package["bare"]
    editor_protocol = by_package["gateway"]["pygls"] + by_package["gateway"]["lsprotocol"]
    print(
        f"\nmodules imported (-X importtime run): gateway {len(set(imports['gateway']))}, "
        f"bare client {len(set(imports['bare']))}; pygls or lsprotocol in the gateway: "
        + ("YES" if editor_protocol else "no")
    )
    shown = ", ".join(f"{name} {count}" for name, count in extra.most_common(12))
    print(f"modules the gateway imports beyond the bare client, by package: {shown}")


def report_memory(result: dict[str, Any], runs: int, calls: int) -> list[str]:
    def med(side: str, key: str) -> float:
        return statistics.median(mib(r["self"].get(key, 0)) for r in result[side])

    def servers(side: str) -> float:
        return statistics.median(mib(sum(s.get("VmRSS", 0) for s in r["servers"])) for r in result[side])

    rows = []
    for side, label in (
        ("gateway", "gateway (python -m mcp_sidecar mcp)"),
        ("bare", "bare SDK client (_bare_client.py)"),
    ):
        values = [mib(r["self"].get("VmRSS", 0)) for r in result[side]]
        rows.append(
            [label, med(side, "VmRSS"), med(side, "VmHWM"), f"{min(values):.1f}-{max(values):.1f}", servers(side)]
        )
    ratio = med("gateway", "VmRSS") / med("bare", "VmRSS")
    rows.append(["gateway / bare (VmRSS)", f"{ratio:.2f}x", "", "", ""])
    print(
        table(
            ["process", "VmRSS", "VmHWM (peak)", "VmRSS range", "its server (basic.py) VmRSS"],
            rows,
            f"3. Resident memory after connecting basic.py and {calls} calls (MiB, median of {runs} run(s))",
        )
    )
    _report_imports(result["imports"])
    print()
    return [
        f"goal: gateway RSS at most {GOAL_RSS}x a bare SDK client process -> {ratio:.2f}x: "
        + ("MET" if ratio <= GOAL_RSS else "MISSED")
    ]


# --------------------------------------------------------------------------- 4: context cost


@dataclass
class LineClient:
    """A raw MCP stdio client (newline-delimited JSON-RPC): the sizes it sees are the wire's."""

    proc: asyncio.subprocess.Process
    notifications: list[dict[str, Any]] = field(default_factory=list)
    _pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    _next: int = 0
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, argv: Sequence[str], env: dict[str, str] | None = None) -> LineClient:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, cwd=ROOT, limit=1 << 26,
        )  # fmt: skip
        client = cls(proc)
        client._reader = asyncio.get_running_loop().create_task(client._read())
        await client.request("initialize", {
            "protocolVersion": HANDSHAKE, "capabilities": {},
            "clientInfo": {"name": "gateway-benchmark", "version": "0"},
        })  # fmt: skip
        client._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return client

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            if "method" in message and "id" in message:  # a request to the host: it offers nothing
                self._send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "none"}})
            elif "method" in message:
                self.notifications.append(message)
            elif (future := self._pending.pop(message.get("id"), None)) is not None and not future.done():
                future.set_result(message)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        reply = await asyncio.wait_for(future, 120)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 15)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader


def tokens(result: Any) -> float:
    """UTF-8 bytes of the compact JSON / 4."""
    return len(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode()) / 4


def catalog_argv(server: str) -> list[str]:
    return [PYTHON, str(SYNTHETIC), "--catalog", str(CATALOGS), "--server", server]


def catalog_servers(limit: int | None) -> list[str]:
    """The reference servers, or the first `limit` of those with a tool in ACTIVATED (a smoke run)."""
    names = list(json.loads(CATALOGS.read_text(encoding="utf-8"))["servers"])
    if limit is None:
        return names
    return [n for n in names if any(i.startswith(f"{n}.") for i in ACTIVATED)][:limit]


async def bench_context(names: list[str]) -> dict[str, Any]:
    activate_ids = [i for i in ACTIVATED if i.split(".", 1)[0] in names]
    clients = await asyncio.gather(*(LineClient.start(catalog_argv(n)) for n in names))
    try:
        direct = {n: await c.request("tools/list", {}) for n, c in zip(names, clients, strict=True)}
    finally:
        await asyncio.gather(*(c.close() for c in clients))
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {n: {"command": PYTHON, "args": catalog_argv(n)[1:]} for n in names})
        gateway = await LineClient.start(gateway_argv(), sidecar_env(home))
        try:
            cold = await gateway.request("tools/list", {})
            await gateway.request("tools/call", {"name": "mcp_tools", "arguments": {"query": QUERY}})
            warm = await gateway.request("tools/list", {})
            activated = await gateway.request(
                "tools/call", {"name": "mcp_tools", "arguments": {"activate": activate_ids}}
            )
            if activated.get("isError") or "not loaded" in activated["content"][0]["text"]:
                raise RuntimeError(f"activation failed: {activated}")
            after = await gateway.request("tools/list", {})
            changed = sum(1 for n in gateway.notifications if n["method"] == "notifications/tools/list_changed")
        finally:
            await gateway.close()
    return {
        "direct": direct,
        "cold": cold,
        "warm": warm,
        "after": after,
        "activated": activate_ids,
        "list_changed": changed,
    }


def report_context(result: dict[str, Any]) -> list[str]:
    direct = result["direct"]
    rows: list[list[Any]] = [[f"direct: {n}", len(r["tools"]), round(tokens(r)), ""] for n, r in direct.items()]
    total = sum(tokens(r) for r in direct.values())
    count = sum(len(r["tools"]) for r in direct.values())
    rows.append([f"direct: all {len(direct)} servers (what a host loads)", count, round(total), ""])
    figures = {
        "cold": "gateway, before activation (catalogs not fetched yet)",
        "warm": "gateway, before activation (catalogs fetched: directory lists tool names)",
        "after": f"gateway, after activating {len(result['activated'])} tools",
    }
    for key, label in figures.items():
        r = result[key]
        rows.append([label, len(r["tools"]), round(tokens(r)), f"{1 - tokens(r) / total:.1%}"])
    print(
        table(
            ["tools/list as the host receives it", "tools", "tokens (bytes / 4)", "smaller than direct"],
            rows,
            f"4. Context cost: {len(direct)} reference servers of data/reference_catalogs.json",
        )
    )
    names = sorted(t["name"] for t in result["after"]["tools"])
    print(f"\nafter activation the gateway lists: {', '.join(names)}")
    print(f"list_changed notifications received by the host: {result['list_changed']}\n")
    smaller = 1 - max(tokens(result["cold"]), tokens(result["warm"])) / total
    return [
        f"goal: tools/list before activation at least {GOAL_SMALLER:.0%} smaller than direct -> {smaller:.1%} "
        "(the larger of the two before-activation lists): " + ("MET" if smaller >= GOAL_SMALLER else "MISSED")
    ]


# --------------------------------------------------------------------------- main


async def run(args: argparse.Namespace, devnull: TextIO) -> int:
    print(machine_line())
    print()
    verdicts: list[str] = []
    call_results = [
        await bench_calls(mode, args.calls, args.warmup, args.rounds, args.concurrency, devnull) for mode in args.modes
    ]
    verdicts += report_calls(call_results, args.calls, args.warmup, args.rounds, args.concurrency)
    memory = await bench_memory(args.runs, args.memory_calls, args.quiet_s, args.census, devnull)
    verdicts += report_memory(memory, args.runs, args.memory_calls)
    verdicts += report_context(await bench_context(catalog_servers(args.catalog_servers)))
    verdicts += report_startup(await bench_startup(args.launches))
    verdicts += report_stop(await bench_stop(args.stops))
    print("\n".join(verdicts))
    print()
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=300, help="sequential calls per path and mode (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="warm-up calls per path first (default 30)")
    parser.add_argument("--modes", default="legacy,auto", help="comma-separated protocol modes (default legacy,auto)")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of concurrent calls per path (default 20)")
    parser.add_argument("--concurrency", type=int, default=50, help="calls in flight per round (default 50)")
    parser.add_argument("--runs", type=int, default=2, help="memory runs of each process (default 2)")
    parser.add_argument("--memory-calls", type=int, default=50, help="calls before memory is read (default 50)")
    parser.add_argument("--catalog-servers", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--launches", type=int, default=20, help="start-up launches per process and era (default 20)")
    parser.add_argument("--stops", type=int, default=10, help="gateways stopped with SIGINT (default 10)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 20 calls, 3 rounds, auto only, 1 memory run without the import count, 1 reference server",
    )
    args = parser.parse_args(argv)
    args.census, args.quiet_s = True, 1.0
    if args.quick:
        args.calls, args.warmup, args.rounds, args.runs, args.memory_calls, args.modes = 20, 5, 3, 1, 10, "auto"
        args.catalog_servers, args.census, args.quiet_s, args.launches, args.stops = 1, False, 0.3, 2, 1
        print("--quick: a smoke run; too few samples for the verdicts below to mean anything\n")
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if min(args.calls, args.rounds, args.concurrency, args.runs) < 1 or not args.modes:
        parser.error("--calls, --rounds, --concurrency and --runs must be at least 1, --modes not empty")
    if not set(args.modes) <= {"legacy", "auto"}:
        parser.error("--modes is a list of legacy, auto")
    with open(os.devnull, "w") as devnull:  # the servers' and the gateway's stderr
        return asyncio.run(run(args, devnull))


if __name__ == "__main__":
    sys.exit(main())
