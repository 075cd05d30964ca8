"""mcp-sidecar side by side with mcp-hub (the Node sidecar behind mcphub.nvim) and a direct SDK client.

mcp-hub 4.2.1 comes from benchmarks/node_modules (`_hub.py` says how it is started and driven).
Two parts, both by default:

Part 1, calls (issue 30): three copies of server-everything (tests/node_modules, `node ... stdio`)
behind each of three clients, all three running at once in every run:
  * mcp-sidecar: `python -m mcp_sidecar` with a temp MCP_SIDECAR_HOME naming the three servers
    (`protocol` from --protocol), driven by the raw stdio JSON-RPC client of _common.py;
    `mcp/activate` of the three `echo` tools, then `mcp/callTool`;
  * mcp-hub: the same three servers, `POST /api/servers/tools` on keep-alive connections (one for
    sequential calls, one per call in flight for concurrent ones);
  * direct: three SDK `mcp.Client` sessions in this process (`mode` from --protocol), each to its
    own server-everything, after `list_tools`; `call_tool("echo", ...)`.
  Figures: (a) echo round trip, `echo {"text": "hello"}`, sequential, rotating over the servers,
  the three clients interleaved (the order rotates every call), with CPU per call of the product's
  own process (the sidecar, the hub, or this process for the direct client); (b) calls per second
  with 50 calls in flight (rounds of 50 sent at once, rotating over the servers; the order of the
  clients rotates every round); (c) resident memory of the product's process alone, once settled
  after the calls: the sidecar, the hub, and for the direct client a separate process
  (`_bare_client.py --sessions 3`) that made the same sequential calls and concurrent rounds.
  Medians per run, then the median over runs.

Part 2, start (issue 10, `_hub_start.py`): start to the first tool list, sequential calls and
memory against mcp-hub on 1 or 10 copies of tests/fixtures/servers/basic.py.

Goals (issue 30): echo p50 at most the direct client's + 0.5 ms and below mcp-hub's; calls/s at 50
concurrent at least 0.6x the direct client's and above mcp-hub's; the sidecar's RSS at most 1.2x
the direct client process's. The ratios are printed on `summary:` lines (run_all.py repeats them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from _common import (
    BENCHMARKS,
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    Summary,
    descendants,
    machine_line,
    mib,
    now,
    proc_status,
    sidecar_env,
    table,
    write_config,
)
from _hub import (
    CALL_LIMIT_S,
    HUB_CLI,
    HUB_PACKAGE,
    HUB_PROPOSED_PROTOCOL,
    START_LIMIT_S,
    Hub,
    cpu_seconds,
    node_version,
    reap_leftovers,
    start_hub,
)
from memory import settle

EVERYTHING_JS = ROOT / "tests" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
BARE_CLIENT = BENCHMARKS / "_bare_client.py"
SERVERS = ("everything1", "everything2", "everything3")
LABELS = {"sidecar": "mcp-sidecar", "hub": "mcp-hub 4.2.1", "direct": "direct SDK client", "baseline": "baseline"}
GOAL_ADDED_MS = 0.5
GOAL_THROUGHPUT = 0.6
GOAL_RSS = 1.2
ROUND_LIMIT_S = 120.0
ARGUMENTS = {"message": "hello"}
"""server-everything's `echo` takes `message` and answers `Echo: <message>`."""
EXPECT = "Echo: hello"
STOP_LIMIT_S = 15.0


@dataclass
class Side:
    """One client of the three servers: how it calls, and the process whose CPU and memory count."""

    call: Callable[[str, int], Awaitable[None]]
    """(server, slot): slot is the call's place in a concurrent round (the hub's connection)."""
    pid: int | None
    """None: this process (the direct client), whose CPU is counted around its own calls only."""
    before_round: Callable[[int], Awaitable[None]] | None = None
    samples: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    cpu_s: float = 0.0

    def cpu(self) -> float:
        return time.process_time() if self.pid is None else cpu_seconds(self.pid)


def everything_entry() -> dict[str, Any]:
    return {"command": "node", "args": [str(EVERYTHING_JS), "stdio"]}


# --------------------------------------------------------------------------- the three clients


async def start_sidecar(home: Path, protocol: str, tree: Path | None = None) -> tuple[RawClient, Side, str]:
    """`tree`: another tree's sidecar/ directory, first on PYTHONPATH (an older commit's worktree)."""
    write_config(home, {name: {**everything_entry(), "protocol": protocol} for name in SERVERS})
    env = sidecar_env(home)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    client = await RawClient.start(SIDECAR_ARGV, env=env, cwd=ROOT)
    try:
        await client.initialize(initialized=True)
        ids = [f"{name}.echo" for name in SERVERS]
        activated = await client.request("mcp/activate", {"ids": ids}, limit_s=START_LIMIT_S)
        if any(row["status"] == "not loaded" for row in activated["results"]):
            raise RuntimeError(f"activation failed: {activated['results']}")
        info = await client.request("mcp/server/get", {"server": SERVERS[0]})
    except BaseException:
        await client.close(STOP_LIMIT_S)
        raise

    async def call(server: str, slot: int) -> None:
        params = {"id": f"{server}.echo", "arguments": ARGUMENTS}
        result = await client.request("mcp/callTool", params, limit_s=CALL_LIMIT_S)
        if result.get("isError") or result["content"][0]["text"] != EXPECT:
            raise RuntimeError(f"unexpected sidecar answer: {result}")

    return client, Side(call, client.pid), str(info["protocol"]["negotiated"])


async def hub_side(node: str, base: Path) -> tuple[Hub, Side]:
    hub, _ = await start_hub(node, {name: everything_entry() for name in SERVERS}, base)
    hub.arguments, hub.expect = ARGUMENTS, EXPECT
    await hub.reconnect()

    async def call(server: str, slot: int) -> None:
        await (hub.call(server) if slot < 0 else hub.call_on(hub.pool[slot], server))

    return hub, Side(call, hub.pid, before_round=hub.open_pool)


async def direct_side(stack: contextlib.AsyncExitStack, protocol: str, devnull: TextIO) -> tuple[Side, str]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    clients: dict[str, Any] = {}
    for name in SERVERS:
        params = StdioServerParameters(command="node", args=[str(EVERYTHING_JS), "stdio"], env=dict(os.environ))
        transport = stdio_client(params, errlog=devnull)
        client = Client(transport, mode=protocol, cache=None, read_timeout_seconds=60)  # type: ignore[arg-type]
        clients[name] = await stack.enter_async_context(client)
        await clients[name].list_tools()

    async def call(server: str, slot: int) -> None:
        result = await clients[server].call_tool("echo", ARGUMENTS, read_timeout_seconds=CALL_LIMIT_S)
        if result.is_error or result.content[0].text != EXPECT:
            raise RuntimeError(f"unexpected direct result: {result}")

    return Side(call, None), str(clients[SERVERS[0]].protocol_version)


async def start_bare(protocol: str, calls: int, rounds: int, concurrency: int) -> asyncio.subprocess.Process:
    """The direct client's memory stand-in: three sessions that make the same calls, then wait."""
    argv = [PYTHON, str(BARE_CLIENT), "--mode", protocol, "--sessions", str(len(SERVERS)), "--calls", str(calls)]
    argv += ["--concurrent", str(concurrency), "--rounds", str(rounds), "--argument", "message"]
    argv += ["--", "node", str(EVERYTHING_JS), "stdio"]
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    return proc


async def stop_bare(proc: asyncio.subprocess.Process) -> None:
    pids = descendants(proc.pid)
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), STOP_LIMIT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
    await reap_leftovers(pids)


# --------------------------------------------------------------------------- measuring


def _rotated(names: tuple[str, ...], i: int) -> tuple[str, ...]:
    shift = i % len(names)
    return names[shift:] + names[:shift]


async def sequential(sides: dict[str, Side], calls: int, warmup: int) -> None:
    names = tuple(sides)
    for i in range(warmup):
        for name in _rotated(names, i):
            await sides[name].call(SERVERS[i % len(SERVERS)], -1)
    for i in range(calls):
        for name in _rotated(names, i):
            side = sides[name]
            cpu, begin = side.cpu(), now()
            await side.call(SERVERS[i % len(SERVERS)], -1)
            side.samples.append((now() - begin) * 1000)
            side.cpu_s += side.cpu() - cpu


async def concurrent(sides: dict[str, Side], rounds: int, warmup: int, concurrency: int) -> None:
    for round_no in range(warmup + rounds):
        for name in _rotated(tuple(sides), round_no):
            side = sides[name]
            if side.before_round is not None:
                await side.before_round(concurrency)
            begin = now()
            calls = (side.call(SERVERS[j % len(SERVERS)], j) for j in range(concurrency))
            await asyncio.wait_for(asyncio.gather(*calls), ROUND_LIMIT_S)
            if round_no >= warmup:
                side.rates.append(concurrency / (now() - begin))


async def one_run(args: argparse.Namespace, node: str, devnull: TextIO) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        hub_base = Path(tmp) / "hub"
        hub_base.mkdir()
        clients: dict[str, RawClient] = {}
        hub: Hub | None = None
        bare = await start_bare(args.protocol, args.calls, args.rounds, args.concurrency)
        try:
            async with contextlib.AsyncExitStack() as stack:
                sides: dict[str, Side] = {}
                negotiated: dict[str, str] = {}
                trees = {"sidecar": None, **({"baseline": args.baseline} if args.baseline else {})}
                for name, tree in trees.items():
                    client, sides[name], negotiated[name] = await start_sidecar(Path(tmp) / name, args.protocol, tree)
                    clients[name] = client
                hub, sides["hub"] = await hub_side(node, hub_base)
                sides["direct"], negotiated["direct"] = await direct_side(stack, args.protocol, devnull)
                await sequential(sides, args.calls, args.warmup)
                await concurrent(sides, args.rounds, 1, args.concurrency)
                assert bare.stdout is not None
                line = await asyncio.wait_for(bare.stdout.readline(), START_LIMIT_S)
                if line.strip() != b"ready":
                    raise RuntimeError(f"the bare client did not get ready: {line!r}")
                pids = {**{name: c.pid for name, c in clients.items()}, "hub": hub.pid, "direct": bare.pid}
                for pid in pids.values():
                    await settle(pid, quiet_s=args.quiet, limit_s=args.quiet * 10)
                memory = {name: proc_status(pid) for name, pid in pids.items()}
        finally:
            for client in clients.values():
                await reap_leftovers_after(client)
            if hub is not None:
                await hub.close()
            await stop_bare(bare)
    return {
        "samples": {name: side.samples for name, side in sides.items()},
        "rates": {name: side.rates for name, side in sides.items()},
        "cpu_ms": {name: side.cpu_s / len(side.samples) * 1000 for name, side in sides.items()},
        "memory": memory,
        "negotiated": negotiated,
    }


async def reap_leftovers_after(client: RawClient) -> None:
    pids = descendants(client.pid)
    await client.close(STOP_LIMIT_S)
    await reap_leftovers(pids)


# --------------------------------------------------------------------------- report


def _median_of_runs(results: list[dict[str, Any]], pick: Callable[[dict[str, Any]], float]) -> float:
    return statistics.median(pick(r) for r in results)


def report_calls(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    def p50(side: str) -> float:
        return _median_of_runs(results, lambda r: statistics.median(r["samples"][side]))

    def rate(side: str) -> float:
        return _median_of_runs(results, lambda r: statistics.median(r["rates"][side]))

    def rss(side: str) -> float:
        return _median_of_runs(results, lambda r: mib(r["memory"][side].get("VmRSS", 0)))

    rows = []
    for side in results[0]["samples"]:
        s = Summary.of([v for r in results for v in r["samples"][side]])
        cpu = _median_of_runs(results, lambda r, side=side: r["cpu_ms"][side])
        peak = _median_of_runs(results, lambda r, side=side: mib(r["memory"][side].get("VmHWM", 0)))
        runs = " / ".join(f"{statistics.median(r['samples'][side]):.2f}" for r in results)
        rates = " / ".join(f"{statistics.median(r['rates'][side]):.0f}" for r in results)
        rows.append([LABELS[side], p50(side), s.p95, runs, cpu, rate(side), rates, rss(side), peak])
    title = (
        f"Part 1: echo on three server-everything servers, {len(results)} run(s); {args.calls} sequential calls "
        f"and {args.rounds} rounds of {args.concurrency} concurrent calls per client and run"
    )
    headers = ["client", "p50 ms", "p95 ms", "p50 by run", "CPU ms/call", "calls/s", "calls/s by run"]
    print(table([*headers, "RSS MiB", "peak MiB"], rows, title))
    print("(p50, calls/s, RSS: median over runs of each run's median; p95 over every sample; CPU of the product's")
    print(" own process: the sidecar, the hub, this process around the direct client's calls)\n")
    verdicts(p50, rate, rss)


def verdicts(p50: Callable[[str], float], rate: Callable[[str], float], rss: Callable[[str], float]) -> None:
    added = p50("sidecar") - p50("direct")
    ok_p50 = added <= GOAL_ADDED_MS and p50("sidecar") < p50("hub")
    ok_rate = rate("sidecar") >= GOAL_THROUGHPUT * rate("direct") and rate("sidecar") > rate("hub")
    ok_rss = rss("sidecar") <= GOAL_RSS * rss("direct")
    print(
        f"goal: echo p50 at most direct + {GOAL_ADDED_MS} ms and below mcp-hub -> {p50('sidecar'):.2f} ms "
        f"(direct {p50('direct'):.2f} + {added:.2f}, mcp-hub {p50('hub'):.2f}): {'MET' if ok_p50 else 'MISSED'}"
    )
    print(
        f"goal: calls/s at 50 concurrent at least {GOAL_THROUGHPUT}x direct and above mcp-hub -> "
        f"{rate('sidecar'):.0f} ({rate('sidecar') / rate('direct'):.2f}x direct {rate('direct'):.0f}, "
        f"mcp-hub {rate('hub'):.0f}): {'MET' if ok_rate else 'MISSED'}"
    )
    print(
        f"goal: RSS at most {GOAL_RSS}x the direct client process -> {rss('sidecar'):.1f} MiB "
        f"({rss('sidecar') / rss('direct'):.2f}x {rss('direct'):.1f}; mcp-hub {rss('hub'):.1f}): "
        f"{'MET' if ok_rss else 'MISSED'}"
    )
    print(
        f"summary: echo p50 sidecar/direct {p50('sidecar') / p50('direct'):.2f}x (+{added:.2f} ms), "
        f"sidecar/mcp-hub {p50('sidecar') / p50('hub'):.2f}x; calls/s at 50 sidecar/direct "
        f"{rate('sidecar') / rate('direct'):.2f}x, sidecar/mcp-hub {rate('sidecar') / rate('hub'):.2f}x; "
        f"RSS sidecar/direct {rss('sidecar') / rss('direct'):.2f}x"
    )


async def run_calls(args: argparse.Namespace, node: str, devnull: TextIO) -> None:
    """`devnull`: the direct servers' stderr."""
    print(f"server-everything {everything_version()} over stdio, node {node_version(node)[1]}; ", end="")
    print(f"mcp-sidecar protocol {args.protocol!r}, direct client mode {args.protocol!r}")
    if args.baseline:
        LABELS["baseline"] = f"mcp-sidecar from {args.baseline}"
    results = []
    for run_no in range(args.runs):
        result = await one_run(args, node, devnull)
        results.append(result)
        p50s = ", ".join(f"{s} {statistics.median(v):.2f}" for s, v in result["samples"].items())
        rates = ", ".join(f"{s} {statistics.median(v):.0f}" for s, v in result["rates"].items())
        print(f"  run {run_no + 1}: echo p50 ms {p50s}; calls/s {rates}; negotiated {result['negotiated']}")
    print()
    report_calls(results, args)


def everything_version() -> str:
    package = EVERYTHING_JS.parent.parent / "package.json"
    return str(json.loads(package.read_text())["version"])


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--part", choices=("calls", "start", "all"), default="all")
    parser.add_argument("--runs", type=int, default=3, help="runs of each part, fresh processes each (default 3)")
    parser.add_argument("--calls", type=int, default=300, help="sequential calls per client and run (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="warm-up calls per client and run (default 30)")
    parser.add_argument("--rounds", type=int, default=20, help="part 1: concurrent rounds per client (default 20)")
    parser.add_argument("--concurrency", type=int, default=50, help="part 1: calls per concurrent round (50)")
    parser.add_argument("--servers", default="1,10", help="part 2: comma-separated server counts (default 1,10)")
    parser.add_argument("--protocol", choices=("auto", "legacy"), default="auto", help="the sidecar's protocol field")
    parser.add_argument("--node", default=os.environ.get("NODE", "node"), help="node binary (default: node on PATH)")
    parser.add_argument("--baseline", type=Path, help="part 1: also run this tree's sidecar/ (an older commit)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 run, few calls, part 2 at 1 server")
    args = parser.parse_args(argv)
    args.quiet = 1.0
    if args.quick:
        args.servers, args.runs, args.calls, args.warmup, args.rounds, args.quiet = "1", 1, 60, 10, 4, 0.3
        print("--quick: a smoke run; too few samples for the verdicts below to mean anything\n")
    counts = [int(c) for c in args.servers.split(",") if c.strip()]
    if min(args.runs, args.calls, args.rounds, args.concurrency) < 1 or not counts or min(counts) < 1:
        parser.error("--runs, --calls, --rounds, --concurrency and every --servers count must be at least 1")
    node = shutil.which(args.node)
    if not HUB_CLI.is_file() or node is None:
        missing = "node" if node is None else str(HUB_CLI.relative_to(ROOT))
        print(f"SKIPPED: {missing} not found; install it with `scripts/setup --test` (npm ci in benchmarks/)")
        return 0
    major, text = node_version(node)
    if major < 18:
        print(f"SKIPPED: mcp-hub needs node 18 or newer; {node} is {text}")
        return 0
    print(machine_line())
    hub_version = json.loads((HUB_PACKAGE / "package.json").read_text())["version"]
    print(f"mcp-hub {hub_version} (its client proposes protocol {HUB_PROPOSED_PROTOCOL})\n")
    if args.part in ("calls", "all"):
        if not EVERYTHING_JS.is_file():
            print("part 1 SKIPPED: server-everything not found; install it with `scripts/setup --test`")
        else:
            with open(os.devnull, "w") as devnull:
                asyncio.run(run_calls(args, node, devnull))
        print()
    if args.part in ("start", "all"):
        from _hub_start import run as run_start

        quiet = args.quiet
        asyncio.run(run_start(counts, args.runs, min(args.calls, 200), args.warmup, node, args.protocol, quiet))
    print(machine_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
