"""The cost of replacing a server's own secrets in its answers (`output/redact.py`), with and without secrets.

Two parts, each side by side in one process:

1. In process, the redaction pass alone (`Redactor.value`) on a dumped `CallToolResult`: an echo
   result (`{"content": [{"type": "text", "text": "hello"}], "isError": false}`) for a connection
   with no secrets (the pass returns at once), with 3 and with 20 secret values; the same echo
   holding one secret (the replacement path); a 50 KiB text result (the output limit) with
   3 secrets; and a list of 1,000 tool descriptors through the listing's check, which redacts
   them as they arrive (once per list request: over HTTP, before every call). Batches of each
   are interleaved; microseconds per result (per list).
2. End to end, `mcp/callTool` echo through the sidecar to two copies of
   tests/fixtures/servers/basic.py, one given no secrets and one given 3 (`${VAR}` in its
   `env`), and a direct `mcp.Client.call_tool` to a third copy as the floor; sequential calls,
   interleaved. The difference between the two sidecar paths is the redaction's share of a call
   (within the noise: it is microseconds in a millisecond round trip).
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

from mcp_sidecar.connections.listing import _Check
from mcp_sidecar.output.redact import Redactor

SECRETS = {"BENCH_TOKEN": "tok-7f3a9c21e5b84d06", "BENCH_KEY": "key-0a1b2c3d4e5f6789", "BENCH_PASS": "p@ss/w0rd+more"}
ECHO: dict[str, Any] = {"content": [{"type": "text", "text": "hello"}], "isError": False}
ARGUMENTS = {"text": "hello"}


def _secret_values(count: int) -> list[str]:
    return [f"secret-value-{n:04d}-{'x' * (n % 7)}" for n in range(count)]


def _tools(count: int) -> list[dict[str, Any]]:
    """Descriptors as a server lists them: a name, a sentence, a schema of two properties."""
    return [
        {
            "name": f"tool_{n:04d}",
            "description": f"Does thing number {n} to the workspace, carefully and with a summary.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for"},
                    "limit": {"type": "integer"},
                },
                "required": ["query"],
            },
        }
        for n in range(count)
    ]


def in_process(batches: int, per_batch: int) -> list[list[Any]]:
    large = {"content": [{"type": "text", "text": ("y" * 79 + "\n") * 640}], "isError": False}
    holding = {"content": [{"type": "text", "text": f"token {_secret_values(3)[1]} echoed"}], "isError": False}
    cases: dict[str, tuple[Redactor, dict[str, Any]]] = {
        "echo, no secrets": (Redactor(), ECHO),
        "echo, 3 secrets": (Redactor(secrets=_secret_values(3)), ECHO),
        "echo, 20 secrets": (Redactor(secrets=_secret_values(20)), ECHO),
        "echo holding 1 of 3 secrets (replaced)": (Redactor(secrets=_secret_values(3)), holding),
        "50 KiB text, 3 secrets": (Redactor(secrets=_secret_values(3)), large),
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for batch in range(batches):
        for name in names if batch % 2 == 0 else names[::-1]:
            redactor, result = cases[name]
            reps = per_batch if name.startswith("echo") else max(1, per_batch // 200)
            start = now()
            for _ in range(reps):
                redactor.value(result)
            samples[name].append((now() - start) / reps * 1e6)
    rows = []
    for name in names:
        s = Summary.of(samples[name])
        redactor, _ = cases[name]
        rows.append([name, len(redactor.forms), s.min, s.median, s.p95])
    return rows + _listing(batches)


def _listing(batches: int) -> list[list[Any]]:
    """A 1,000-tool list taken through the listing's own check (which already builds each
    descriptor's JSON for its size limit), for a connection without and with 3 secrets."""
    tools = _tools(1000)
    redactors = {
        "1,000-tool listing, no secrets": Redactor(),
        "1,000-tool listing, 3 secrets": Redactor(secrets=_secret_values(3)),
    }
    samples: dict[str, list[float]] = {name: [] for name in redactors}
    for batch in range(batches):
        for name in list(redactors) if batch % 2 == 0 else list(redactors)[::-1]:
            check = _Check("bench", "tools", "list", redactors[name])
            start = now()
            for tool in tools:
                check.add(tool)
            samples[name].append((now() - start) * 1e6)
    return [[name, len(redactors[name].forms), *_three(Summary.of(samples[name]))] for name in redactors]


def _three(s: Summary) -> list[float]:
    return [s.min, s.median, s.p95]


async def end_to_end(calls: int, warmup: int, devnull: TextIO) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        secret_env = {name: f"${{{name}}}" for name in SECRETS}
        write_config(
            home,
            {"plain": basic_server_entry("legacy"), "secrets": {**basic_server_entry("legacy"), "env": secret_env}},
        )
        sidecar = await RawClient.start(SIDECAR_ARGV, env={**sidecar_env(home), **SECRETS}, cwd=ROOT)
        try:
            await sidecar.initialize(initialized=True)
            await sidecar.request("mcp/activate", {"ids": ["plain.echo", "secrets.echo"]})
            params = StdioServerParameters(command=PYTHON, args=[str(BASIC_SERVER), "stdio"])
            async with Client(stdio_client(params, errlog=devnull), mode="legacy", cache=None) as direct:  # type: ignore[arg-type]

                def through(server: str) -> Callable[[], Awaitable[None]]:
                    async def call() -> None:
                        result = await sidecar.request("mcp/callTool", {"id": f"{server}.echo", "arguments": ARGUMENTS})
                        if result["content"][0]["text"] != "hello":
                            raise RuntimeError("unexpected sidecar result")

                    return call

                async def via_direct() -> None:
                    await direct.call_tool("echo", ARGUMENTS)

                series = {"sidecar, no secrets": through("plain"), "sidecar, 3 secrets": through("secrets")}
                series["direct SDK client"] = via_direct
                for _ in range(warmup):
                    for fn in series.values():
                        await fn()
                samples: dict[str, list[float]] = {name: [] for name in series}
                names = list(series)
                for round_no in range(calls):
                    for name in names if round_no % 2 == 0 else names[::-1]:
                        start = now()
                        await series[name]()
                        samples[name].append((now() - start) * 1000)
        finally:
            await sidecar.close()
    return samples


async def run(args: argparse.Namespace, devnull: TextIO) -> int:
    print(machine_line())
    print()
    rows = in_process(args.batches, args.per_batch)
    print(table(["result", "forms searched", "min", "median", "p95"], rows, "Redaction pass alone (µs per result)"))
    print()
    samples = await end_to_end(args.calls, args.warmup, devnull)
    summaries = {name: Summary.of(values) for name, values in samples.items()}
    print(
        table(
            ["path", "n", "min", "median", "p95"],
            [[name, s.n, s.min, s.median, s.p95] for name, s in summaries.items()],
            "mcp/callTool echo round trip (ms)",
        )
    )
    plain, secret = summaries["sidecar, no secrets"], summaries["sidecar, 3 secrets"]
    print(f"\nwith 3 secrets - without, at the median: {secret.median - plain.median:+.3f} ms (noise: the pass is µs)")
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--batches", type=int, default=40, help="interleaved batches per in-process case (40)")
    parser.add_argument("--per-batch", type=int, default=2000, help="results redacted per batch (2000)")
    parser.add_argument("--calls", type=int, default=300, help="measured calls per end-to-end path (300)")
    parser.add_argument("--warmup", type=int, default=30, help="warm-up calls per path first (30)")
    parser.add_argument("--quick", action="store_true", help="smoke run: few batches and calls")
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.per_batch, args.calls, args.warmup = 6, 200, 20, 5
        print("--quick: a smoke run; too few samples for the figures below to mean anything\n")
    with open(os.devnull, "w") as devnull:
        return asyncio.run(run(args, devnull))


if __name__ == "__main__":
    sys.exit(main())
