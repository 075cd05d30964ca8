"""Resident memory of the sidecar with N connected stdio servers (default 10), and its baselines.

Each run starts the sidecar (`python -m mcp_sidecar`, raw stdio client) with a temp
MCP_SIDECAR_HOME whose mcp.json has N entries pointing at tests/fixtures/servers/basic.py
(stdio), and reads /proc/PID/status (VmRSS = resident now, VmHWM = peak resident) at:
  1. idle after the `initialize` answer (the mcp SDK is not imported yet);
  2. idle after `initialized`, once the background SDK warm-up import has settled;
  3. after `mcp/server/tools` on every server (all N connected, concurrently as the sidecar
     allows), `mcp/activate` of every `echo` and one `mcp/callTool` each.
The N server processes (the sidecar's descendants) are measured separately and summed, so
the sidecar's own cost is clear. A bare pygls LanguageServer after `initialize` is shown as
the floor of any pygls process.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    BARE_ARGV,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    basic_server_entry,
    descendants,
    machine_line,
    mib,
    proc_status,
    sidecar_env,
    table,
    write_config,
)

SETTLE_S = 0.3


async def settle(pid: int, quiet_s: float = 1.0, limit_s: float = 30.0) -> None:
    """Wait until the process's RSS has not changed for quiet_s (bounded by limit_s)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    last = proc_status(pid).get("VmRSS")
    stable_since = loop.time()
    while loop.time() < deadline:
        await asyncio.sleep(0.1)
        current = proc_status(pid).get("VmRSS")
        if current != last:
            last, stable_since = current, loop.time()
        elif loop.time() - stable_since >= quiet_s:
            return


async def bare_baseline() -> dict[str, int]:
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        client = await RawClient.start(BARE_ARGV, env=sidecar_env(Path(tmp)), cwd=ROOT)
        try:
            await client.initialize()
            await asyncio.sleep(SETTLE_S)
            return proc_status(client.pid)
        finally:
            await client.close()


async def one_run(servers: int, protocol: str) -> dict[str, Any]:
    names = [f"basic{i:02d}" for i in range(1, servers + 1)]
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {name: basic_server_entry(protocol, timeout_ms=120_000) for name in names})
        client = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
        try:
            await client.initialize()
            await asyncio.sleep(SETTLE_S)
            after_initialize = proc_status(client.pid)

            client.notify("initialized", {})
            await settle(client.pid)
            after_warmup = proc_status(client.pid)

            listings = await asyncio.gather(*(client.request("mcp/server/tools", {"server": n}) for n in names))
            if any(not listing["tools"] for listing in listings):
                raise RuntimeError("a server listed no tools")
            activated = await client.request("mcp/activate", {"ids": [f"{n}.echo" for n in names]})
            if any(r["status"] == "not loaded" for r in activated["results"]):
                raise RuntimeError("an activation failed")
            for n in names:
                await client.request("mcp/callTool", {"id": f"{n}.echo", "arguments": {"text": "hello"}})
            status = await client.request("mcp/status", {})
            connected = sum(1 for row in status["servers"] if row["state"] == "connected")
            await asyncio.sleep(SETTLE_S)
            after_connect = proc_status(client.pid)
            children = [proc_status(pid) for pid in descendants(client.pid)]
            children = [c for c in children if c]
        finally:
            await client.close()
    return {
        "after_initialize": after_initialize,
        "after_warmup": after_warmup,
        "after_connect": after_connect,
        "connected": connected,
        "children": children,
    }


def _med(values: list[float]) -> float:
    return statistics.median(values)


def _span(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f}"


async def run(runs: int, servers: int, protocol: str) -> int:
    print(machine_line())
    print(f"{runs} run(s), {servers} stdio servers (basic.py, protocol {protocol}); MiB, median over runs\n")
    bare = [await bare_baseline() for _ in range(runs)]
    results = [await one_run(servers, protocol) for _ in range(runs)]

    def col(phase: str, key: str) -> list[float]:
        return [mib(r[phase].get(key, 0)) for r in results]

    rows: list[list[Any]] = []
    bare_rss = [mib(b.get("VmRSS", 0)) for b in bare]
    bare_hwm = [mib(b.get("VmHWM", 0)) for b in bare]
    rows.append(["bare pygls, idle after initialize", _med(bare_rss), _med(bare_hwm), _span(bare_rss)])
    labels = {
        "after_initialize": "sidecar, idle after initialize (no mcp import)",
        "after_warmup": "sidecar, idle after initialized + SDK warm-up",
        "after_connect": f"sidecar, {servers} servers connected + 1 call each",
    }
    for phase, label in labels.items():
        rss, hwm = col(phase, "VmRSS"), col(phase, "VmHWM")
        rows.append([label, _med(rss), _med(hwm), _span(rss)])
    print(table(["process", "VmRSS", "VmHWM (peak)", "VmRSS range"], rows, "Sidecar resident memory (MiB)"))

    child_rss = [mib(sum(c.get("VmRSS", 0) for c in r["children"])) for r in results]
    child_hwm = [mib(sum(c.get("VmHWM", 0) for c in r["children"])) for r in results]
    counts = [len(r["children"]) for r in results]
    connected = [r["connected"] for r in results]
    per_server = [rss / max(count, 1) for rss, count in zip(child_rss, counts, strict=True)]
    sidecar_rss = col("after_connect", "VmRSS")
    sidecar_hwm = col("after_connect", "VmHWM")
    warm_rss = col("after_warmup", "VmRSS")
    per_connection = [(a - b) / servers for a, b in zip(sidecar_rss, warm_rss, strict=True)]
    total = [a + b for a, b in zip(sidecar_rss, child_rss, strict=True)]
    print()
    summary = [
        ["connected servers (mcp/status)", f"{min(connected)}-{max(connected)} of {servers}"],
        ["server processes found (sidecar's descendants)", f"{min(counts)}-{max(counts)}"],
        ["servers: VmRSS sum", f"{_med(child_rss):.1f}"],
        ["servers: VmHWM sum", f"{_med(child_hwm):.1f}"],
        ["servers: VmRSS per process", f"{_med(per_server):.1f}"],
        [f"sidecar: VmRSS with {servers} connected", f"{_med(sidecar_rss):.1f}"],
        [f"sidecar: peak (VmHWM) with {servers} connected", f"{_med(sidecar_hwm):.1f}"],
        ["sidecar: cost per connection (vs idle after warm-up)", f"{_med(per_connection):.2f}"],
        ["sidecar + servers: VmRSS total", f"{_med(total):.1f}"],
    ]
    print(table(["measure", "MiB"], summary, f"With {servers} connected servers"))
    print()
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=2, help="repetitions (default 2)")
    parser.add_argument("--servers", type=int, default=10, help="connected stdio servers (default 10)")
    parser.add_argument("--protocol", choices=("auto", "legacy"), default="auto", help="servers' protocol field")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 run, 2 servers")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.servers = 1, 2
    if args.runs < 1 or args.servers < 1:
        parser.error("--runs and --servers must be at least 1")
    return asyncio.run(run(args.runs, args.servers, args.protocol))


if __name__ == "__main__":
    sys.exit(main())
