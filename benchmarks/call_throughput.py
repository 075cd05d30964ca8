"""Concurrent `mcp/callTool` throughput and memory with 10 servers: the sidecar against a direct SDK client.

Both figures are measured side by side in one run, against the same server,
tests/fixtures/servers/basic.py over stdio:

1. Throughput, per protocol mode (`auto`, `legacy`: the `protocol` field of the sidecar's
   mcp.json entry and the `mode=` of the direct client):
     * sidecar: `python -m mcp_sidecar` (temp MCP_SIDECAR_HOME whose mcp.json points at basic.py),
       driven by the raw LSP client `_common.RawClient`; `mcp/activate {ids: ["basic.echo"]}`,
       then `mcp/callTool {id: "basic.echo", arguments: {text: "hello"}}`;
     * direct: an SDK `mcp.Client` over stdio to its own basic.py process, `call_tool("echo", ...)`.
   After warm-up rounds, R rounds (default 20) of 50 calls sent at once (`asyncio.gather`) on each
   path, the path that goes first alternating every round; calls per second of each round, median
   over rounds, and the ratio sidecar / direct. For attribution, the CPU per call (utime + stime
   from /proc/PID/stat, summed over the measured rounds) of the client process (this script: the
   raw LSP client on the sidecar path, the SDK client on the direct path; only one path runs at a
   time), the sidecar process and the basic.py server of each path.
2. Memory: VmRSS/VmHWM (from /proc/PID/status) of the client-side process only, never of the
   servers, with 10 basic.py stdio servers connected (median of --runs, default 3), after settling
   (RSS unchanged for 1 s):
     * the sidecar with 10 entries in mcp.json, after `mcp/server/tools` on each,
       `mcp/activate` of every `echo` and one `mcp/callTool` each; once as users run it and once
       with MCP_SIDECAR_SEMANTIC=0 (the semantic ranking off: numpy and the embedding model are
       not loaded at `initialize`), so the cost of numpy is visible;
     * a bare SDK client process (this file run with `--bare-client 10`) holding 10 `mcp.Client`
       sessions to 10 basic.py processes, after `list_tools` and one `echo` call on each.
   The three processes alternate which one goes first in each run.

Goals (issue): throughput at 50 concurrent calls at least 0.6x direct; the sidecar's RSS with 10
connected servers at most 1.2x the bare SDK client process's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from _bare_client import stdin_line
from _common import (
    BASIC_SERVER,
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
from _hub import cpu_seconds
from memory import settle

GOAL_THROUGHPUT = 0.6
GOAL_RSS = 1.2
ARGUMENTS = {"text": "hello"}
CALL_TIMEOUT_S = 30.0
"""Per call on the direct path (the sidecar's default tool-call timeout for stdio servers)."""
ROUND_TIMEOUT_S = 120.0
"""One round of concurrent calls on one path."""
START_TIMEOUT_S = 120.0
"""A process's start-up: the sidecar's answers before the calls, the bare client's `ready`."""
STOP_TIMEOUT_S = 15.0
SETTLE_S = 1.0
SEMANTIC_ENV = "MCP_SIDECAR_SEMANTIC"
THIS_FILE = Path(__file__).resolve()


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _basic_servers(pids: list[int]) -> list[int]:
    return [pid for pid in pids if str(BASIC_SERVER) in _cmdline(pid)]


def _maps_numpy(pid: int) -> bool:
    """Whether numpy's extension modules are mapped into the process."""
    try:
        return "/numpy/" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


# --------------------------------------------------------------------------- 1: throughput


@dataclass
class Lane:
    """One path's calls and the CPU of the processes on it (the client is this process)."""

    call: Callable[[], Awaitable[None]]
    pids: dict[str, int]
    rates: list[float] = field(default_factory=list)
    cpu: Counter[str] = field(default_factory=Counter)
    calls: int = 0

    def _cpu(self) -> dict[str, float]:
        return {"client": time.process_time(), **{label: cpu_seconds(pid) for label, pid in self.pids.items()}}

    async def burst(self, n: int, record: bool) -> None:
        before = self._cpu()
        start = now()
        await asyncio.wait_for(asyncio.gather(*(self.call() for _ in range(n))), ROUND_TIMEOUT_S)
        elapsed = now() - start
        after = self._cpu()
        if record:
            self.rates.append(n / elapsed)
            self.cpu.update({k: after[k] - before[k] for k in after})
            self.calls += n

    def cpu_ms(self) -> dict[str, float]:
        return {k: v / self.calls * 1000 for k, v in self.cpu.items()}


async def _rounds(lanes: dict[str, Lane], rounds: int, concurrency: int, record: bool) -> None:
    names = list(lanes)
    for round_no in range(rounds):
        for name in names if round_no % 2 == 0 else names[::-1]:
            await lanes[name].burst(concurrency, record)


async def bench_throughput(
    mode: str, rounds: int, warmup: int, concurrency: int, devnull: TextIO, on_ready: Callable[[int], None] | None
) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {"basic": basic_server_entry(mode)})
        sidecar = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
        try:
            await sidecar.initialize(initialized=True)
            activated = await sidecar.request("mcp/activate", {"ids": ["basic.echo"]}, limit_s=START_TIMEOUT_S)
            if activated["results"][0]["status"] == "not loaded":
                raise RuntimeError(f"activation failed: {activated['results'][0]}")
            info = await sidecar.request("mcp/server/get", {"server": "basic"}, limit_s=START_TIMEOUT_S)
            sidecar_server = _basic_servers(descendants(sidecar.pid))
            if len(sidecar_server) != 1:
                raise RuntimeError(f"expected one basic.py under the sidecar, found {sidecar_server}")

            params = StdioServerParameters(command=PYTHON, args=[str(BASIC_SERVER), "stdio"], env=dict(os.environ))
            transport = stdio_client(params, errlog=devnull)
            async with Client(transport, mode=mode, cache=None, read_timeout_seconds=60) as direct:
                ours = set(descendants(sidecar.pid)) | {sidecar.pid}
                direct_server = _basic_servers([p for p in descendants(os.getpid()) if p not in ours])
                if len(direct_server) != 1:
                    raise RuntimeError(f"expected one direct basic.py, found {direct_server}")

                async def via_sidecar() -> None:
                    result = await sidecar.request(
                        "mcp/callTool", {"id": "basic.echo", "arguments": ARGUMENTS}, limit_s=CALL_TIMEOUT_S
                    )
                    if result.get("isError") or result["content"][0]["text"] != "hello":
                        raise RuntimeError(f"unexpected sidecar result: {result}")

                async def via_direct() -> None:
                    result = await direct.call_tool("echo", ARGUMENTS, read_timeout_seconds=CALL_TIMEOUT_S)
                    if result.is_error or result.content[0].text != "hello":  # type: ignore[union-attr]
                        raise RuntimeError(f"unexpected direct result: {result}")

                lanes = {
                    "sidecar": Lane(via_sidecar, {"sidecar": sidecar.pid, "server": sidecar_server[0]}),
                    "direct": Lane(via_direct, {"server": direct_server[0]}),
                }
                await _rounds(lanes, warmup, concurrency, record=False)
                if on_ready is not None:  # a profiler attaches here (not used by the benchmark itself)
                    on_ready(sidecar.pid)
                await _rounds(lanes, rounds, concurrency, record=True)
                negotiated = {"sidecar": info["protocol"]["negotiated"], "direct": direct.protocol_version}
        finally:
            await sidecar.close(STOP_TIMEOUT_S)
    return {"mode": mode, "lanes": lanes, "negotiated": negotiated}


def report_throughput(results: list[dict[str, Any]], rounds: int, warmup: int, concurrency: int) -> list[str]:
    rate_rows: list[list[Any]] = []
    cpu_rows: list[list[Any]] = []
    verdicts: list[str] = []
    for r in results:
        mode, lanes = r["mode"], r["lanes"]
        medians = {}
        for name, label in (("sidecar", "sidecar mcp/callTool"), ("direct", "direct mcp.Client.call_tool")):
            s = Summary.of(lanes[name].rates)
            medians[name] = s.median
            rate_rows.append([mode, label, r["negotiated"][name], s.n, s.min, s.median, s.max])
            cpu = lanes[name].cpu_ms()
            values = [cpu.get(k) for k in ("client", "sidecar", "server")]
            cells = ["-" if v is None else f"{v:.2f}" for v in values]
            cpu_rows.append([mode, label, *cells, f"{sum(v or 0 for v in values):.2f}"])
        ratio = medians["sidecar"] / medians["direct"]
        rate_rows.append([mode, "sidecar / direct (medians)", "", "", "", f"{ratio:.2f}x", ""])
        verdicts.append(
            f"goal ({mode}): throughput at {concurrency} concurrent calls at least {GOAL_THROUGHPUT}x direct -> "
            f"{ratio:.2f}x: " + ("MET" if ratio >= GOAL_THROUGHPUT else "MISSED")
        )
    title = f"1. Throughput: {rounds} rounds of {concurrency} concurrent echo calls per path (calls per second)"
    print(table(["mode", "path", "negotiated", "rounds", "min", "median", "max"], rate_rows, title))
    print()
    print(
        table(
            ["mode", "path", "client", "sidecar", "server", "total"],
            cpu_rows,
            "CPU per call by process (ms of utime + stime; client = this script, which runs one path at a time)",
        )
    )
    print(f"\nafter {warmup} warm-up round(s) per path; the path that goes first alternates every round.\n")
    return verdicts


# --------------------------------------------------------------------------- 2: memory


async def sidecar_memory(servers: int, semantic: bool) -> dict[str, Any]:
    names = [f"basic{i:02d}" for i in range(1, servers + 1)]
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {name: basic_server_entry("auto", timeout_ms=120_000) for name in names})
        env = sidecar_env(home)
        env[SEMANTIC_ENV] = "1" if semantic else "0"
        client = await RawClient.start(SIDECAR_ARGV, env=env, cwd=ROOT)
        try:
            await client.initialize(initialized=True)
            listings = await asyncio.gather(
                *(client.request("mcp/server/tools", {"server": n}, limit_s=START_TIMEOUT_S) for n in names)
            )
            if any(not listing["tools"] for listing in listings):
                raise RuntimeError("a server listed no tools")
            ids = [f"{n}.echo" for n in names]
            activated = await client.request("mcp/activate", {"ids": ids}, limit_s=START_TIMEOUT_S)
            if any(r["status"] == "not loaded" for r in activated["results"]):
                raise RuntimeError(f"an activation failed: {activated['results']}")
            for tool_id in ids:
                result = await client.request(
                    "mcp/callTool", {"id": tool_id, "arguments": ARGUMENTS}, limit_s=CALL_TIMEOUT_S
                )
                if result.get("isError"):
                    raise RuntimeError(f"{tool_id} failed: {result}")
            status = await client.request("mcp/status", {})
            connected = sum(1 for row in status["servers"] if row["state"] == "connected")
            return await _snapshot(client.pid, connected)
        finally:
            await client.close(STOP_TIMEOUT_S)


async def _snapshot(pid: int, connected: int) -> dict[str, Any]:
    """A client-side process's memory once it is quiet, and the servers it holds."""
    await settle(pid, SETTLE_S)
    return {
        "self": proc_status(pid),
        "numpy": _maps_numpy(pid),
        "connected": connected,
        "servers": len(_basic_servers(descendants(pid))),
    }


async def bare_memory(servers: int) -> dict[str, Any]:
    argv = [PYTHON, str(THIS_FILE), "--bare-client", str(servers), "--mode", "auto"]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT_S)
        if line.strip() != b"ready":
            raise RuntimeError(f"the bare client did not get ready: {line!r}")
        return await _snapshot(proc.pid, servers)
    finally:
        with contextlib.suppress(Exception):
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


MEMORY_SIDES = ("sidecar", "sidecar_nosemantic", "bare")
LABELS = {"sidecar": "sidecar", "sidecar_nosemantic": f"sidecar {SEMANTIC_ENV}=0", "bare": "bare client"}


async def bench_memory(runs: int, servers: int) -> dict[str, list[dict[str, Any]]]:
    measure: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
        "sidecar": lambda: sidecar_memory(servers, semantic=True),
        "sidecar_nosemantic": lambda: sidecar_memory(servers, semantic=False),
        "bare": lambda: bare_memory(servers),
    }
    found: dict[str, list[dict[str, Any]]] = {side: [] for side in MEMORY_SIDES}
    for run_no in range(runs):  # rotate which one goes first
        shift = run_no % len(MEMORY_SIDES)
        for side in MEMORY_SIDES[shift:] + MEMORY_SIDES[:shift]:
            found[side].append(await measure[side]())
    return found


def report_memory(found: dict[str, list[dict[str, Any]]], runs: int, servers: int) -> list[str]:
    def values(side: str, key: str) -> list[float]:
        return [mib(r["self"].get(key, 0)) for r in found[side]]

    rss = {side: statistics.median(values(side, "VmRSS")) for side in MEMORY_SIDES}
    hwm = {side: statistics.median(values(side, "VmHWM")) for side in MEMORY_SIDES}
    ratio = {side: rss[side] / rss["bare"] for side in MEMORY_SIDES}
    rows: list[list[Any]] = [
        ["VmRSS (median)", *(rss[s] for s in MEMORY_SIDES)],
        ["VmHWM, peak (median)", *(hwm[s] for s in MEMORY_SIDES)],
        ["VmRSS range", *(f"{min(values(s, 'VmRSS')):.1f}-{max(values(s, 'VmRSS')):.1f}" for s in MEMORY_SIDES)],
        ["VmRSS / bare client", *(f"{ratio[s]:.2f}x" for s in MEMORY_SIDES)],
    ]
    headers = ["MiB", "sidecar", f"sidecar, {SEMANTIC_ENV}=0", f"bare SDK client, {servers} sessions"]
    title = (
        f"2. Resident memory of the client-side process with {servers} basic.py servers connected (median of {runs})"
    )
    print(table(headers, rows, title))
    numpy = {s: "/".join(sorted({"yes" if r["numpy"] else "no" for r in found[s]})) for s in MEMORY_SIDES}
    print("\nnumpy mapped: " + ", ".join(f"{LABELS[s]} {numpy[s]}" for s in MEMORY_SIDES))
    counts = {s: f"{min(r['connected'] for r in found[s])}/{min(r['servers'] for r in found[s])}" for s in MEMORY_SIDES}
    found_line = ", ".join(f"{LABELS[s]} {counts[s]}" for s in MEMORY_SIDES)
    print(f"servers connected / basic.py processes found (min over runs): {found_line}")
    print(f"numpy and the model: {rss['sidecar'] - rss['sidecar_nosemantic']:.1f} MiB of the sidecar's VmRSS\n")
    return [
        f"goal: sidecar RSS with {servers} servers at most {GOAL_RSS}x a bare SDK client process -> "
        f"{ratio['sidecar']:.2f}x: "
        + ("MET" if ratio["sidecar"] <= GOAL_RSS else "MISSED")
        + f" ({SEMANTIC_ENV}=0: {ratio['sidecar_nosemantic']:.2f}x)"
    ]


# --------------------------------------------------------------------------- the bare client process


def bare_client(sessions: int, mode: str) -> int:
    """Hold `sessions` SDK sessions to basic.py processes; `ready` on stdout; wait for stdin to close."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run(devnull: TextIO) -> None:
        stop = asyncio.Event()
        all_ready = asyncio.Event()
        opened = 0

        async def session() -> None:
            nonlocal opened
            params = StdioServerParameters(command=PYTHON, args=[str(BASIC_SERVER), "stdio"], env=dict(os.environ))
            transport = stdio_client(params, errlog=devnull)
            async with Client(transport, mode=mode, cache=None, read_timeout_seconds=60) as client:
                await client.list_tools()
                result = await client.call_tool("echo", ARGUMENTS, read_timeout_seconds=CALL_TIMEOUT_S)
                if result.is_error:
                    raise RuntimeError("echo failed")
                opened += 1
                if opened == sessions:
                    all_ready.set()
                await stop.wait()

        async def announce() -> None:
            try:
                await asyncio.wait_for(all_ready.wait(), START_TIMEOUT_S)
                sys.stdout.write("ready\n")
                sys.stdout.flush()
                await stdin_line()
            finally:
                stop.set()

        async with asyncio.TaskGroup() as group:
            for _ in range(sessions):
                group.create_task(session())
            group.create_task(announce())

    with open(os.devnull, "w") as devnull:  # the servers' stderr
        asyncio.run(run(devnull))
    return 0


# --------------------------------------------------------------------------- main


async def run(args: argparse.Namespace, devnull: TextIO) -> int:
    print(machine_line())
    print()
    verdicts: list[str] = []
    results = [
        await bench_throughput(mode, args.rounds, args.warmup, args.concurrency, devnull, None) for mode in args.modes
    ]
    verdicts += report_throughput(results, args.rounds, args.warmup, args.concurrency)
    memory = await bench_memory(args.runs, args.servers)
    verdicts += report_memory(memory, args.runs, args.servers)
    print("\n".join(verdicts))
    print()
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=20, help="measured rounds per path and mode (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up rounds per path first (default 2)")
    parser.add_argument("--concurrency", type=int, default=50, help="calls sent at once per round (default 50)")
    parser.add_argument("--modes", default="auto,legacy", help="comma-separated protocol modes (default auto,legacy)")
    parser.add_argument("--runs", type=int, default=3, help="memory runs of each process (default 3)")
    parser.add_argument("--servers", type=int, default=10, help="connected servers for memory (default 10)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 rounds, 1 warm-up, 1 run, 3 servers")
    parser.add_argument("--bare-client", type=int, metavar="N", help="internal: be the bare client with N sessions")
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto", help="internal: --bare-client's mode")
    args = parser.parse_args(argv)
    if args.bare_client is not None:
        return bare_client(args.bare_client, args.mode)
    if args.quick:
        args.rounds, args.warmup, args.runs, args.servers = 2, 1, 1, 3
        print("--quick: a smoke run; too few samples for the verdicts below to mean anything\n")
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if min(args.rounds, args.concurrency, args.runs, args.servers) < 1 or args.warmup < 0 or not args.modes:
        parser.error("--rounds, --concurrency, --runs and --servers must be at least 1, --modes not empty")
    if not set(args.modes) <= {"legacy", "auto"}:
        parser.error("--modes is a list of legacy, auto")
    with open(os.devnull, "w") as devnull:  # the direct server's stderr
        return asyncio.run(run(args, devnull))


if __name__ == "__main__":
    sys.exit(main())
