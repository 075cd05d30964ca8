"""What each ranking variant costs at 10,000 tools, in a fresh process (`retrieval_quality.py --cost`).

10 servers of 1,000 synthetic tools (`discover_latency.catalogs`: the latency benchmark's), their
indexes with WordLlama's embeddings built as discovery builds them. Then, per variant:

  * load: the encoder's load (runtime import and model session), none for today's ranking;
  * cold: that load plus the first ranked answer, the encoder's part of a cold start (the
    sidecar's own cold start, from a warm disk cache with stored indexes and their encoder
    vectors, is `discover_coldstart.py`'s figure plus this);
  * p50 / p95 of the ranking alone (`hybrid.search`, limit 5, kind tools) over the latency
    benchmark's queries and eight task-style requests naming its servers; the encoder's document
    vectors are random unit vectors (their values do not change the cost; making real ones for
    10,000 tools takes minutes, below);
  * RSS added by the variant: after the load, the 10,000 vectors and the queries, over before
    (freed heap handed back first);
  * embedding 10,000 tools once: the encoder timed on 200 of them, extrapolated.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

TASK_QUERIES = (
    "find the open issue about login timeouts in tracker and post a two-line summary of it in chat",
    "in db, count the rows of the orders table and then export the report as csv",
    "rollback the deployment in cloud and ask observability to analyze the latency since then",
    "refund the last payment of the customer in payments and send them a mail about it",
    "create a wiki page for the release notes, then schedule a meeting with the attendees",
    "merge the branch with the fix in git and tell the team in chat that it is done",
    "archive the old channel in chat and upload the exported file to a folder in design",
    "check in observability why the pod restarts and restart it in cloud if it is stuck",
)
SERVERS, PER_SERVER = 10, 1000


def _rss_kib() -> int:
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def measure(variant: str) -> dict[str, Any]:
    """`today`, `rewrite`, `NAME` or `NAME+rewrite` (NAME a candidate of `_encoders.py`)."""
    from _encoders import load
    from discover_latency import QUERIES, catalogs

    from mcp_sidecar.catalog import hybrid, semantic
    from mcp_sidecar.catalog.documents import embedding_text, tool_document
    from mcp_sidecar.catalog.index import Index

    model = semantic.load_model()
    indexes = []
    texts: list[str] = []
    for server, tools in catalogs(SERVERS, PER_SERVER).items():
        docs = [tool_document(server, t, i) for i, t in enumerate(tools)]
        texts += [embedding_text(d) for d in docs[:20]]
        indexes.append(Index.build(server, docs, model.embed([embedding_text(d) for d in docs])))
    name, _, tail = variant.partition("+")
    rewrite = variant in ("rewrite",) or tail == "rewrite"
    encoder = None
    before = _rss_kib()
    start = time.perf_counter()
    if name not in ("today", "rewrite"):
        encoder = load(name)
        if encoder is None:
            return {"variant": variant, "missing": True}
        rng = np.random.default_rng(7)
        width = encoder.embed(["x"]).shape[1]
        for ix in indexes:
            vectors = rng.standard_normal((len(ix.documents), width)).astype(np.float32)
            ix.encoded = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    load_ms = (time.perf_counter() - start) * 1000
    queries = [*QUERIES, *TASK_QUERIES]

    def rank(query: str) -> None:
        hybrid.search(indexes, query, kinds=frozenset({"tool"}), limit=5, model=model, encoder=encoder,
                      rewrite_query=rewrite)  # fmt: skip

    first = time.perf_counter()
    rank(TASK_QUERIES[0])
    cold_ms = load_ms + (time.perf_counter() - first) * 1000
    times = []
    for _ in range(3):
        for query in queries:
            t = time.perf_counter()
            rank(query)
            times.append((time.perf_counter() - t) * 1000)
    rss_mib = (_rss_kib() - before) / 1024
    per_tool_ms = None
    if encoder is not None:
        t = time.perf_counter()
        encoder.embed_documents(texts[:200])
        per_tool_ms = (time.perf_counter() - t) * 1000 / 200
    times.sort()
    return {
        "variant": variant,
        "load_ms": load_ms,
        "cold_ms": cold_ms,
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
        "rss_mib": rss_mib,
        "embed_10k_s": per_tool_ms * 10_000 / 1000 if per_tool_ms is not None else None,
    }


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
