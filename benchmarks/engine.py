"""K clients on one workspace and six real stdio servers: today's sidecars, the per-user engine, and mcp-hub.

Issue 33. Side by side in one run, one setup after the other (fresh processes, home and runtime
directory for each):

  * today (`MCP_SIDECAR_ENGINE=off`): every client's sidecar is its own process with its own six
    servers;
  * the engine (`MCP_SIDECAR_ENGINE=on`): every client starts a front; the first one starts the
    engine (`python -m mcp_sidecar engine`, detached, found through /proc by its runtime
    directory), which serves every front over one shared state;
  * mcp-hub 4.2.1 (the anchor): one hub with the six servers, K REST clients.

Clients are launched one at a time, alternately an editor (`python -m mcp_sidecar`, LSP) and a
gateway host (`python -m mcp_sidecar mcp`, the SDK's `Client`), so K = 1 is one editor and every
even K is half of each; the K-th client is launched once the K-1 before it have made their six
calls and are idle (`_engine_clients.py` says what each kind does and which answer counts as its
first tool list). With all K attached and idle (total RSS settled), /proc gives: the processes
(fronts, engine or hub, servers), total RSS and total PSS (`/proc/PID/smaps_rollup`), each front's
RSS and the engine's.

Then, with the engine's K clients still attached (engine running, catalogs known, servers up): warm
attaches, one editor and one gateway at a time, each to its first tool list and its six calls,
checking that no server process was started; and the call latency of `echo` on server-everything
through an editor front and the engine against today's in-process sidecar (interleaved, as
call_latency.py measures, with `mcp/activeTools` as the hop alone).

Goals (issue 33): at the largest K (6), processes = 6 servers + 1 engine + K fronts; total PSS at
most 1.5x that of K = 1; a front's RSS at most 20 MB; a warm attach's first tool list under 100 ms
(median) starting no server; a call through front and engine at most 0.3 ms over in-process at p50.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from _common import RawClient, Summary, machine_line, mib, now, table, write_config
from _engine_clients import (
    CLOSE_LIMIT_S,
    Attached,
    Census,
    attach_editor,
    attach_gateway,
    attach_rest,
    census,
    engines,
    missing_servers,
    open_editor,
    settled,
    six_servers,
)
from _hub import HUB_CLI, cpu_seconds, reap_leftovers, start_hub
from call_latency import _measure

MODES = ("off", "on", "hub")
LABELS = {"off": "today (engine off)", "on": "engine", "hub": "mcp-hub 4.2.1"}
GOAL_PSS_RATIO = 1.5
GOAL_FRONT_MIB = 20.0
GOAL_WARM_MS = 100.0
GOAL_ADDED_MS = 0.3
GRACE_S = "2"


# --------------------------------------------------------------------------- setups


@contextlib.contextmanager
def setup() -> Iterator[tuple[Path, Path]]:
    """A temp dir (home, workspace, server data) and a runtime directory short enough for a socket's name."""
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        run = Path(tempfile.mkdtemp(prefix="rt-"))
        try:
            for name in ("home", "workspace", "data", "hub"):
                (Path(tmp) / name).mkdir()
            yield Path(tmp), run
        finally:
            shutil.rmtree(run, ignore_errors=True)


def mode_env(home: Path, run: Path, engine: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        MCP_SIDECAR_HOME=str(home),
        XDG_RUNTIME_DIR=str(run),
        MCP_SIDECAR_ENGINE=engine,
        MCP_SIDECAR_ENGINE_GRACE=GRACE_S,
    )
    return env


async def seed_code_cache(home: Path, run: Path, workspace: Path) -> None:
    """One untimed in-process start: the start-up code cache a user's sidecar has after its first start."""
    client = await open_editor(mode_env(home, run, "off"), workspace)
    await client.close(CLOSE_LIMIT_S)


async def engine_gone(run: Path, limit_s: float = 30) -> list[int]:
    """Wait for the engine to exit after its grace period; kill (by pid) one that stays. Returns the pids killed."""
    for _ in range(int(limit_s * 10)):  # not our child: nothing to await but its absence from /proc
        if not engines(run):
            break
        await asyncio.sleep(0.1)
    stuck = engines(run)
    for pid in stuck:
        servers = census({pid: "engine"}).pids("server")
        os.kill(pid, signal.SIGKILL)
        await reap_leftovers(servers)
    return stuck


def snapshot(found: Census, last: Attached) -> dict[str, Any]:
    fronts = {role: [mib(found.rss_kb[pid]) for pid in found.pids(role)] for role in ("editor", "gateway")}
    engine = found.pids("engine") or found.pids("hub")
    return {
        "processes": len(found.roles),
        "servers": len(found.pids("server")),
        "engines": len(found.pids("engine")),
        "rss": mib(found.rss()),
        "pss": mib(found.pss()),
        "editor": max(fronts["editor"], default=None),
        "gateway": max(fronts["gateway"], default=None),
        "engine": mib(found.rss_kb[engine[0]]) if engine else None,
        "kind": last.kind,
        "first": last.first_tools_s,
        "calls": last.calls_s,
    }


async def run_sidecar(mode: str, ks: list[int], warm: int, quiet_s: float, devnull: TextIO) -> dict[str, Any]:
    """Today's mode (`off`) or the engine (`on`): K clients, a snapshot at each K; warm attaches with the engine."""
    with setup() as (tmp, run):
        home, workspace = tmp / "home", tmp / "workspace"
        servers = six_servers(workspace, tmp / "data")
        write_config(home, {s.name: s.entry for s in servers})
        await seed_code_cache(home, run, workspace)
        env = mode_env(home, run, mode)
        attached: list[Attached] = []
        result: dict[str, Any] = {"snapshots": {}, "warm": [], "killed": []}

        def product() -> dict[int, str]:
            roles = {c.pid: c.kind for c in attached if c.pid is not None}
            return roles | dict.fromkeys(engines(run), "engine")

        try:
            for k in range(1, max(ks) + 1):
                if k % 2:
                    attached.append(await attach_editor(env, workspace, servers))
                else:
                    attached.append(await attach_gateway(env, workspace, servers, devnull))
                if k in ks:
                    found = await settled(product, quiet_s, limit_s=max(10.0, quiet_s * 10))
                    result["snapshots"][k] = snapshot(found, attached[-1])
            if mode == "on":
                result["warm"] = await warm_attaches(warm, env, workspace, servers, run, devnull)
        finally:
            for client in reversed(attached):
                with contextlib.suppress(Exception):
                    await client.release()
            if mode == "on":
                result["killed"] = await engine_gone(run)
    return result


async def warm_attaches(
    count: int, env: dict[str, str], workspace: Path, servers: Any, run: Path, devnull: TextIO
) -> list[dict[str, Any]]:
    """`count` editors and `count` gateways, one at a time, each released before the next."""
    found: list[dict[str, Any]] = []
    for i in range(2 * count):
        before = set(census(dict.fromkeys(engines(run), "engine")).pids("server"))
        if i % 2 == 0:
            client = await attach_editor(env, workspace, servers)
        else:
            client = await attach_gateway(env, workspace, servers, devnull)
        after = set(census(dict.fromkeys(engines(run), "engine")).pids("server"))
        await client.release()
        started = len(after - before)
        found.append(
            {
                "kind": client.kind,
                "opened": client.opened_s,
                "first": client.first_tools_s,
                "calls": client.calls_s,
                "started": started,
            }
        )
    return found


async def run_hub(ks: list[int], node: str, quiet_s: float) -> dict[str, Any]:
    with setup() as (tmp, _):
        servers = six_servers(tmp / "workspace", tmp / "data")
        start = now()
        hub, _timings = await start_hub(node, {s.name: s.entry for s in servers}, tmp / "hub")
        attached: list[Attached] = []
        result: dict[str, Any] = {"snapshots": {}}
        try:
            for k in range(1, max(ks) + 1):
                attached.append(await attach_rest(hub, servers, start if k == 1 else None))
                if k in ks:
                    found = await settled(lambda: {hub.pid: "hub"}, quiet_s, limit_s=max(10.0, quiet_s * 10))
                    result["snapshots"][k] = snapshot(found, attached[-1])
        finally:
            for client in attached:
                await client.release()
            await hub.close()
    return result


async def cpu_quiet(pids: list[int], limit_s: float = 20.0) -> None:
    """Wait (bounded) until the processes used at most 2 % of a CPU for a second: their start-up work done."""
    for _ in range(int(limit_s)):
        before = sum(cpu_seconds(pid) for pid in pids)
        await asyncio.sleep(1.0)
        if sum(cpu_seconds(pid) for pid in pids) - before <= 0.02:
            return


async def measured(
    series: dict[str, Callable[[], Awaitable[None]]], calls: int, pids: dict[str, int]
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """call_latency.py's interleaved measure, and each process's CPU per call (µs) over it."""
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    samples = await _measure(series, calls)
    return samples, {name: (cpu_seconds(pid) - before[name]) / calls * 1e6 for name, pid in pids.items()}


async def call_latency(calls: int, warmup: int) -> dict[str, Any]:
    """`echo` on server-everything through an editor front + the engine and through today's sidecar, interleaved;
    then `mcp/activeTools` (the hop alone) the same way."""
    with setup() as (tmp, run):
        home, workspace = tmp / "home", tmp / "workspace"
        everything = six_servers(workspace, tmp / "data")[0]
        write_config(home, {everything.name: everything.entry})
        await seed_code_cache(home, run, workspace)
        clients: dict[str, RawClient] = {}
        try:
            for mode in ("off", "on"):
                clients[mode] = await open_editor(mode_env(home, run, mode), workspace)
                await clients[mode].request("mcp/activate", {"ids": [everything.id]})

            def call(client: RawClient) -> Callable[[], Awaitable[None]]:
                async def echo() -> None:
                    params = {"id": everything.id, "arguments": everything.arguments}
                    result = await client.request("mcp/callTool", params)
                    if result.get("isError") or result["content"][0]["text"] != "Echo: hello":
                        raise RuntimeError(f"unexpected answer: {result}")

                return echo

            def hop(client: RawClient) -> Callable[[], Awaitable[None]]:
                async def active() -> None:
                    await client.request("mcp/activeTools", {})

                return active

            echoes = {"in-process": call(clients["off"]), "front+engine": call(clients["on"])}
            hops = {"in-process hop": hop(clients["off"]), "front+engine hop": hop(clients["on"])}
            for _ in range(warmup):
                for fn in (*echoes.values(), *hops.values()):
                    await fn()
            [engine] = engines(run)
            pids = {"sidecar": clients["off"].pid, "front": clients["on"].pid, "engine": engine}
            await cpu_quiet([*pids.values(), *census({engine: "engine"}).pids("server")])
            echo_samples, echo_cpu = await measured(echoes, calls, pids)
            hop_samples, hop_cpu = await measured(hops, calls, pids)
            return {"samples": echo_samples | hop_samples, "cpu": {"echo": echo_cpu, "hop": hop_cpu}}
        finally:
            for client in clients.values():
                await client.close(CLOSE_LIMIT_S)
            await engine_gone(run)


# --------------------------------------------------------------------------- report


def _med(values: list[Any]) -> Any:
    values = [v for v in values if v is not None]
    if not values:
        return None
    if isinstance(values[0], str):
        return values[0]
    return statistics.median(values)


def merged(runs: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each K's figures, the median over runs."""
    ks = runs[0]["snapshots"].keys()
    return {k: {key: _med([r["snapshots"][k][key] for r in runs]) for key in runs[0]["snapshots"][k]} for k in ks}


def _mb(value: float | None, base: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" + (f" ({value / base:.2f}x)" if base else "")


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main_table(results: dict[str, dict[int, dict[str, Any]]], ks: list[int]) -> str:
    rows = []
    for mode in MODES:
        first = results[mode][ks[0]]
        for k in ks:
            fig = results[mode][k]
            base = None if k == ks[0] else (first["rss"], first["pss"])
            rows.append(
                [
                    LABELS[mode],
                    k,
                    fig["processes"],
                    fig["servers"],
                    _mb(fig["rss"], base and base[0]),
                    _mb(fig["pss"], base and base[1]),
                    _mb(fig["editor"]),
                    _mb(fig["gateway"]),
                    _mb(fig["engine"]),
                    fig["kind"],
                    _s(fig["first"]),
                    _s(fig["calls"]),
                ]
            )
    headers = [
        "setup",
        "K",
        "processes",
        "servers",
        "total RSS",
        "total PSS",
        "editor front RSS",
        "gateway front RSS",
        "engine/hub RSS",
        "K-th client",
        "its first tool list (s)",
        "its six calls (s)",
    ]
    title = "K clients attached and idle (MiB; ratio to K = 1; front RSS is the largest of its kind)"
    return table(headers, rows, title)


def warm_table(warm: list[dict[str, Any]]) -> tuple[str, dict[str, float]]:
    rows, medians = [], {}
    for kind in ("editor", "gateway"):
        mine = [w for w in warm if w["kind"] == kind]
        if not mine:
            continue
        opened = Summary.of([w["opened"] * 1000 for w in mine])
        first = Summary.of([w["first"] * 1000 for w in mine])
        calls = Summary.of([w["calls"] * 1000 for w in mine])
        medians[kind] = first.median
        started = sum(w["started"] for w in mine)
        rows.append(
            [kind, first.n, opened.median, first.min, first.median, first.max, calls.median, calls.max, started]
        )
    headers = [
        "front",
        "n",
        "initialize median",
        "first tools min",
        "median",
        "max",
        "six calls median",
        "max",
        "servers started",
    ]
    return table(headers, rows, "Warm attach to the running engine (ms)"), medians


def latency_table(latency: dict[str, Any]) -> tuple[str, float]:
    samples, cpu = latency["samples"], latency["cpu"]
    rows = []
    for name, values in samples.items():
        s = Summary.of(values)
        spent = cpu["hop" if name.endswith("hop") else "echo"]
        where = (
            f"{spent['sidecar']:.0f}"
            if name.startswith("in-process")
            else (f"{spent['front'] + spent['engine']:.0f} (front {spent['front']:.0f}, engine {spent['engine']:.0f})")
        )
        rows.append([name, s.n, s.min, s.median, s.p95, where])
    added = statistics.median(samples["front+engine"]) - statistics.median(samples["in-process"])
    hop = statistics.median(samples["front+engine hop"]) - statistics.median(samples["in-process hop"])
    headers = ["path", "n", "min", "median", "p95", "CPU per call (µs)"]
    text = table(headers, rows, "echo on server-everything, then mcp/activeTools (the hop alone), ms")
    return text + f"\nadded by front + engine at the median: echo {added:+.3f} ms, hop {hop:+.3f} ms", added


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def goals(results: dict[str, dict[int, dict[str, Any]]], ks: list[int], warm: dict[str, float], added: float) -> str:
    on, top = results["on"], max(ks)
    want = 6 + 1 + top
    fronts = [v for k in ks for v in (on[k]["editor"], on[k]["gateway"]) if v is not None]
    ratio = on[top]["pss"] / on[ks[0]]["pss"]
    lines = [
        f"goal: K = {top} processes = 6 servers + 1 engine + {top} fronts = {want}: {on[top]['processes']} "
        f"({on[top]['servers']} servers, {on[top]['engines']} engine) {verdict(on[top]['processes'] == want)}",
        f"goal: K = {top} total PSS at most {GOAL_PSS_RATIO}x K = {ks[0]}: {ratio:.2f}x {verdict(ratio <= 1.5)}",
        f"goal: a front's RSS at most {GOAL_FRONT_MIB:.0f} MiB: largest {max(fronts):.1f} MiB "
        f"{verdict(max(fronts) <= GOAL_FRONT_MIB)}",
    ]
    lines += [
        f"goal: warm attach, {kind}'s first tool list under {GOAL_WARM_MS:.0f} ms median: {ms:.0f} ms "
        f"{verdict(ms < GOAL_WARM_MS)}"
        for kind, ms in warm.items()
    ]
    lines.append(f"goal: call +{GOAL_ADDED_MS} ms p50 at most: {added:+.3f} ms {verdict(added <= GOAL_ADDED_MS)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


async def run(args: argparse.Namespace, ks: list[int], devnull: TextIO) -> int:
    runs, warm, calls, warmup, node, quiet_s = args.runs, args.warm, args.calls, args.warmup, args.node, args.quiet
    print(machine_line())
    print(f"K = {', '.join(map(str, ks))}; {runs} run(s); six stdio servers; {warm} warm attaches of each front\n")
    collected: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    started = now()
    for i in range(runs):
        for mode in MODES if i % 2 == 0 else MODES[::-1]:
            begin = now()
            if mode == "hub":
                collected[mode].append(await run_hub(ks, node, quiet_s))
            else:
                collected[mode].append(await run_sidecar(mode, ks, warm, quiet_s, devnull))
            print(f"  run {i + 1}: {LABELS[mode]} {now() - begin:.1f} s", flush=True)
    latency = await call_latency(calls, warmup)
    results = {mode: merged(collected[mode]) for mode in MODES}
    print()
    print(main_table(results, ks))
    print()
    warm_text, warm_medians = warm_table([w for r in collected["on"] for w in r["warm"]])
    print(warm_text)
    print()
    latency_text, added = latency_table(latency)
    print(latency_text)
    killed = [pid for r in collected["on"] for pid in r["killed"]]
    if killed:
        print(f"\nthe engine did not exit within 30 s of its last front (grace {GRACE_S} s): killed {killed}")
    print()
    print(goals(results, ks, warm_medians, added))
    top = max(ks)
    print(
        f"summary: K={top} engine {results['on'][top]['processes']} processes, "
        f"PSS {results['on'][top]['pss']:.0f} MiB vs off {results['off'][top]['pss']:.0f} MiB; "
        f"warm first tools {', '.join(f'{k} {v:.0f} ms' for k, v in warm_medians.items())}; call {added:+.2f} ms"
    )
    print(f"\n{now() - started:.0f} s in all")
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ks", default="1,2,4,6", help="numbers of clients (default 1,2,4,6)")
    parser.add_argument("--runs", type=int, default=1, help="repetitions of every setup (default 1)")
    parser.add_argument("--warm", type=int, default=10, help="warm attaches of each front kind (default 10)")
    parser.add_argument("--calls", type=int, default=1000, help="measured calls of each path (default 1000)")
    parser.add_argument("--warmup", type=int, default=30, help="warm-up echo calls (default 30)")
    parser.add_argument("--quiet", type=float, default=1.0, help="seconds of stable RSS before a census (1.0)")
    parser.add_argument("--node", default="node", help="node for mcp-hub and the npm servers")
    parser.add_argument("--quick", action="store_true", help="smoke run: K = 1, 2; 2 warm attaches; 30 calls")
    args = parser.parse_args(argv)
    if args.quick:
        args.ks, args.runs, args.warm, args.calls, args.warmup, args.quiet = "1,2", 1, 2, 30, 5, 0.3
    ks = sorted({int(k) for k in args.ks.split(",")})
    if ks[0] < 1 or args.runs < 1 or args.warm < 1 or args.calls < 1:
        parser.error("--ks, --runs, --warm and --calls must be at least 1")
    missing = missing_servers() + ([] if HUB_CLI.is_file() else [HUB_CLI])
    if missing or shutil.which(args.node) is None:
        print(f"missing: {', '.join(map(str, missing)) or args.node}; run ./scripts/setup --test", file=sys.stderr)
        return 1
    with open(os.devnull, "w") as devnull:  # the gateways' stderr
        return asyncio.run(run(args, ks, devnull))


if __name__ == "__main__":
    sys.exit(main())
