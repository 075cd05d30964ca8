"""`mcp/discover` latency with warm catalogs, next to the ranking alone and plain rank-bm25.

For each catalog size (default 100 and 1,000 tools per server, over 10 servers: 1,000 and
10,000 tools) this starts the sidecar with a temporary MCP_SIDECAR_HOME whose mcp.json lists
10 `_synthetic_server.py` stdio servers (seed = server number, so each has its own domain
vocabulary), and runs a first `mcp/discover {kind: "tools"}` that fetches every catalog. Then,
for each query of a fixed list (keyword, prefix-as-you-type and exact-id queries), in rounds:

  * `mcp/discover {query, kind: "tools"}` over JSON-RPC (raw stdio client, round trip);
  * `mcp/activeTools`, a request without catalog work: the cost of the JSON-RPC hop alone;
  * ranking alone, in-process: `mcp_sidecar.catalog.hybrid.search` with the semantic model over
    one `Index` per server (with embeddings), built from the same descriptors
    (`_synthetic_server.generate_tools`) with `tool_document` (what `mcp/discover` ranks);
  * keywords alone, in-process: `mcp_sidecar.catalog.index.search` (BM25F without the model);
  * plain rank-bm25: `BM25Okapi` over the same 10 catalogs as one corpus (name + description,
    lowercase `\\w+` tokens), `get_scores` + top 5.

The sidecar's top 5 is checked against the in-process ranking's (same documents, same order).
Finally, the index build time for one server of 1,000 tools (documents + `Index.build`, and the
embeddings), next to building `BM25Okapi` for the same tools, and the memory the model and
10,000 embeddings add to a process (RSS before loading the model and after embedding).

Goals (issue 20), at 10,000 tools with the semantic signal on: p95 under 10 ms over JSON-RPC,
under 3 ms for the ranking alone; index and embeddings for 1,000 tools under 1 s; the model and
10,000 embeddings under 40 MiB.
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
GOAL_RANKING_P95_MS = 3.0
GOAL_BUILD_MS = 1000.0
GOAL_MODEL_MIB = 40.0
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


def build_indexes(data: dict[str, list[dict[str, Any]]], model: Any) -> list[Any]:
    from mcp_sidecar.catalog.documents import embedding_text, tool_document
    from mcp_sidecar.catalog.index import Index

    out = []
    for server, tools in data.items():
        docs = [tool_document(server, t, i) for i, t in enumerate(tools)]
        out.append(Index.build(server, docs, model.embed([embedding_text(d) for d in docs])))
    return out


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


async def bench_size(servers: int, per_server: int, rounds: int, warmup: int) -> dict[str, Any]:  # noqa: PLR0915
    from mcp_sidecar.catalog import hybrid, semantic
    from mcp_sidecar.catalog.index import search as keyword_search

    model = semantic.load_model()
    data = catalogs(servers, per_server)
    queries = [*QUERIES, *exact_queries(data)]
    indexes = build_indexes(data, model)
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
                hits = hybrid.search(indexes, query, kinds=frozenset({"tool"}), limit=LIMIT, model=model)
                return [f"{h.document.server}.{h.document.key}" for h in hits]

            def keywords(query: str) -> list[str]:
                hits = keyword_search(indexes, query, kinds=frozenset({"tool"}), limit=LIMIT)
                return [f"{h.document.server}.{h.document.key}" for h in hits]

            agree = 0
            for query in queries:
                agree += await rpc(query) == ranking(query)
            for _ in range(warmup):
                for query in queries:
                    await rpc(query)
                    await sidecar.request("mcp/activeTools", {})
                    ranking(query)
                    keywords(query)
                    bm25(query)
            samples: dict[str, list[float]] = {"rpc": [], "hop": [], "ranking": [], "keywords": [], "bm25": []}
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
                    keywords(query)
                    samples["keywords"].append((now() - start) * 1000)
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

    from mcp_sidecar.catalog import semantic
    from mcp_sidecar.catalog.documents import embedding_text, tool_document
    from mcp_sidecar.catalog.index import Index

    tools = generate_tools(0, per_server)
    model = semantic.load_model()
    assert model is not None
    Index.build("warm", [tool_document("warm", t, i) for i, t in enumerate(tools)])  # imports, caches
    samples: dict[str, list[float]] = {"documents": [], "index": [], "embeddings": [], "total": [], "bm25": []}
    for repeat in range(repeats):
        # A fresh catalog's words each time (new seed): the word cache gives no head start.
        tools = generate_tools(1000 + repeat, per_server)
        start = now()
        docs = [tool_document("tracker", t, i) for i, t in enumerate(tools)]
        built = now()
        Index.build("tracker", docs)
        indexed = now()
        model.embed([embedding_text(d) for d in docs])
        done = now()
        samples["documents"].append((built - start) * 1000)
        samples["index"].append((indexed - built) * 1000)
        samples["embeddings"].append((done - indexed) * 1000)
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
            ("ranking", "ranking alone (hybrid.search with the model, in-process)"),
            ("keywords", "keywords alone (index.search, in-process)"),
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
        ["embeddings (model.embed of embedding_text)", *_cells(builds["embeddings"])],
        ["documents + Index.build + embeddings", *_cells(builds["total"])],
        ["BM25Okapi (tokenise + build), for comparison", *_cells(builds["bm25"])],
    ]
    print(table(["step", "n", "min", "median", "p95"], rows, f"Index build, one server of {per_server:,} tools (ms)"))
    print()
    build = builds["total"].median
    print(
        f"goal: documents, index and embeddings for {per_server:,} tools under {GOAL_BUILD_MS:.0f} ms -> "
        f"{build:.1f} ms (median): {_verdict(build < GOAL_BUILD_MS)}"
    )
    memory = model_memory(GOAL_SIZE)
    print(
        f"goal: the model and {GOAL_SIZE:,} embeddings under {GOAL_MODEL_MIB:.0f} MiB -> "
        f"{memory['added']:.1f} MiB added to RSS (model loaded {memory['model']:.1f}, "
        f"after embedding {memory['added']:.1f}; the vectors alone {memory['vectors']:.1f}; "
        f"{memory['first']:.1f} on the first start ever, which compiles the tokenizer): "
        f"{_verdict(memory['added'] < GOAL_MODEL_MIB)}"
    )
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


MEMORY_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[2])
import numpy as np  # imported by the sidecar anyway: not the model's cost
from _synthetic_server import generate_tools
from mcp_sidecar.catalog.documents import embedding_text, tool_document
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
texts = [embedding_text(tool_document(f"s{i % 10}", t, i)) for i, t in enumerate(
    t for seed in range(10) for t in generate_tools(seed, int(sys.argv[1]) // 10))]
before = rss()
from pathlib import Path
from mcp_sidecar.catalog import semantic
model = semantic.load_model(Path(sys.argv[3]))  # the models folder of the cache, as the sidecar loads it
loaded = rss()
vectors = model.embed(texts)  # what stays: the model, its merge tables, its word cache (bounded), the vectors
print(json.dumps({"model": loaded - before, "added": rss() - before, "vectors": vectors.nbytes / 2**20}))
"""


def model_memory(total: int) -> dict[str, float]:
    """RSS a fresh process adds by loading the model and embedding `total` tools (MiB), as on every
    start but the first: the compiled tokenizer is in the cache (a first probe, not counted, puts
    it there; its own figure is returned as `first`)."""
    import json
    import subprocess

    def probe(models: str) -> dict[str, float]:
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, str(total), str(ROOT / "benchmarks"), models],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        found: dict[str, float] = json.loads(done.stdout)
        return found

    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-models-") as models:
        first = probe(models)
        found = probe(models)
    return {**found, "first": first["added"]}


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
