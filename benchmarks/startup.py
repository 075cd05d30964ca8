"""Cold start: process launch to the `initialize` answer, the sidecar vs a bare pygls server.

Both are started by a raw stdio client (hand-made Content-Length framing, asyncio pipes), the
`initialize` request is written right after spawning, and the clock stops when its answer is
parsed. Runs are interleaved (the order alternates every round) and each process is shut
down and reaped before the next one starts. `python -c pass` (launch to exit) is shown as the
interpreter's floor.

The sidecar runs twice per round: as a user runs it (its attrs code cache, written by the first
warm-up start, in the cache directory) and with that cache kept cold (`PYTHONDONTWRITEBYTECODE=1`
and a home of its own, so every start compiles lsprotocol's generated methods again, as before
`startup.py` existed).

Also checks that the `mcp` SDK is not imported on the way to the `initialize` answer:
  1. in-process: import the sidecar's entry modules and call create_server(), then look at
     sys.modules;
  2. end to end: run the sidecar with `-X importtime`, send only `initialize`, and look for
     mcp / mcp_types in everything it imported up to then.

Goal (issue 2): sidecar within 1.2x of bare pygls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    BARE_ARGV,
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    Summary,
    machine_line,
    now,
    sidecar_env,
    table,
)

GOAL_RATIO = 1.2
SDK_MODULES = ("mcp", "mcp_types")


async def time_initialize(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning to the parsed `initialize` answer; the process is reaped afterwards."""
    start = now()
    client = await RawClient.start(argv, env=env, cwd=ROOT)
    try:
        await client.initialize()
        elapsed = now() - start
    finally:
        await client.close()
    return elapsed


async def time_python_floor(env: dict[str, str]) -> float:
    start = now()
    proc = await asyncio.create_subprocess_exec(PYTHON, "-c", "pass", env=env, cwd=ROOT)
    await proc.wait()
    return now() - start


def _is_sdk(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in SDK_MODULES)


def check_in_process() -> tuple[bool, str]:
    code = (
        "import json, sys\n"
        "import mcp_sidecar.cli\n"
        "from mcp_sidecar.server import create_server\n"
        "create_server()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types'))))\n"
    )
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    if done.returncode != 0:
        return False, f"the check itself failed (exit {done.returncode})"
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    if loaded:
        return False, f"imported: {', '.join(loaded[:5])}{' ...' if len(loaded) > 5 else ''}"
    return True, "'mcp' and 'mcp_types' not in sys.modules after create_server()"


def _parse_importtime(text: str) -> list[tuple[str, int, int]]:
    """(module, cumulative_us, depth) per `-X importtime` line."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        parts = line[len("import time:") :].split("|")
        cumulative = int(parts[1].strip())
        raw_name = parts[2].rstrip()
        depth = (len(raw_name) - len(raw_name.lstrip(" "))) // 2
        rows.append((raw_name.strip(), cumulative, depth))
    return rows


async def check_end_to_end(env: dict[str, str]) -> tuple[bool, str, list[tuple[str, int, int]]]:
    argv = [PYTHON, "-X", "importtime", *SIDECAR_ARGV[1:]]
    client = await RawClient.start(argv, env=env, cwd=ROOT, stderr=asyncio.subprocess.PIPE)
    assert client.proc.stderr is not None
    stderr = bytearray()

    async def drain() -> None:
        assert client.proc.stderr is not None
        while chunk := await client.proc.stderr.read(65536):
            stderr.extend(chunk)

    drainer = asyncio.get_running_loop().create_task(drain())
    try:
        await client.initialize()
        # Nothing else was sent, so whatever is imported by now was on the initialize path.
        await asyncio.sleep(0.5)
        snapshot = bytes(stderr).decode(errors="replace")
    finally:
        await client.close()
        await drainer
    rows = _parse_importtime(snapshot)
    sdk = [name for name, _, _ in rows if _is_sdk(name)]
    if not rows:
        return False, "no -X importtime output captured", rows
    if sdk:
        return False, f"imported before the answer: {', '.join(sdk[:5])}", rows
    return True, f"{len(rows)} modules imported up to the answer, none from mcp/mcp_types", rows


def top_imports(rows: list[tuple[str, int, int]], count: int) -> list[tuple[str, int]]:
    top = [(name, cumulative) for name, cumulative, depth in rows if depth == 0]
    return sorted(top, key=lambda item: item[1], reverse=True)[:count]


async def run(runs: int, warmup: int) -> int:
    print(machine_line())
    print(f"runs: {runs} per variant (+{warmup} warm-up, discarded), interleaved; times in ms\n")
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        env = sidecar_env(Path(tmp))  # an empty MCP_SIDECAR_HOME: no configuration
        cold_env = sidecar_env(Path(tmp) / "cold") | {"PYTHONDONTWRITEBYTECODE": "1"}
        samples: dict[str, list[float]] = {"sidecar": [], "cold": [], "bare": [], "floor": []}
        for round_no in range(warmup + runs):
            order = ["sidecar", "cold", "bare"] if round_no % 2 == 0 else ["bare", "cold", "sidecar"]
            order.append("floor")
            for variant in order:
                if variant == "sidecar":
                    elapsed = await time_initialize(SIDECAR_ARGV, env)
                elif variant == "cold":
                    elapsed = await time_initialize(SIDECAR_ARGV, cold_env)
                elif variant == "bare":
                    elapsed = await time_initialize(BARE_ARGV, env)
                else:
                    elapsed = await time_python_floor(env)
                if round_no >= warmup:
                    samples[variant].append(elapsed * 1000)

        sidecar, cold, bare, floor = (Summary.of(samples[k]) for k in ("sidecar", "cold", "bare", "floor"))
        labels = {
            "sidecar": "python -m mcp_sidecar (to initialize answer)",
            "cold": "python -m mcp_sidecar, attrs code cache cold",
            "bare": "bare pygls LanguageServer (to initialize answer)",
            "floor": "python -c pass (to exit; interpreter floor)",
        }
        rows = [
            [labels[k], s.n, s.min, s.median, s.p95, s.max]
            for k, s in (("sidecar", sidecar), ("cold", cold), ("bare", bare), ("floor", floor))
        ]
        print(table(["variant", "n", "min", "median", "p95", "max"], rows, "Startup: launch to initialize answer"))
        ratio_rows = [
            ["min", f"{sidecar.min / bare.min:.2f}x", f"{sidecar.min - bare.min:.1f}"],
            ["median", f"{sidecar.median / bare.median:.2f}x", f"{sidecar.median - bare.median:.1f}"],
            ["p95", f"{sidecar.p95 / bare.p95:.2f}x", f"{sidecar.p95 - bare.p95:.1f}"],
        ]
        print()
        print(table(["statistic", "sidecar / bare", "difference (ms)"], ratio_rows))
        saved = cold.median - sidecar.median
        print(f"\nattrs code cache: median {cold.median:.1f} ms cold -> {sidecar.median:.1f} ms ({saved:.1f} ms saved)")
        median_ratio = sidecar.median / bare.median
        verdict = "MET" if median_ratio <= GOAL_RATIO else "MISSED"
        print(f"\ngoal: sidecar median within {GOAL_RATIO}x of bare pygls -> {median_ratio:.2f}x: {verdict}")

        print()
        ok_in_process, detail_in_process = check_in_process()
        ok_e2e, detail_e2e, rows_e2e = await check_end_to_end(env)
        checks = [
            ["mcp not imported by create_server()", "PASS" if ok_in_process else "FAIL", detail_in_process],
            ["mcp not imported before initialize answer", "PASS" if ok_e2e else "FAIL", detail_e2e],
        ]
        print(table(["check", "result", "detail"], checks, "Import checks"))

        if rows_e2e:
            print()
            top = [[name, cumulative / 1000] for name, cumulative in top_imports(rows_e2e, 8)]
            total = sum(cumulative for name, cumulative, depth in rows_e2e if depth == 0) / 1000
            top.append(["(all top-level imports)", total])
            print(
                table(
                    ["top-level import", "cumulative ms"],
                    top,
                    "Sidecar imports up to the initialize answer (-X importtime, one run, inflated by the tracing)",
                )
            )
        return 0  # goals and checks are reported, not enforced


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="measured starts per variant (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="discarded starts per variant first (default 2)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 runs, 1 warm-up")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.warmup = 3, 1
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.quick:
        print("--quick: a smoke run; too few samples for the verdicts below to mean anything\n")
    return asyncio.run(run(args.runs, args.warmup))


if __name__ == "__main__":
    sys.exit(main())
