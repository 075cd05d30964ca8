"""Part 2 of vs_mcp_hub.py (issue 10): start to the first tool list, sequential calls and memory,
against mcp-hub on 1 or 10 copies of tests/fixtures/servers/basic.py. Not a benchmark itself.

Each run starts, one after the other and with the other one idle, mcp-hub (`_hub.py`, with the
servers' entries) and the sidecar (`python -m mcp_sidecar` with a temp MCP_SIDECAR_HOME whose
mcp.json names the same N servers, driven by the raw stdio JSON-RPC client of _common.py). Like the
hub's marketplace cache, the sidecar's start-up code cache (startup.py: what attrs compiles for
lsprotocol, written by any earlier start) is in place, copied from one untimed start before the
runs; no catalog is cached.

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
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    BASIC_SERVER,
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    Summary,
    basic_server_entry,
    descendants,
    mib,
    now,
    proc_status,
    sidecar_env,
    table,
    write_config,
)
from _hub import (
    ARGUMENTS,
    CALL_LIMIT_S,
    HUB_PACKAGE,
    HUB_PROPOSED_PROTOCOL,
    START_LIMIT_S,
    Hub,
    children_memory,
    cpu_seconds,
    node_version,
    reap_leftovers,
    start_hub,
    stop_watching,
    watch_spawns,
)
from memory import settle


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


def basic_hub_entry() -> dict[str, Any]:
    return {"command": PYTHON, "args": [str(BASIC_SERVER), "stdio"]}


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
                    hub, result["hub_start"] = await start_hub(node, {n: basic_hub_entry() for n in names}, hub_base)
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


async def run(counts: list[int], runs: int, calls: int, warmup: int, node: str, protocol: str, quiet_s: float) -> int:
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
    return 0
