"""`mcp/discover` latency with warm catalogs, next to the ranking alone and plain rank-bm25.

For each catalog size (default 100 and 1,000 tools per server, over 10 servers: 1,000 and
10,000 tools) this starts the sidecar with a temporary MCP_SIDECAR_HOME whose mcp.json lists
10 `_synthetic_server.py` stdio servers (seed = server number, so each has its own domain
vocabulary), and runs a first `mcp/discover {kind: "tools"}` that fetches every catalog. Then,
for each query of a fixed list (keyword, prefix-as-you-type and exact-id queries), in rounds:

  * `mcp/discover {query, kind: "tools"}` over JSON-RPC (raw stdio client, round trip);
  * `mcp/activeTools`, a request without catalog work: the cost of the JSON-RPC hop alone;
  * ranking alone, in-process: `mcp_sidecar.catalog.index.search` over one `Index` per server,
    built from the same descriptors (`_synthetic_server.generate_tools`) with `tool_document`;
  * plain rank-bm25: `BM25Okapi` over the same 10 catalogs as one corpus (name + description,
    lowercase `\\w+` tokens), `get_scores` + top 5.

The sidecar's top 5 is checked against the in-process ranking's (same documents, same order).
Finally, the index build time for one server of 1,000 tools (documents + `Index.build`), next
to building `BM25Okapi` for the same tools.

Goals (issue 3), at 10,000 tools: p95 under 10 ms over JSON-RPC, under 2 ms for the ranking alone.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import BENCHMARKS, PYTHON, ROOT, SIDECAR_ARGV, RawClient, Summary, machine_line, now, sidecar_env, table
from _common import write_config as write_mcp_json
from _synthetic_server import DOMAINS, generate_tools

SYNTHETIC_SERVER = BENCHMARKS / "_synthetic_server.py"
SERVER_NAMES = ("tracker", "git", "chat", "cloud", "db", "payments", "wiki", "mail", "observability", "design")
GOAL_SIZE = 10_000
GOAL_RPC_P95_MS = 10.0
GOAL_RANKING_P95_MS = 2.0
LIMIT = 5
QUERIES = (
    # keyword
    "list issues", "create pull request", "merge branch", "send message to channel", "delete user",
    "export report as csv", "restart pod", "backup table", "refund payment", "get invoice",
    "schedule meeting with attendees", "upload file to folder", "summarize thread", "rollback deployment",
    "find customer by name", "archive channel", "cancel subscription", "analyze latency", "resize image",
    "approve review", "translate document", "count rows in table", "idempotent retry",
    # prefix, as typed
    "lis iss", "crea pul", "sched meet", "del us", "sea", "d", "exp rep", "resta po", "git comm", "refu",
    "backu tab", "uplo fi",
)  # fmt: skip


def server_names(servers: int) -> list[str]:
    return [SERVER_NAMES[i] if i < len(SERVER_NAMES) else f"synthetic{i}" for i in range(servers)]


def write_config(home: Path, servers: int, per_server: int, counter_file: Path | None = None) -> None:
    entries: dict[str, Any] = {}
    for seed, name in enumerate(server_names(servers)):
        args = [str(SYNTHETIC_SERVER), "--seed", str(seed), "--count", str(per_server)]
        if counter_file is not None:
            args += ["--counter-file", str(counter_file)]
        entries[name] = {"command": PYTHON, "args": args}
    write_mcp_json(home, entries)


def catalogs(servers: int, per_server: int) -> dict[str, list[dict[str, Any]]]:
    return {name: generate_tools(seed, per_server) for seed, name in enumerate(server_names(servers))}


def exact_queries(data: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Two exact ids and one exact name that exist in the catalogs (deterministic)."""
    names = list(data)
    first, last = names[0], names[-1]
    return [
        f"{first}.{data[first][7]['name']}",
        f"{last}.{data[last][-1]['name']}",
        data[names[len(names) // 2]][3]["name"],
    ]


def build_indexes(data: dict[str, list[dict[str, Any]]]) -> list[Any]:
    from mcp_sidecar.catalog.documents import tool_document
    from mcp_sidecar.catalog.index import Index

    return [
        Index.build(server, [tool_document(server, t, i) for i, t in enumerate(tools)])
        for server, tools in data.items()
    ]


def plain_tokens(text: str) -> list[str]:
    import re

    return re.findall(r"\w+", text.lower())


def bm25_search(data: dict[str, list[dict[str, Any]]]) -> Callable[[str], list[str]]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    ids = [f"{server}.{t['name']}" for server, tools in data.items() for t in tools]
    corpus = [plain_tokens(f"{t['name']} {t.get('description') or ''}") for tools in data.values() for t in tools]
    bm25 = BM25Okapi(corpus)

    def search(query: str) -> list[str]:
        scores = bm25.get_scores(plain_tokens(query))
        top = np.argpartition(-scores, LIMIT)[:LIMIT] if len(scores) > LIMIT else np.arange(len(scores))
        top = sorted(top, key=lambda i: (-scores[i], i))
        return [ids[i] for i in top if scores[i] > 0]

    return search


async def bench_size(servers: int, per_server: int, rounds: int, warmup: int) -> dict[str, Any]:
    from mcp_sidecar.catalog.index import search

    data = catalogs(servers, per_server)
    queries = [*QUERIES, *exact_queries(data)]
    indexes = build_indexes(data)
    bm25 = bm25_search(data)
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, servers, per_server)
        sidecar = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
        try:
            await sidecar.initialize(initialized=True)
            start = now()
            first = await sidecar.request("mcp/discover", {"query": "list", "kind": "tools"}, limit_s=300)
            first_ms = (now() - start) * 1000
            if first["unavailable"]:
                raise RuntimeError(f"servers unavailable: {first['unavailable']}")

            async def rpc(query: str) -> list[str]:
                result = await sidecar.request("mcp/discover", {"query": query, "kind": "tools", "limit": LIMIT})
                return [c["id"] for c in result["candidates"]]

            def ranking(query: str) -> list[str]:
                return [f"{h.document.server}.{h.document.key}" for h in search(indexes, query, limit=LIMIT)]

            agree = 0
            for query in queries:
                agree += await rpc(query) == ranking(query)
            for _ in range(warmup):
                for query in queries:
                    await rpc(query)
                    await sidecar.request("mcp/activeTools", {})
                    ranking(query)
                    bm25(query)
            samples: dict[str, list[float]] = {"rpc": [], "hop": [], "ranking": [], "bm25": []}
            per_query: dict[str, list[float]] = {q: [] for q in queries}
            for _ in range(rounds):
                for query in queries:
                    start = now()
                    await rpc(query)
                    elapsed = (now() - start) * 1000
                    samples["rpc"].append(elapsed)
                    start = now()
                    await sidecar.request("mcp/activeTools", {})
                    samples["hop"].append((now() - start) * 1000)
                    start = now()
                    ranking(query)
                    ranked = (now() - start) * 1000
                    samples["ranking"].append(ranked)
                    per_query[query].append(ranked)
                    start = now()
                    bm25(query)
                    samples["bm25"].append((now() - start) * 1000)
        finally:
            await sidecar.close()
    slowest = sorted(per_query, key=lambda q: -statistics.median(per_query[q]))[:3]
    return {
        "servers": servers,
        "per_server": per_server,
        "total": servers * per_server,
        "first_ms": first_ms,
        "samples": samples,
        "agree": agree,
        "queries": len(queries),
        "slowest": [(q, statistics.median(per_query[q])) for q in slowest],
    }


def build_times(per_server: int, repeats: int) -> dict[str, Summary]:
    from rank_bm25 import BM25Okapi

    from mcp_sidecar.catalog.documents import tool_document
    from mcp_sidecar.catalog.index import Index

    tools = generate_tools(0, per_server)
    Index.build("warm", [tool_document("warm", t, i) for i, t in enumerate(tools)])  # imports, caches
    samples: dict[str, list[float]] = {"documents": [], "index": [], "total": [], "bm25": []}
    for _ in range(repeats):
        start = now()
        docs = [tool_document("tracker", t, i) for i, t in enumerate(tools)]
        built = now()
        Index.build("tracker", docs)
        done = now()
        samples["documents"].append((built - start) * 1000)
        samples["index"].append((done - built) * 1000)
        samples["total"].append((done - start) * 1000)
        start = now()
        BM25Okapi([plain_tokens(f"{t['name']} {t.get('description') or ''}") for t in tools])
        samples["bm25"].append((now() - start) * 1000)
    return {k: Summary.of(v) for k, v in samples.items()}


def report(results: Sequence[dict[str, Any]], builds: dict[str, Summary], per_server: int) -> None:
    rows = []
    for r in results:
        label = f"{r['total']:,} ({r['servers']}x{r['per_server']:,})"
        for key, path in (
            ("rpc", "sidecar mcp/discover over JSON-RPC"),
            ("hop", "sidecar mcp/activeTools (JSON-RPC hop, no catalog work)"),
            ("ranking", "ranking alone (index.search, in-process)"),
            ("bm25", "plain rank-bm25 (get_scores + top 5, in-process)"),
        ):
            s = Summary.of(r["samples"][key])
            rows.append([label, path, s.n, s.min, s.median, s.p95, s.max])
    print(table(["tools", "path", "n", "min", "median", "p95", "max"], rows, "Discovery latency, warm catalogs (ms)"))
    print()
    other = []
    for r in results:
        slow = "; ".join(f"{q!r} {ms:.2f}" for q, ms in r["slowest"])
        other.append([f"{r['total']:,}", r["first_ms"], f"{r['agree']}/{r['queries']}", slow])
    print(
        table(
            [
                "tools",
                "first discovery (fetch all), ms",
                "sidecar top 5 = in-process top 5",
                "slowest ranking (median ms)",
            ],
            other,
            "First discovery, consistency, slowest queries",
        )
    )
    print()
    rows = [
        [f"tool_document x {per_server:,}", *_cells(builds["documents"])],
        ["Index.build", *_cells(builds["index"])],
        ["documents + Index.build", *_cells(builds["total"])],
        ["BM25Okapi (tokenise + build), for comparison", *_cells(builds["bm25"])],
    ]
    print(table(["step", "n", "min", "median", "p95"], rows, f"Index build, one server of {per_server:,} tools (ms)"))
    print()
    goal = [r for r in results if r["total"] == GOAL_SIZE]
    if not goal:
        print(f"goals apply at {GOAL_SIZE:,} tools; not measured in this run (see --sizes)")
        return
    rpc = Summary.of(goal[0]["samples"]["rpc"]).p95
    ranking = Summary.of(goal[0]["samples"]["ranking"]).p95
    print(
        f"goal: at {GOAL_SIZE:,} tools, p95 over JSON-RPC under {GOAL_RPC_P95_MS:.0f} ms -> "
        f"{rpc:.2f} ms: {_verdict(rpc < GOAL_RPC_P95_MS)}"
    )
    print(
        f"goal: at {GOAL_SIZE:,} tools, p95 of the ranking alone under {GOAL_RANKING_P95_MS:.0f} ms -> "
        f"{ranking:.2f} ms: {_verdict(ranking < GOAL_RANKING_P95_MS)}"
    )


def _cells(s: Summary) -> list[Any]:
    return [s.n, s.min, s.median, s.p95]


def _verdict(met: bool) -> str:
    return "MET" if met else "MISSED"


async def run(args: argparse.Namespace) -> int:
    print(machine_line())
    domains = ", ".join(f"{n} ({DOMAINS[i % len(DOMAINS)][0]})" for i, n in enumerate(server_names(args.servers)))
    print(f"servers: {domains}")
    print(f"{len(QUERIES) + 3} queries x {args.rounds} rounds after {args.warmup} warm-up round(s); limit {LIMIT}\n")
    results = [await bench_size(args.servers, size, args.rounds, args.warmup) for size in args.sizes]
    builds = build_times(args.build_size, args.build_repeats)
    report(results, builds, args.build_size)
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--servers", type=int, default=10, help="number of servers (default 10)")
    parser.add_argument("--sizes", default="100,1000", help="tools per server, comma-separated (default 100,1000)")
    parser.add_argument("--rounds", type=int, default=10, help="measured rounds over the query list (default 10)")
    parser.add_argument("--warmup", type=int, default=1, help="warm-up rounds (default 1)")
    parser.add_argument("--build-size", type=int, default=1000, help="tools in the index-build test (default 1000)")
    parser.add_argument("--build-repeats", type=int, default=20, help="index builds measured (default 20)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 servers x 100 tools, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.servers, args.sizes, args.rounds, args.warmup, args.build_repeats = 3, "100", 1, 0, 3
        print("--quick: a smoke run; too few samples and tools for the verdicts to mean anything\n")
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.servers < 1 or args.rounds < 1 or not args.sizes or min(args.sizes) < 10:
        parser.error("--servers and --rounds must be >= 1, --sizes at least 10 each")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
