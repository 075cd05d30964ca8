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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_sidecar.catalog.tokens import STOPWORDS, stem, tokenize

K1 = 1.2
B = 0.75
FIELD_WEIGHTS = {"name": 3.0, "title": 2.0, "description": 1.0, "parameters": 0.5, "extra": 0.5}
PREFIX_DISCOUNT = 0.8
"""A prefix-only match of the last query word counts a little less than the whole word."""
EXACT_BOOST = 1_000.0
MAX_PREFIX_EXPANSIONS = 64
SYNONYM_DISCOUNT = 0.6
"""A synonym of a query word counts less than the word itself."""
SYNONYM_GROUPS = (
    ("directory", "folder", "dir"),
    ("delete", "remove", "erase", "forget", "drop"),
    ("create", "make", "new", "add"),
    ("url", "website", "site", "webpage", "web"),
    ("fetch", "download", "retrieve"),
    ("size", "big", "large", "bytes"),
    ("move", "rename"),
    ("search", "find", "lookup", "look"),
    ("read", "open", "view"),
    ("write", "save"),
    ("edit", "modify", "change"),
    ("log", "history"),
    ("diff", "changed", "difference"),
    ("timezone", "zone"),
    ("sampling", "llm", "model", "completion"),
    ("elicitation", "ask", "input"),
    ("observation", "fact", "note"),
    ("entity", "person", "people", "someone"),
    ("relation", "link", "relationship", "connect"),
    ("gzip", "compress", "zip"),
    ("image", "picture", "photo"),
    ("memory", "remember", "graph", "knowledge"),
)
"""Words people use for the vocabulary of tool catalogs; matched both ways, on stems."""
MIN_ABBREVIATION = 2
"""An earlier query word that no entry contains is read as an abbreviation from this length on."""
VECTOR_THRESHOLD = 600
"""Above this many postings touched by a query, scoring switches to numpy arrays."""
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
    """One server's entries of one catalog.

    Postings are plain lists, so building an index needs no numpy; a query that touches many
    postings converts them once to arrays and scores them vectorised.
    """

    server: str
    documents: Sequence[Document]
    """A list, or for an index read from the disk cache a sequence that makes each on first use."""
    postings: Mapping[str, tuple[Sequence[int], Sequence[float]]] = field(default_factory=dict)
    """term → (document ids, weighted term frequencies)."""
    lengths: Sequence[float] = field(default_factory=list)
    _arrays: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    _length_array: Any = None
    """term → (document ids, weighted term frequencies), both numpy arrays."""
    total_length: float = 0.0
    vocabulary: list[str] = field(default_factory=list)
    """Sorted surface words (as written, lowercased) and terms, for prefix matching."""
    surface: Mapping[str, str] = field(default_factory=dict)
    """A word as written → its term: "queri" must reach "query" while "queries" is typed."""
    exact: Mapping[str, Sequence[int]] = field(default_factory=dict)
    vectors: Any = None
    """One unit vector per document (float32, `catalog/semantic.py`), or None without the model."""
    encoded: Any = None
    """One unit vector per document from the optional encoder (`catalog/encoder.py`), or None."""
    kinds: Sequence[str] = field(default_factory=list)
    """Each document's kind, so filters never need the documents themselves."""
    _masks: dict[frozenset[str], Any] = field(default_factory=dict)

    @classmethod
    def build(cls, server: str, documents: Sequence[Document], vectors: Any = None) -> Index:
        index = cls(server, list(documents), vectors=vectors)
        index.kinds = [d.kind for d in index.documents]
        postings: dict[str, dict[int, float]] = {}
        surface: dict[str, str] = {}
        exact: dict[str, list[int]] = {}
        lengths: list[float] = []
        for doc_id, doc in enumerate(index.documents):
            length = 0.0
            for name, text in doc.fields.items():
                weight = FIELD_WEIGHTS.get(name, 1.0)
                for word in tokenize(text):
                    term = surface.setdefault(word, stem(word))
                    bucket = postings.setdefault(term, {})
                    bucket[doc_id] = bucket.get(doc_id, 0.0) + weight
                    length += weight
            for spelling in doc.exact:
                exact.setdefault(spelling, []).append(doc_id)
            lengths.append(length)
        index.lengths = lengths
        index.total_length = float(sum(lengths))
        index.postings = {term: (list(docs.keys()), list(docs.values())) for term, docs in postings.items()}
        index.surface, index.exact = surface, exact
        index.vocabulary = sorted(postings.keys() | surface.keys())
        return index

    def kind_mask(self, kinds: frozenset[str]) -> Any:
        """A boolean array: which documents are of one of `kinds`."""
        mask = self._masks.get(kinds)
        if mask is None:
            import numpy as np

            mask = self._masks[kinds] = np.fromiter((k in kinds for k in self.kinds), bool, len(self.kinds))
        return mask

    def arrays(self, term: str) -> tuple[Any, Any] | None:
        found = self._arrays.get(term)
        if found is None:
            posting = self.postings.get(term)
            if posting is None:
                return None
            import numpy as np

            found = self._arrays[term] = (np.asarray(posting[0], np.int64), np.asarray(posting[1], np.float64))
        return found

    def length_array(self) -> Any:
        if self._length_array is None:
            import numpy as np

            self._length_array = np.asarray(self.lengths, np.float64)
        return self._length_array

    def contains(self, term: str, doc_id: int) -> bool:
        """Whether the document has the term (postings are in document order)."""
        posting = self.postings.get(term)
        if posting is None:
            return False
        docs = posting[0]
        at = bisect_left(docs, doc_id)
        return at < len(docs) and int(docs[at]) == doc_id

    def df(self, term: str) -> int:
        found = self.postings.get(term)
        return 0 if found is None else len(found[0])

    def with_prefix(self, prefix: str) -> set[str]:
        """The terms of every word or term that starts with `prefix`."""
        start = bisect_left(self.vocabulary, prefix)
        out: set[str] = set()
        for word in self.vocabulary[start:]:
            if not word.startswith(prefix):
                break
            if word in self.postings:
                out.add(word)
            if word in self.surface:
                out.add(self.surface[word])
        return out


def _synonyms() -> dict[str, tuple[str, ...]]:
    table: dict[str, set[str]] = {}
    for group in SYNONYM_GROUPS:
        stems = {stem(w) for w in group}
        for term in stems:
            table.setdefault(term, set()).update(stems - {term})
    return {term: tuple(sorted(others)) for term, others in table.items()}


SYNONYMS = _synonyms()


@dataclass(frozen=True, slots=True)
class Hit:
    score: float
    document: Document
    keyword: int | None = None
    """Its rank (1-based) by keywords alone, when the keywords matched it (`catalog/hybrid.py`)."""
    semantic: int | None = None
    """Its rank (1-based) by meaning alone, when the model ranked it near the top."""
    similarity: float | None = None
    """Cosine similarity of the query and the entry, when the model is on."""
    weak: bool = False
    """Below the confidence threshold: the nearest entry, not a match (`catalog/hybrid.py`)."""
    row: int = -1
    """Where the document is in its index's `documents`."""


@dataclass(frozen=True, slots=True)
class Query:
    words: tuple[str, ...]
    """Whole-word terms (stemmed)."""
    prefix: str | None
    """The last word, raw, when it may still be being typed."""
    exact: str
    raw: tuple[str, ...] = ()
    """The words as typed (lowercased), aligned with `words`."""


def parse_query(text: str) -> Query:
    tokens = tokenize(text)
    exact = text.strip().lower()
    prefix: str | None = None
    if tokens and text and not text[-1].isspace():
        prefix = tokens[-1]
        tokens = tokens[:-1]
    words = [t for t in tokens if t not in STOPWORDS] or tokens
    return Query(words=tuple(stem(t) for t in words), prefix=prefix, exact=exact, raw=tuple(words))


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
    groups = term_groups(query, Terms(pool, n_docs))
    touched = sum(ix.df(term) for ix in pool for group in groups for term, _ in group)
    score = _score_arrays if touched > VECTOR_THRESHOLD else _score_lists
    hits: list[Hit] = []
    for ix in pool:
        if ix.documents:
            hits.extend(score(ix, groups, avg_length, query.exact, kinds, limit))
    hits.sort(key=hit_order)
    return hits[:limit]


Groups = list[list[tuple[str, float]]]


class Terms:
    """The weighted terms a query word stands for, over a pool of indexes."""

    def __init__(self, pool: list[Index], n_docs: int) -> None:
        self.pool = pool
        self.n_docs = n_docs

    def idf(self, term: str) -> float:
        df = sum(ix.df(term) for ix in self.pool)
        return math.log(1 + (self.n_docs - df + 0.5) / (df + 0.5))

    def contain_any(self, group: list[tuple[str, float]]) -> bool:
        return any(ix.df(t) for ix in self.pool for t, _ in group)

    def with_e_variant(self, term: str) -> list[tuple[str, float]]:
        # The stemmer leaves "change" and "changes" at "change" but "changed" at "chang":
        # a term also matches its spelling with the final e added or removed.
        out = [(term, self.idf(term))]
        if len(term) > 3 and term.isalpha():
            other = term[:-1] if term.endswith("e") else term + "e"
            if any(ix.df(other) for ix in self.pool):
                out.append((other, self.idf(other)))
        out += [(s, self.idf(s) * SYNONYM_DISCOUNT) for s in SYNONYMS.get(term, ()) if s != term]
        return out

    def completions(self, prefix: str, whole: str) -> list[tuple[str, float]]:
        if prefix.isdigit():
            return []
        expansions = {t for ix in self.pool for t in ix.with_prefix(prefix)}
        expansions.difference_update(t for t, _ in self.with_e_variant(whole))
        if len(expansions) > MAX_PREFIX_EXPANSIONS:
            # The most frequent completions are what a person typing most likely means.
            frequency = {t: sum(ix.df(t) for ix in self.pool) for t in expansions}
            expansions = set(sorted(expansions, key=lambda t: (-frequency[t], t))[:MAX_PREFIX_EXPANSIONS])
        return [(t, self.idf(t) * PREFIX_DISCOUNT) for t in sorted(expansions)]


def term_groups(query: Query, terms: Terms) -> Groups:
    # Each word: itself (stemmed, e-variant) at full weight. An earlier word that no entry
    # contains is read as an abbreviation ("mov fi", "sea fil"), and the last word, unless a
    # space ends it, as still being typed: their completions count too, a little less.
    groups: Groups = []
    pairs = list(zip(query.words, query.raw or query.words, strict=True))
    last = len(pairs) - 1 if query.prefix is None else len(pairs)  # "lis " is a whole word
    seen: set[str] = set()
    for i, (word, raw) in enumerate(pairs):
        if word in seen:
            continue
        seen.add(word)
        group = terms.with_e_variant(word)
        if i < last and len(raw) >= MIN_ABBREVIATION and not terms.contain_any(group):
            group += terms.completions(raw, word)
        groups.append(group)
    if query.prefix:
        whole = stem(query.prefix)
        groups.append(terms.with_e_variant(whole) + terms.completions(query.prefix, whole))
    return groups


def _score_lists(
    ix: Index, groups: Groups, avg_length: float, exact: str, kinds: frozenset[str] | None, limit: int
) -> list[Hit]:
    """Plain-Python scoring: fastest when a query touches few postings, and needs no numpy."""
    lengths = ix.lengths
    scores: dict[int, float] = {}
    for group in groups:
        best: dict[int, float] = {}
        for term, weight in group:
            posting = ix.postings.get(term)
            if posting is None:
                continue
            for doc_id, tf in zip(*posting, strict=True):
                value = weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[doc_id] / avg_length))
                if value > best.get(doc_id, 0.0):
                    best[doc_id] = value
        for doc_id, value in best.items():
            scores[doc_id] = scores.get(doc_id, 0.0) + value
    for doc_id in ix.exact.get(exact, ()):
        scores[doc_id] = scores.get(doc_id, 0.0) + EXACT_BOOST
    docs, kind_of = ix.documents, ix.kinds
    found = [(value, i) for i, value in scores.items() if value > 0 and (kinds is None or kind_of[i] in kinds)]
    if len(found) > limit:
        # Keep every entry tied with the limit-th score, so ordering stays deterministic.
        threshold = sorted((v for v, _ in found), reverse=True)[limit - 1]
        found = [(v, i) for v, i in found if v >= threshold]
    return [Hit(v, docs[i], row=i) for v, i in found]


def _score_arrays(
    ix: Index, groups: Groups, avg_length: float, exact: str, kinds: frozenset[str] | None, limit: int
) -> list[Hit]:
    """Vectorised scoring for queries that touch many postings."""
    import numpy as np

    scores = np.zeros(len(ix.documents))
    denominator_base = K1 * (1 - B + B * ix.length_array() / avg_length)
    for group in groups:
        best: Any = None
        for term, weight in group:
            found = ix.arrays(term)
            if found is None:
                continue
            docs, tf = found
            value = weight * tf * (K1 + 1) / (tf + denominator_base[docs])
            if best is None:
                best = np.zeros(len(ix.documents))
            best[docs] = np.maximum(best[docs], value)
        if best is not None:
            scores += best
    for doc_id in ix.exact.get(exact, ()):
        scores[doc_id] += EXACT_BOOST
    if kinds is not None:
        scores[~ix.kind_mask(kinds)] = 0.0
    matched = np.flatnonzero(scores > 0)
    if len(matched) > limit:
        threshold = np.partition(scores[matched], len(matched) - limit)[len(matched) - limit]
        matched = matched[scores[matched] >= threshold]
    return [Hit(float(scores[i]), ix.documents[i], row=i) for i in matched.tolist()]


def hit_order(hit: Hit) -> tuple[float, int, str, int]:
    doc = hit.document
    return (-round(hit.score, 9), KIND_ORDER.get(doc.kind, 9), doc.server, doc.position)


def _browse(pool: list[Index], kinds: frozenset[str] | None, limit: int) -> list[Hit]:
    # Documents are in catalog position order within an index: the first `limit` of each kind
    # per index are all that can be shown.
    rows: list[tuple[int, str, int, Index, int]] = []
    for ix in pool:
        taken: dict[str, int] = {}
        for row, kind in enumerate(ix.kinds):
            if (kinds is None or kind in kinds) and taken.get(kind, 0) < limit:
                taken[kind] = taken.get(kind, 0) + 1
                rows.append((KIND_ORDER.get(kind, 9), ix.server, row, ix, row))
    found = [Hit(0.0, ix.documents[row], row=row) for _, _, _, ix, row in rows]
    found.sort(key=lambda h: (KIND_ORDER.get(h.document.kind, 9), h.document.server, h.document.position))
    return found[:limit]
