"""Two revisions of the sidecar side by side in one process: start-up and tool-call figures.

A refactoring that promises "no worse" (issue 32: start-up as a ratio to bare pygls, and the
call figures) is measured here against the revision before it, on the same machine in the same
minutes. The base revision's `sidecar/` tree is exported with `git archive` into a temporary
folder and run with `PYTHONPATH` pointing there (it wins over the editable install's finder);
the working tree is the head. Both use this venv, so only our code differs.

Start-up: launch to the parsed `initialize` answer for base, head and a bare pygls server,
the order rotating every round (as `startup.py` does). Each revision has a home of its own,
warmed first, so its attrs code cache is in place as a user's would be.

Calls: one sidecar of each revision, each with `basic.py` (stdio) configured and `basic.echo`
activated, and a direct `mcp.Client` to a third `basic.py`; `mcp/callTool echo` through each
path and `mcp/activeTools` (no MCP I/O: the LSP hop alone) on each sidecar, interleaved with the
order reversed every other round.

Goal (issue 32): head no worse than base, within the noise the two base-vs-base spreads show.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Awaitable, Callable
from io import BytesIO
from pathlib import Path
from typing import TextIO

from _common import (
    BARE_ARGV,
    BASIC_SERVER,
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    Summary,
    basic_server_entry,
    machine_line,
    sidecar_env,
    table,
    write_config,
)
from call_latency import _measure
from startup import time_initialize

BASE_DEFAULT = "f546d3c"
"""The last commit before issue 32's work (green in CI at 2026-12-03)."""
ARGUMENTS = {"text": "hello"}


def export_revision(revision: str, into: Path) -> Path:
    """The revision's `sidecar/` tree under `into`; the folder to put on PYTHONPATH."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, "sidecar"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "sidecar"


def revision_env(home: Path, pythonpath: Path | None) -> dict[str, str]:
    env = sidecar_env(home)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


async def startup(envs: dict[str, dict[str, str]], runs: int, warmup: int) -> dict[str, list[float]]:
    variants = [*envs, "bare"]
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for round_no in range(warmup + runs):
        shift = round_no % len(variants)
        for name in variants[shift:] + variants[:shift]:
            argv = BARE_ARGV if name == "bare" else SIDECAR_ARGV
            elapsed = await time_initialize(argv, envs.get(name, envs["head"])) * 1000
            if round_no >= warmup:
                samples[name].append(elapsed)
    return samples


async def _activated(env: dict[str, str]) -> RawClient:
    client = await RawClient.start(SIDECAR_ARGV, env=env, cwd=ROOT)
    await client.initialize(initialized=True)
    activated = await client.request("mcp/activate", {"ids": ["basic.echo"]})
    if activated["results"][0]["status"] == "not loaded":
        await client.close()
        raise RuntimeError(f"activation failed: {activated['results'][0]}")
    return client


async def calls(envs: dict[str, dict[str, str]], count: int, warmup: int, devnull: TextIO) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    sidecars = {name: await _activated(env) for name, env in envs.items()}
    try:
        server = StdioServerParameters(command=PYTHON, args=[str(BASIC_SERVER), "stdio"])
        transport = stdio_client(server, errlog=devnull)
        async with Client(transport, mode="auto", cache=None, read_timeout_seconds=15) as direct:  # type: ignore[arg-type]
            series: dict[str, Callable[[], Awaitable[None]]] = {}
            for name, client in sidecars.items():
                series[f"{name} call"] = _call_through(client)
                series[f"{name} hop"] = _hop(client)

            async def via_direct() -> None:
                result = await direct.call_tool("echo", ARGUMENTS, read_timeout_seconds=30)
                if result.is_error or result.content[0].text != "hello":  # type: ignore[union-attr]
                    raise RuntimeError("unexpected direct result")

            series["direct call"] = via_direct
            for _ in range(warmup):
                for fn in series.values():
                    await fn()
            return await _measure(series, count)
    finally:
        for client in sidecars.values():
            await client.close()


def _call_through(client: RawClient) -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        result = await client.request("mcp/callTool", {"id": "basic.echo", "arguments": ARGUMENTS})
        if result.get("isError") or result["content"][0]["text"] != "hello":
            raise RuntimeError("unexpected sidecar result")

    return call


def _hop(client: RawClient) -> Callable[[], Awaitable[None]]:
    async def hop() -> None:
        await client.request("mcp/activeTools", {})

    return hop


def report(revisions: dict[str, str], boot: dict[str, list[float]], timed: dict[str, list[float]]) -> None:
    print(table(["name", "revision"], list(revisions.items()), "Revisions"))
    print()
    stats = {name: Summary.of(values) for name, values in boot.items()}
    bare = stats["bare"]
    rows = [
        [name, s.n, s.min, s.median, s.p95, f"{s.median / bare.median:.2f}x" if name != "bare" else "-"]
        for name, s in stats.items()
    ]
    headers = ["variant", "n", "min", "median", "p95", "median / bare"]
    print(table(headers, rows, "Start-up: launch to initialize answer (ms)"))
    print()
    stats = {name: Summary.of(values) for name, values in timed.items()}
    direct = stats["direct call"]
    rows = []
    for name, s in stats.items():
        added = f"{s.median - direct.median:+.2f}" if name.endswith(" call") and name != "direct call" else "-"
        rows.append([name, s.n, s.min, s.median, s.p95, added])
    print(table(["path", "n", "min", "median", "p95", "median over direct"], rows, "Calls: echo and the LSP hop (ms)"))
    print()
    head_boot = stats_ratio(boot, "head") - stats_ratio(boot, "base")
    head_call = Summary.of(timed["head call"]).median - Summary.of(timed["base call"]).median
    print(f"head - base: start-up ratio {head_boot:+.2f}x, call median {head_call:+.2f} ms")


def stats_ratio(boot: dict[str, list[float]], name: str) -> float:
    return Summary.of(boot[name]).median / Summary.of(boot["bare"]).median


async def run(base: str, head: str, runs: int, warmup: int, count: int, devnull: TextIO) -> int:
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        root = Path(tmp)
        base_path = export_revision(base, root / "base")
        envs = {"base": revision_env(root / "home-base", base_path), "head": revision_env(root / "home-head", None)}
        print(f"start-up: {runs} runs per variant (+{warmup} warm-up); calls: {count} per path (+{warmup * 5} warm-up)")
        boot = await startup(envs, runs, warmup)
        for env in envs.values():
            write_config(Path(env["MCP_SIDECAR_HOME"]), {"basic": basic_server_entry("auto")})
        timed = await calls(envs, count, warmup * 5, devnull)
    report({"base": base, "head": f"working tree at {head}"}, boot, timed)
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base", default=BASE_DEFAULT, help=f"the revision to compare with (default {BASE_DEFAULT})")
    parser.add_argument("--runs", type=int, default=20, help="measured starts per variant (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="discarded starts per variant (default 2)")
    parser.add_argument("--calls", type=int, default=300, help="measured calls per path (default 300)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 starts, 20 calls")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.warmup, args.calls = 3, 1, 20
        print("--quick: a smoke run; too few samples for the comparison to mean anything\n")
    if args.runs < 1 or args.calls < 1:
        parser.error("--runs and --calls must be at least 1")
    with open(os.devnull, "w") as devnull:
        head = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
        return asyncio.run(run(args.base, head.stdout.strip(), args.runs, args.warmup, args.calls, devnull))


if __name__ == "__main__":
    sys.exit(main())
