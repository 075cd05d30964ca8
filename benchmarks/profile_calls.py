"""Profile `mcp/callTool` against server-everything's `echo`: CPU, instructions and hot functions per call.

    .venv/bin/python benchmarks/profile_calls.py [--tool cpu|callgrind|pyspy|cprofile] [--calls N]
        [--concurrency C] [--sidecar PATH] [--protocol auto|legacy] [--hop-only] [--top N] [--keep PATH]

Starts `python -m mcp_sidecar` (with `--sidecar PATH`, that tree's `mcp_sidecar` first on
PYTHONPATH: how an older commit is compared, from a `git worktree` of it) with one
server-everything over stdio, activates `echo`, makes warm-up calls, then N measured calls, one at
a time or C at once, and prints the sidecar process's CPU per call (utime + stime from
/proc/PID/stat), its read and write system calls and context switches, and the server's. With
`--hop-only` the measured request is `mcp/activeTools`, the JSON-RPC hop without a server. With a
tool:
  * `callgrind`: the sidecar runs under `valgrind --tool=callgrind` with instrumentation off until
    the measured calls start (`callgrind_control -i on`), so instructions per call are counted
    exactly and repeatably (a noisy box changes time, not instructions);
  * `pyspy`: `py-spy record --format raw` attached to the sidecar during the measured calls (a
    sampling profile of Python frames, idle time left out): the hottest functions by self and by
    total samples;
  * `cprofile`: a `sitecustomize` on the sidecar's PYTHONPATH starts cProfile on SIGUSR1 and writes
    it on SIGUSR2 (main thread only; the profiler's overhead inflates small functions): self time
    by where the code is (the sidecar, pygls, the SDK, pydantic, anyio, asyncio, pipe writes,
    waiting), the sidecar's own functions, the top functions.
Not a benchmark (no baseline, no goal): run it on two trees and compare.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import ROOT, SIDECAR_ARGV, RawClient, descendants, machine_line, sidecar_env, table, write_config

EVERYTHING_JS = ROOT / "tests" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
ARGUMENTS = {"message": "hello"}
LIMIT_S = 600.0
LINE = re.compile(r"^(?P<stack>.*) (?P<count>\d+)$")
FRAME = re.compile(r"^(?P<function>\S+) \((?P<file>[^:]+)(:\d+)?\)$")


def environment(home: Path, tree: Path | None) -> dict[str, str]:
    env = sidecar_env(home)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    return env


async def calls(client: RawClient, n: int, concurrency: int, hop_only: bool = False) -> None:
    async def one() -> None:
        if hop_only:  # the JSON-RPC hop alone: a request the sidecar answers without a server
            await client.request("mcp/activeTools", {}, limit_s=LIMIT_S)
            return
        result = await client.request(
            "mcp/callTool", {"id": "everything.echo", "arguments": ARGUMENTS}, limit_s=LIMIT_S
        )
        if result.get("isError"):
            raise RuntimeError(f"echo failed: {result}")

    for _ in range(0, n, concurrency):
        await asyncio.gather(*(one() for _ in range(concurrency)))


def counters(pid: int) -> dict[str, int]:
    """The process's read and write system calls and context switches (/proc/PID/io and status)."""
    found: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("syscr", "syscw"):
                found[key] = int(value)
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                found[key.split("_")[0]] = int(value)
    return found


def cpu_split(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of the process itself (its threads, not its children)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


async def callgrind_control(state: str, pid: int) -> None:
    proc = await asyncio.create_subprocess_exec(
        "callgrind_control", "-i", state, str(pid), stdout=asyncio.subprocess.DEVNULL
    )
    if await asyncio.wait_for(proc.wait(), LIMIT_S) != 0:
        raise RuntimeError(f"callgrind_control -i {state} failed")


class Probe:
    """What the chosen tool does around the measured calls, and its report."""

    def __init__(self, args: argparse.Namespace, home: Path) -> None:
        self.args = args
        self.home = home
        self.spy: asyncio.subprocess.Process | None = None

    def argv_and_env(self) -> tuple[list[str], dict[str, str]]:
        argv = list(SIDECAR_ARGV)
        if self.args.tool == "callgrind":
            out = self.home / "callgrind.out"
            argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", *argv]
        env = environment(self.home, self.args.sidecar)
        if self.args.tool == "cprofile":
            hook = self.home / "hook"
            hook.mkdir()
            (hook / "sitecustomize.py").write_text(CPROFILE_HOOK.format(out=str(self.home / "cprofile.out")))
            env["PYTHONPATH"] = os.pathsep.join([str(hook), *filter(None, [env.get("PYTHONPATH")])])
        return argv, env

    async def begin(self, client: RawClient) -> None:
        pid = client.pid
        if self.args.tool == "callgrind":
            await callgrind_control("on", pid)
        elif self.args.tool == "pyspy":
            self.spy = await asyncio.create_subprocess_exec(
                str(Path(sys.executable).parent / "py-spy"),
                *("record", "--format", "raw", "--rate", str(self.args.rate), "--nonblocking"),
                *("--pid", str(pid), "--output", str(self.home / "pyspy.txt")),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await asyncio.sleep(1.0)  # py-spy attaches
        elif self.args.tool == "cprofile":
            os.kill(pid, signal.SIGUSR1)
            await client.request("mcp/status", {})  # the signal handler has run once this is answered

    async def end(self, client: RawClient) -> None:
        if self.args.tool == "callgrind":
            await callgrind_control("off", client.pid)
        elif self.args.tool == "cprofile":
            os.kill(client.pid, signal.SIGUSR2)
            await client.request("mcp/status", {})
        elif self.spy is not None:
            self.spy.send_signal(signal.SIGINT)
            await asyncio.wait_for(self.spy.wait(), 60)

    def report(self) -> None:
        args = self.args
        if args.tool == "callgrind":
            report_callgrind(self.home / "callgrind.out", args.calls, args.keep)
        elif args.tool == "pyspy":
            report_pyspy(self.home / "pyspy.txt", args.top)
        elif args.tool == "cprofile":
            if args.keep is not None:
                shutil.copy(self.home / "cprofile.out", args.keep)
            report_cprofile(self.home / "cprofile.out", args.calls, args.top)


async def profile(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-profile-") as tmp:
        home = Path(tmp)
        entry = {"command": "node", "args": [str(EVERYTHING_JS), "stdio"], "protocol": args.protocol}
        write_config(home, {"everything": entry})
        probe = Probe(args, home)
        argv, env = probe.argv_and_env()
        client = await RawClient.start(argv, env=env, cwd=ROOT)
        try:
            await client.initialize(initialized=True)
            activated = await client.request("mcp/activate", {"ids": ["everything.echo"]}, limit_s=LIMIT_S)
            if activated["results"][0]["status"] == "not loaded":
                raise RuntimeError(f"activation failed: {activated['results'][0]}")
            await calls(client, args.warmup, args.concurrency)
            await probe.begin(client)
            server = descendants(client.pid)[-1]
            cpu, begin = cpu_split(client.pid), time.perf_counter()
            before = {"sidecar": counters(client.pid), "server": counters(server)}
            await calls(client, args.calls, args.concurrency, args.hop_only)
            wall = time.perf_counter() - begin
            user, system = (b - a for a, b in zip(cpu, cpu_split(client.pid), strict=True))
            after = {"sidecar": counters(client.pid), "server": counters(server)}
            await probe.end(client)
        finally:
            with contextlib.suppress(Exception):
                await client.close(LIMIT_S)
        print(
            f"sidecar CPU per call: {(user + system) / args.calls * 1000:.3f} ms (user "
            f"{user / args.calls * 1000:.3f}, system {system / args.calls * 1000:.3f}; {args.calls} calls, "
            f"{args.concurrency} at a time); {args.calls / wall:.0f} calls/s"
        )
        per_call = {
            who: " ".join(f"{k} {(after[who][k] - v) / args.calls:.2f}" for k, v in before[who].items())
            for who in before
        }
        print(f"per call: sidecar {per_call['sidecar']}; server {per_call['server']}")
        probe.report()


def report_callgrind(out: Path, n: int, keep: Path | None) -> None:
    """Instructions per call, from the totals of the output file(s) (all threads; the interpreter's
    C functions, not Python's, so `--tool cprofile` or `pyspy` say where they go)."""
    files = sorted(out.parent.glob(out.name + "*"))
    total = 0
    for path in files:
        if keep is not None:
            shutil.copy(path, keep.parent / f"{keep.name}{path.name.removeprefix(out.name)}")
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
    print(f"instructions per call: {total / n:,.0f} (callgrind, {n} calls)")


CPROFILE_HOOK = """
import cProfile, signal
_profiler = cProfile.Profile()
def _on(*_): _profiler.enable()
def _off(*_):
    _profiler.disable()
    _profiler.dump_stats({out!r})
signal.signal(signal.SIGUSR1, _on)
signal.signal(signal.SIGUSR2, _off)
"""
"""A sitecustomize for the profiled sidecar only: SIGUSR1 starts cProfile on the main thread (the
event loop's), SIGUSR2 stops it and writes the statistics."""


def report_cprofile(out: Path, n: int, top: int) -> None:
    import pstats

    stats = pstats.Stats(str(out))
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = []
    for (file, line, function), (_, calls, own, cumulative, _) in raw.items():
        name = short(f"{function} ({file}:{line})")
        rows.append((own, cumulative, calls, name))
    total = sum(r[0] for r in rows)
    print(f"cProfile: {total / n * 1e6:.0f} us of profiled time per call (profiler overhead included)")
    groups: Counter[str] = Counter()
    for (file, _, function), (_, _, own, _, _) in raw.items():
        groups[group_of(file, function)] += own
    group_rows = [[f"{v / n * 1e6:.1f}", f"{v / total:.1%}", k] for k, v in groups.most_common()]
    print()
    print(table(["self us/call", "share", "where"], group_rows, "self time by where the code is"))
    own = sorted(
        ((v[2], v[3], v[1], short(f"{k[2]} ({k[0]}:{k[1]})")) for k, v in raw.items() if "mcp_sidecar/" in k[0]),
        key=lambda r: -r[0],
    )[:top]
    own_rows = [[f"{r[0] / n * 1e6:.1f}", f"{r[1] / n * 1e6:.1f}", f"{r[2] / n:.2f}", r[3]] for r in own]
    print()
    print(table(["self us/call", "cum us/call", "calls/call", "function"], own_rows, "mcp-sidecar's own functions"))
    for title, key in (("self", 0), ("cumulative", 1)):
        ranked = sorted(rows, key=lambda r: -r[key])[:top]
        table_rows = [[f"{r[0] / n * 1e6:.1f}", f"{r[1] / n * 1e6:.1f}", f"{r[2] / n:.2f}", r[3]] for r in ranked]
        print()
        print(table(["self us/call", "cum us/call", "calls/call", "function"], table_rows, f"top by {title} time"))


GROUPS = (
    ("waiting in epoll (idle)", re.compile(r"^<method 'poll' of 'select.epoll")),
    ("pipe write() syscalls", re.compile(r"^(<method 'write' of '_io.FileIO'|<built-in method posix.write>)")),
    ("mcp-sidecar", re.compile(r"mcp_sidecar/")),
    ("pygls", re.compile(r"pygls/")),
    ("MCP SDK (mcp, mcp_types)", re.compile(r"/(mcp|mcp_types)/")),
    ("pydantic", re.compile(r"pydantic|SchemaValidator|SchemaSerializer")),
    ("anyio", re.compile(r"anyio/")),
    ("asyncio", re.compile(r"asyncio/|selectors\.py|_asyncio|contextvars")),
    ("json", re.compile(r"json/")),
)


def group_of(file: str, function: str) -> str:
    text = function if file == "~" else file
    for name, pattern in GROUPS:
        if pattern.search(text):
            return name
    return "other (stdlib, builtins)"


def report_pyspy(raw: Path, top: int) -> None:
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in raw.read_text().splitlines():
        match = LINE.match(line)
        if not match:
            continue
        count = int(match.group("count"))
        frames = [short(f) for f in match.group("stack").split(";")]
        if frames and re.search(r"\b(select|poll|epoll)\b", frames[-1]):
            continue  # the idle event loop
        samples += count
        own[frames[-1]] += count
        for frame in set(frames):
            total[frame] += count
    print(f"py-spy: {samples} samples outside the idle event loop")
    for title, counter in (("self", own), ("total", total)):
        rows = [[f"{c / samples:.1%}", name] for name, c in counter.most_common(top)]
        print()
        print(table(["share", "function (file)"], rows, f"hottest by {title} samples"))


def short(frame: str) -> str:
    match = FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match.group("file")
    for marker in ("site-packages/", "mcp_sidecar/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{match.group('function')} ({path})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tool", choices=("cpu", "callgrind", "pyspy", "cprofile"), default="cpu")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--sidecar", type=Path, help="a tree's sidecar/ directory to run instead of this one")
    parser.add_argument("--protocol", choices=("auto", "legacy"), default="auto")
    parser.add_argument("--hop-only", action="store_true", help="measure mcp/activeTools (no server) instead")
    parser.add_argument("--rate", type=int, default=500, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", type=Path, help="callgrind or cprofile: copy the output file(s) to this path")
    args = parser.parse_args(argv)
    if args.calls % args.concurrency or args.warmup % args.concurrency:
        parser.error("--calls and --warmup must be multiples of --concurrency")
    print(machine_line())
    print(f"sidecar tree: {args.sidecar or ROOT / 'sidecar'}")
    asyncio.run(profile(args))
    print(machine_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
