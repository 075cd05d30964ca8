"""First `mcp/discover` right after sidecar start, from a warm disk cache, without connecting.

For each catalog size (default 100 and 1,000 tools per server, over 10 `_synthetic_server.py`
stdio servers, every server started with `--counter-file`):

1. prepare: a first sidecar (temporary MCP_SIDECAR_HOME, so a private cache dir) runs one
   `mcp/discover {kind: "tools"}`, which starts every server, fetches its tools and writes the
   disk cache; then it is shut down;
2. measure, repeatedly: start a fresh sidecar on the same home, send `initialize`, then
   `mcp/discover {query, kind: "tools"}`, and time from the `initialize` answer to the discover
   answer. Two variants alternate: discover sent right after the `initialize` answer, and after
   an `initialized` notification too (what an editor sends; it starts the sidecar's background
   SDK import, which competes for the CPU);
3. verify: every answer has candidates and no `unavailable` entry, and the counter file shows
   that no server process was started after the prepare step.

For context it also times, in-process, what that first discovery has to do: read the cache
files and build the documents and indexes of every server.

Goal (issue 3): under 100 ms after `initialize`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import ROOT, SIDECAR_ARGV, RawClient, Summary, machine_line, now, sidecar_env, table
from discover_latency import QUERIES, server_names, write_config

GOAL_MS = 100.0
VARIANTS = (
    "initialize -> discover",
    "initialize, initialized -> discover",
    "baseline: no stored index, initialize -> discover",
)
"""The third is the sidecar before issue 20 did its part: each run starts with the stored indexes
removed, so it parses every catalog, builds every index and embeds every tool (then stores them)."""


def counted(counter: Path) -> int:
    try:
        return len(counter.read_text(encoding="utf-8").split())
    except FileNotFoundError:
        return 0


async def prepare(home: Path) -> dict[str, Any]:
    sidecar = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
    try:
        await sidecar.initialize(initialized=True)
        result = await sidecar.request("mcp/discover", {"query": "list", "kind": "tools"}, limit_s=300)
        if result["unavailable"] or not result["candidates"]:
            raise RuntimeError(f"prepare: discovery failed: {result['unavailable']}")
        return result
    finally:
        await sidecar.close()


async def one_run(home: Path, query: str, initialized: bool) -> dict[str, Any]:
    start = now()
    sidecar = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
    try:
        await sidecar.initialize(initialized=initialized)
        answered = now()
        result = await sidecar.request("mcp/discover", {"query": query, "kind": "tools"}, limit_s=60)
        done = now()
    finally:
        await sidecar.close()
    if result["unavailable"] or not result["candidates"]:
        raise RuntimeError(f"discovery from the cache failed for {query!r}: {result['unavailable']}")
    return {"launch_to_init": (answered - start) * 1000, "init_to_discover": (done - answered) * 1000}


def in_process_breakdown(home: Path, repeats: int) -> dict[str, Summary]:
    """A cold discovery's work both ways: read every catalog file, then build documents, indexes
    and embeddings (the baseline); or read each stored index and check it against its catalog."""
    from mcp_sidecar.catalog import semantic, stored_index
    from mcp_sidecar.catalog.documents import embedding_text, tool_document
    from mcp_sidecar.catalog.index import Index

    files = sorted((home / "cache" / "catalogs").glob("tools-*.json"))
    model = semantic.load_model(home / "cache" / "models")
    assert model is not None
    samples: dict[str, list[float]] = {"read": [], "index": [], "stored": [], "spans": []}
    for _ in range(repeats + 1):
        start = now()
        loaded = [json.loads(f.read_text(encoding="utf-8")) for f in files]
        read = now()
        for payload in loaded:
            server = payload["server"]
            docs = [tool_document(server, t, i) for i, t in enumerate(payload["tools"])]
            Index.build(server, docs, model.embed([embedding_text(d) for d in docs]))
        built = now()
        for f in files:
            raw = f.read_bytes()
            data = (f.parent / f.name.replace("tools-", "index-").replace(".json", ".bin")).read_bytes()
            said = stored_index.fingerprint_of(data)
            assert said is not None
            mark = stored_index.Fingerprint(
                said.key, stored_index.catalog_digest(raw), said.filters, said.model, said.server
            )
            if stored_index.from_bytes(data, mark, raw) is None:
                raise RuntimeError(f"the stored index of {f.name} was not read")
        checked = now()
        for f in files:
            # Issue 31: the spans are read against the catalog's brackets, once per catalog whose
            # tools a discovery returns (here: every catalog, the most a first discovery pays).
            stored_index.element_spans(f.read_bytes())
        samples["read"].append((read - start) * 1000)
        samples["index"].append((built - read) * 1000)
        samples["stored"].append((checked - built) * 1000)
        samples["spans"].append((now() - checked) * 1000)
    return {k: Summary.of(v[1:]) for k, v in samples.items()}  # the first pass warms imports


async def bench_size(servers: int, per_server: int, runs: int, breakdown_repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        counter = home / "servers-started.txt"
        write_config(home, servers, per_server, counter_file=counter)
        await prepare(home)
        started_by_prepare = counted(counter)
        cache_files = list((home / "cache" / "catalogs").glob("tools-*.json"))
        cache_bytes = sum(f.stat().st_size for f in cache_files)
        samples: dict[str, list[float]] = {v: [] for v in VARIANTS}
        launch: list[float] = []
        for run_no in range(runs):
            order = VARIANTS if run_no % 2 == 0 else VARIANTS[::-1]
            for variant in order:
                if variant == VARIANTS[2]:
                    for stored in (home / "cache" / "catalogs").glob("index-*.bin"):
                        stored.unlink()
                timing = await one_run(home, QUERIES[run_no % len(QUERIES)], initialized=variant == VARIANTS[1])
                samples[variant].append(timing["init_to_discover"])
                launch.append(timing["launch_to_init"])
        started_after = counted(counter) - started_by_prepare
        breakdown = in_process_breakdown(home, breakdown_repeats)
    return {
        "servers": servers,
        "per_server": per_server,
        "total": servers * per_server,
        "samples": samples,
        "launch": Summary.of(launch),
        "started_by_prepare": started_by_prepare,
        "started_after": started_after,
        "cache_files": len(cache_files),
        "cache_kib": cache_bytes / 1024,
        "breakdown": breakdown,
    }


def report(results: Sequence[dict[str, Any]]) -> None:
    rows = []
    for r in results:
        label = f"{r['total']:,} ({r['servers']}x{r['per_server']:,})"
        for variant in VARIANTS:
            s = Summary.of(r["samples"][variant])
            rows.append([label, variant, s.n, s.min, s.median, s.p95, s.max])
        s = r["launch"]
        rows.append([label, "(launch -> initialize answer, for context)", s.n, s.min, s.median, s.p95, s.max])
    print(
        table(
            ["tools", "sequence", "n", "min", "median", "p95", "max"],
            rows,
            "First discovery from the disk cache: initialize answer -> discover answer (ms)",
        )
    )
    print()
    rows = []
    for r in results:
        b = r["breakdown"]
        rows.append(
            [
                f"{r['total']:,}",
                f"{r['cache_files']} files, {r['cache_kib']:.0f} KiB",
                b["read"].median,
                b["index"].median,
                b["stored"].median,
                b["spans"].median,
                r["started_by_prepare"],
                r["started_after"],
            ]
        )
    print(
        table(
            [
                "tools",
                "disk cache",
                "baseline: read + parse, ms",
                "baseline: documents + indexes + embeddings, ms",
                "stored indexes: read + check, ms",
                "spans against every catalog (issue 31), ms",
                "servers started: prepare",
                "servers started: measured runs",
            ],
            rows,
            "Cache contents, in-process breakdown (median), server starts",
        )
    )
    print()
    for r in results:
        for variant in VARIANTS:
            s = Summary.of(r["samples"][variant])
            verdict = "MET" if s.median < GOAL_MS else "MISSED"
            print(
                f"goal ({r['total']:,} tools, {variant}): under {GOAL_MS:.0f} ms after initialize -> "
                f"median {s.median:.1f} ms, p95 {s.p95:.1f} ms: {verdict}"
            )
        check = "PASS" if r["started_after"] == 0 else "FAIL"
        print(
            f"check ({r['total']:,} tools): no server started by the measured sidecars -> {r['started_after']}: {check}"
        )


async def run(args: argparse.Namespace) -> int:
    print(machine_line())
    print(f"servers: {', '.join(server_names(args.servers))}; {args.runs} runs per sequence and size\n")
    results = [await bench_size(args.servers, size, args.runs, args.breakdown_repeats) for size in args.sizes]
    report(results)
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--servers", type=int, default=10, help="number of servers (default 10)")
    parser.add_argument("--sizes", default="100,1000", help="tools per server, comma-separated (default 100,1000)")
    parser.add_argument("--runs", type=int, default=10, help="fresh sidecars per sequence and size (default 10)")
    parser.add_argument("--breakdown-repeats", type=int, default=5, help="in-process breakdown passes (default 5)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 servers x 100 tools, 1 run")
    args = parser.parse_args(argv)
    if args.quick:
        args.servers, args.sizes, args.runs, args.breakdown_repeats = 3, "100", 1, 2
        print("--quick: a smoke run; too few samples for the verdicts to mean anything\n")
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.servers < 1 or args.runs < 1 or not args.sizes or min(args.sizes) < 1:
        parser.error("--servers, --runs and --sizes must be >= 1")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
