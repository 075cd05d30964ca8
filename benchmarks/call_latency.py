"""Added latency of `mcp/callTool` through the sidecar over a direct `mcp.Client.call_tool`.

For each protocol mode (`legacy`, `auto`) this starts, side by side in one process:
  * the sidecar (`python -m mcp_sidecar`, driven by a raw stdio JSON-RPC client) with a temp
    MCP_SIDECAR_HOME whose mcp.json points at tests/fixtures/servers/basic.py (stdio,
    `protocol` = the mode), after `mcp/activate basic.echo`;
  * a direct `mcp.Client(stdio_client(basic.py), mode=the mode)` to its own basic.py process.

After a warm-up, calls are sequential and interleaved (the order alternates every round):
`echo {"text": "hello"}` through each path, plus `mcp/activeTools` on the sidecar, a request
that does no MCP I/O and so shows the cost of the LSP hop alone. Times are client-observed
round trips. Added latency = sidecar path minus direct path.

Goal (issue 2): under 1 ms added at the median.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from _common import (
    BASIC_SERVER,
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    Summary,
    basic_server_entry,
    machine_line,
    now,
    sidecar_env,
    table,
    write_config,
)

GOAL_ADDED_MS = 1.0
ARGUMENTS = {"text": "hello"}
CALL_TIMEOUT_S = 30.0  # the sidecar's default tool-call timeout for stdio servers, passed on both paths


async def bench_mode(protocol: str, calls: int, warmup: int, devnull: TextIO) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {"basic": basic_server_entry(protocol)})
        sidecar = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
        try:
            await sidecar.initialize(initialized=True)
            activated = await sidecar.request("mcp/activate", {"ids": ["basic.echo"]})
            if activated["results"][0]["status"] == "not loaded":
                raise RuntimeError(f"activation failed: {activated['results'][0]}")
            info = await sidecar.request("mcp/server/get", {"server": "basic"})
            negotiated_sidecar = info["protocol"]["negotiated"]

            params = StdioServerParameters(command=PYTHON, args=[str(BASIC_SERVER), "stdio"])
            transport = stdio_client(params, errlog=devnull)
            async with Client(transport, mode=protocol, cache=None, read_timeout_seconds=15) as direct:  # type: ignore[arg-type]
                negotiated_direct = direct.protocol_version

                async def via_sidecar() -> None:
                    result = await sidecar.request("mcp/callTool", {"id": "basic.echo", "arguments": ARGUMENTS})
                    if result.get("isError") or result["content"][0]["text"] != "hello":
                        raise RuntimeError("unexpected sidecar result")

                async def via_direct() -> None:
                    result = await direct.call_tool("echo", ARGUMENTS, read_timeout_seconds=CALL_TIMEOUT_S)
                    if result.is_error or result.content[0].text != "hello":  # type: ignore[union-attr]
                        raise RuntimeError("unexpected direct result")

                async def lsp_hop() -> None:
                    await sidecar.request("mcp/activeTools", {})

                series: dict[str, Callable[[], Awaitable[None]]] = {
                    "sidecar": via_sidecar,
                    "direct": via_direct,
                    "hop": lsp_hop,
                }
                for _ in range(warmup):
                    for fn in series.values():
                        await fn()
                status_before = _count(sidecar, "mcp/serverStatus")
                samples = await _measure(series, calls)
                refetches = _count(sidecar, "mcp/serverStatus") - status_before
        finally:
            await sidecar.close()
    return {
        "protocol": protocol,
        "negotiated": {"sidecar": negotiated_sidecar, "direct": negotiated_direct},
        "samples": samples,
        "refetches": refetches,
    }


async def _measure(series: dict[str, Callable[[], Awaitable[None]]], calls: int) -> dict[str, list[float]]:
    """Milliseconds per call of each series, the order reversed every other round."""
    samples: dict[str, list[float]] = {name: [] for name in series}
    names = list(series)
    for round_no in range(calls):
        order = names if round_no % 2 == 0 else names[::-1]
        for name in order:
            start = now()
            await series[name]()
            samples[name].append((now() - start) * 1000)
    return samples


def _count(client: RawClient, method: str) -> int:
    return sum(1 for n in client.notifications if n.get("method") == method)


def report(results: list[dict[str, Any]], calls: int, warmup: int) -> None:
    rows = []
    added_rows = []
    verdicts = []
    for result in results:
        protocol = result["protocol"]
        sidecar, direct, hop = (Summary.of(result["samples"][k]) for k in ("sidecar", "direct", "hop"))
        negotiated = result["negotiated"]
        for path, version, s in (
            ("sidecar mcp/callTool", negotiated["sidecar"], sidecar),
            ("direct mcp.Client.call_tool", negotiated["direct"], direct),
            ("sidecar mcp/activeTools (no MCP I/O)", "-", hop),
        ):
            rows.append([protocol, path, version, s.n, s.min, s.median, s.p95])
        added_median = sidecar.median - direct.median
        added_p95 = sidecar.p95 - direct.p95
        added_rows.append([protocol, added_median, added_p95, sidecar.min - direct.min, result["refetches"]])
        verdicts.append((protocol, added_median))
    print(
        table(
            ["mode", "path", "negotiated", "n", "min", "median", "p95"],
            rows,
            "Tool call round trip, echo {text: hello} (ms)",
        )
    )
    print()
    print(
        table(
            ["mode", "added median", "added p95", "added min", "catalog re-fetches during calls"],
            added_rows,
            "Added by the sidecar (sidecar - direct, ms)",
        )
    )
    print()
    for protocol, added in verdicts:
        verdict = "MET" if added < GOAL_ADDED_MS else "MISSED"
        print(f"goal ({protocol}): under {GOAL_ADDED_MS:.0f} ms added at the median -> {added:.2f} ms: {verdict}")
    print(f"\n{calls} measured calls per path and mode after {warmup} warm-up calls; sequential, interleaved.")


async def run(calls: int, warmup: int, modes: list[str], devnull: TextIO) -> int:
    print(machine_line())
    print()
    results = [await bench_mode(mode, calls, warmup, devnull) for mode in modes]
    report(results, calls, warmup)
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=300, help="measured calls per path and mode (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="warm-up calls per path first (default 30)")
    parser.add_argument("--modes", default="legacy,auto", help="comma-separated protocol modes (default legacy,auto)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 calls, 5 warm-up")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.warmup = 20, 5
    if args.quick:
        print("--quick: a smoke run; too few samples for the verdicts below to mean anything\n")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if args.calls < 1 or not set(modes) <= {"legacy", "auto"} or not modes:
        parser.error("--calls must be >= 1 and --modes a list of legacy, auto")
    with open(os.devnull, "w") as devnull:  # the direct server's stderr
        return asyncio.run(run(args.calls, args.warmup, modes, devnull))


if __name__ == "__main__":
    sys.exit(main())
