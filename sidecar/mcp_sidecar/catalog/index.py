"""Ranked metadata search: BM25 with weighted fields, over one index per server and kind.

Names and titles weigh more than descriptions (a BM25F-style weighted term frequency);
tokens are identifier-aware (`tokens.py`); the query's last word also matches as a prefix,
so a palette can search while the user types; a query that is exactly an entry's name or
id ranks that entry first. Scores use statistics summed over every index searched, so
entries of different servers compare fairly, while a server's change rebuilds only that
server's index. Order is deterministic: score, then kind, server and catalog position.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_sidecar.catalog.tokens import STOPWORDS, stem, terms, tokenize

K1 = 1.2
B = 0.75
FIELD_WEIGHTS = {"name": 3.0, "title": 2.0, "description": 1.0, "extra": 0.5}
PREFIX_DISCOUNT = 0.8
"""A prefix-only match of the last query word counts a little less than the whole word."""
EXACT_BOOST = 1_000.0
MAX_PREFIX_EXPANSIONS = 64
KIND_ORDER = {"tool": 0, "resource": 1, "template": 2, "prompt": 3}


@dataclass(frozen=True, slots=True)
class Document:
    kind: str
    server: str
    key: str
    """Unique within the server and kind: tool name, resource URI, template, prompt name."""
    fields: dict[str, str]
    exact: frozenset[str]
    """Lowercased spellings that rank this entry first when typed exactly (name, id, ...)."""
    position: int
    payload: Any = None


@dataclass(slots=True)
class Index:
    """One server's entries of one catalog, with postings as arrays for vectorised scoring."""

    server: str
    documents: list[Document]
    postings: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """term → (document ids, weighted term frequencies), both numpy arrays."""
    lengths: Any = None
    total_length: float = 0.0
    vocabulary: list[str] = field(default_factory=list)
    exact: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, server: str, documents: Sequence[Document]) -> Index:
        import numpy as np

        index = cls(server, list(documents))
        postings: dict[str, dict[int, float]] = {}
        lengths: list[float] = []
        for doc_id, doc in enumerate(index.documents):
            length = 0.0
            for name, text in doc.fields.items():
                weight = FIELD_WEIGHTS.get(name, 1.0)
                for term in terms(text):
                    bucket = postings.setdefault(term, {})
                    bucket[doc_id] = bucket.get(doc_id, 0.0) + weight
                    length += weight
            for spelling in doc.exact:
                index.exact.setdefault(spelling, []).append(doc_id)
            lengths.append(length)
        index.lengths = np.asarray(lengths, dtype=np.float64)
        index.total_length = float(sum(lengths))
        index.postings = {
            term: (np.fromiter(docs.keys(), np.int64, len(docs)), np.fromiter(docs.values(), np.float64, len(docs)))
            for term, docs in postings.items()
        }
        index.vocabulary = sorted(index.postings)
        return index

    def df(self, term: str) -> int:
        found = self.postings.get(term)
        return 0 if found is None else len(found[0])

    def with_prefix(self, prefix: str) -> list[str]:
        start = bisect_left(self.vocabulary, prefix)
        out: list[str] = []
        for term in self.vocabulary[start:]:
            if not term.startswith(prefix):
                break
            out.append(term)
        return out


@dataclass(frozen=True, slots=True)
class Hit:
    score: float
    document: Document


@dataclass(frozen=True, slots=True)
class Query:
    words: tuple[str, ...]
    """Whole-word terms (stemmed)."""
    prefix: str | None
    """The last word, raw, when it may still be being typed."""
    exact: str


def parse_query(text: str) -> Query:
    tokens = tokenize(text)
    exact = text.strip().lower()
    prefix: str | None = None
    if tokens and text and not text[-1].isspace():
        prefix = tokens[-1]
        tokens = tokens[:-1]
    words = [t for t in tokens if t not in STOPWORDS] or tokens
    return Query(words=tuple(stem(t) for t in words), prefix=prefix, exact=exact)


def search(
    indexes: Iterable[Index],
    text: str,
    *,
    kinds: frozenset[str] | None = None,
    limit: int = 5,
) -> list[Hit]:
    pool = list(indexes)
    query = parse_query(text)
    if not query.words and not query.prefix:
        return _browse(pool, kinds, limit)
    n_docs = sum(len(ix.documents) for ix in pool)
    if n_docs == 0:
        return []
    avg_length = max(sum(ix.total_length for ix in pool) / n_docs, 1e-9)

    def idf(term: str) -> float:
        df = sum(ix.df(term) for ix in pool)
        return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))

    # The last word: itself (stemmed) at full weight, and every longer term it starts.
    groups: list[list[tuple[str, float]]] = [[(w, idf(w))] for w in dict.fromkeys(query.words)]
    if query.prefix:
        whole = stem(query.prefix)
        expansions: set[str] = set()
        if not query.prefix.isdigit():
            expansions = {t for ix in pool for t in ix.with_prefix(query.prefix)}
        expansions.discard(whole)
        if len(expansions) > MAX_PREFIX_EXPANSIONS:
            # The most frequent completions are what a person typing most likely means.
            frequency = {t: sum(ix.df(t) for ix in pool) for t in expansions}
            expansions = set(sorted(expansions, key=lambda t: (-frequency[t], t))[:MAX_PREFIX_EXPANSIONS])
        group = [(whole, idf(whole))] + [(t, idf(t) * PREFIX_DISCOUNT) for t in sorted(expansions)]
        groups.append(group)

    import numpy as np

    hits: list[Hit] = []
    for ix in pool:
        if not ix.documents:
            continue
        scores = np.zeros(len(ix.documents))
        denominator_base = K1 * (1 - B + B * ix.lengths / avg_length)
        for group in groups:
            best: Any = None
            for term, weight in group:
                found = ix.postings.get(term)
                if found is None:
                    continue
                docs, tf = found
                value = weight * tf * (K1 + 1) / (tf + denominator_base[docs])
                if best is None:
                    best = np.zeros(len(ix.documents))
                best[docs] = np.maximum(best[docs], value)
            if best is not None:
                scores += best
        for doc_id in ix.exact.get(query.exact, ()):
            scores[doc_id] += EXACT_BOOST
        if kinds is not None:
            allowed = np.fromiter((d.kind in kinds for d in ix.documents), bool, len(ix.documents))
            scores[~allowed] = 0.0
        matched = np.flatnonzero(scores > 0)
        if len(matched) > limit:
            # Keep every entry tied with the limit-th score, so ordering stays deterministic.
            threshold = np.partition(scores[matched], len(matched) - limit)[len(matched) - limit]
            matched = matched[scores[matched] >= threshold]
        hits.extend(Hit(float(scores[i]), ix.documents[i]) for i in matched)
    hits.sort(key=_order)
    return hits[:limit]


def _order(hit: Hit) -> tuple[float, int, str, int]:
    doc = hit.document
    return (-round(hit.score, 9), KIND_ORDER.get(doc.kind, 9), doc.server, doc.position)


def _browse(pool: list[Index], kinds: frozenset[str] | None, limit: int) -> list[Hit]:
    docs = [d for ix in pool for d in ix.documents if kinds is None or d.kind in kinds]
    docs.sort(key=lambda d: (KIND_ORDER.get(d.kind, 9), d.server, d.position))
    return [Hit(0.0, d) for d in docs[:limit]]
