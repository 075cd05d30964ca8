"""Hybrid ranking: keywords (BM25F, `index.py`) fused with meaning (`semantic.py`), and a threshold.

Two ranked lists over the same pool: by keywords, and by the cosine similarity of the query's
vector to each entry's. Reciprocal-rank fusion merges them (each list's top `DEPTH`), so
neither signal's scale needs calibrating against the other's. What fusion must not disturb:

* a one-word query that is exactly an entry's name, id or URI is ranked by keywords alone, that
  entry first (a longer query that is exactly a title still ranks that entry first, by the
  exact boost, but is fused: a server cannot turn meaning off with a title);
* a query being typed (`rea tex`: a short query whose last word matches no whole word, only the
  start of longer ones) is ranked by keywords alone: a half-typed word has no meaning to embed.

Every hit says which signal put it where (`keyword`, `semantic` ranks and `similarity`), and
whether it is `weak`: neither signal vouches for it. Keywords vouch when the words the entry
matches carry at least `COVERAGE` of the query's weight (the IDF of every query word, a word
no entry has weighing the most); meaning vouches when the similarity reaches `SIMILARITY`. A
query whose every hit is weak has no match: "nothing matches" is an answer, with the nearest
entries shown as weak rather than as matches; when keywords did find real matches, entries only
vaguely near in meaning are left out instead. A query of more than `LONG_QUERY_WORDS` words (a
pasted message) is ranked but not judged. The thresholds and the fusion constant were chosen on
the tuning halves of the paraphrase and no-match sets and on `queries.json`
(`benchmarks/retrieval_quality.py`), never on the held-out halves.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from mcp_sidecar.catalog import index as keywords
from mcp_sidecar.catalog import rewrite
from mcp_sidecar.catalog.index import EXACT_BOOST, Hit, Index, Query, Terms, hit_order, parse_query
from mcp_sidecar.catalog.tokens import stem

log = logging.getLogger(__name__)

DEPTH = 20
"""How far down each signal's list fusion reads."""
RRF_K = 2.0
"""Small: the top of each list counts much more than its tail (chosen on the tuning halves)."""
KEYWORD_WEIGHT = 1.0
SEMANTIC_WEIGHT = 0.7
"""Meaning counts a little less than keywords: on the tuning sets it helps paraphrases most when it
reorders keywords' near misses rather than outvoting their clear matches."""
SIMILARITY = 0.35
"""A similarity at least this high vouches for an entry by itself."""
COVERAGE = 0.5
"""The share of the query's weight an entry's matched words must carry to vouch for it."""
FLOOR = 0.1
"""Below this similarity an entry the keywords did not find is no candidate at all, not even a weak one."""


def search(
    indexes: Iterable[Index],
    text: str,
    *,
    kinds: frozenset[str] | None = None,
    limit: int = 5,
    model: Any = None,
    encoder: Any = None,
    rewrite_query: bool = False,
) -> list[Hit]:
    """The best `limit` entries for `text`, weak ones marked; `model` None ranks by keywords alone.

    `encoder` (`catalog/encoder.py`, optional) adds a third ranking where every index has its
    vectors (`Index.encoded`). A request that names some of the servers is also ranked within
    them, whole and clause by clause, when `rewrite_query` is set (`catalog/rewrite.py`; off by
    default, the sidecar passes `MCP_SIDECAR_REWRITE`), and those rankings are fused with the
    whole query's."""
    pool = [ix for ix in indexes if ix.documents]
    models = (model, encoder)
    # Each ranking is the same cut shorter (up to DEPTH): read DEPTH deep once, for fusion.
    whole = _search(pool, text, kinds, max(limit, DEPTH), models)
    named = rewrite.named_servers(pool, text) if rewrite_query else []
    if not named or len(named) == len(pool) or not whole or _steered_by_keywords(pool, text, whole):
        return whole[:limit]
    return _rewritten(named, text, whole, kinds, limit, models)


def _steered_by_keywords(pool: list[Index], text: str, whole: list[Hit]) -> bool:
    """An exact name, or a query being typed: keywords alone rank it, no rewrite applies."""
    query = parse_query(text)
    if not query.words and not query.prefix:
        return True
    if _exact(whole[0]) and len(text.split()) == 1:
        return True
    return _being_typed(pool, query, Terms(pool, sum(len(ix.documents) for ix in pool)))


def _rewritten(
    named: list[Index],
    text: str,
    whole: list[Hit],
    kinds: frozenset[str] | None,
    limit: int,
    models: tuple[Any, Any],
) -> list[Hit]:
    """Reciprocal-rank fusion of the whole query's ranking with the query's and each clause's
    within the named servers. A hit keeps what its first ranking said of it (signal ranks,
    similarity, weak), the whole query's first; only its score is the fused one."""
    rankings = [(1.0, whole)]
    rankings.append((rewrite.SERVER_WEIGHT, _search(named, text, kinds, REWRITE_DEPTH, models)))
    for clause in rewrite.clauses(text):
        rankings.append((rewrite.CLAUSE_WEIGHT, _search(named, clause, kinds, REWRITE_DEPTH, models)))
    found: dict[int, list[Any]] = {}  # id(document) → [hit, fused score]
    for weight, ranked in rankings:
        for rank, hit in enumerate(ranked, 1):
            entry = found.setdefault(id(hit.document), [hit, EXACT_BOOST if _exact(hit) else 0.0])
            entry[1] += weight / (RRF_K + rank)
    out = [replace(hit, score=score) for hit, score in found.values()]
    if any(not h.weak and h.keyword is not None for h in out):
        # As in `_fuse`: with real keyword matches, an entry only vaguely near in meaning is filler.
        out = [h for h in out if not (h.weak and h.keyword is None)]
    out.sort(key=hit_order)
    return out[:limit]


REWRITE_DEPTH = 10
"""How far down the named servers' rankings fusion reads."""


def _search(
    pool: list[Index], text: str, kinds: frozenset[str] | None, limit: int, models: tuple[Any, Any]
) -> list[Hit]:
    """One text's ranking over `pool`: keywords and meaning (and the encoder's) fused (no rewrite)."""
    model, encoder = models
    query = parse_query(text)
    if not query.words and not query.prefix:
        return keywords.search(pool, text, kinds=kinds, limit=limit)
    by_keywords = keywords.search(pool, text, kinds=kinds, limit=max(limit, DEPTH))
    terms = Terms(pool, sum(len(ix.documents) for ix in pool))
    judged = _judged(query)
    coverage = _coverage(pool, query, terms, by_keywords) if judged else {}
    # A name, an id or a URI typed exactly (one word): that entry, then keywords. A sentence that
    # is exactly some entry's title ranks that entry first but is still read for its meaning.
    exact = bool(by_keywords) and _exact(by_keywords[0]) and len(text.split()) == 1
    if model is None or exact or _being_typed(pool, query, terms) or not all(ix.vectors is not None for ix in pool):
        ranked = [
            replace(h, keyword=rank, weak=judged and not _exact(h) and coverage.get(id(h.document), 0.0) < COVERAGE)
            for rank, h in enumerate(by_keywords, 1)
        ]
        return ranked[:limit]
    try:
        query_vector = model.embed([text])[0]
    except Exception:  # a fault in the model's files: keywords alone still answer
        log.exception("embedding the query failed; ranked by keywords alone")
        return _search(pool, text, kinds, limit, (None, None))
    similarities = _similarities(pool, query_vector, kinds)
    by_encoder = _by_encoder(pool, text, kinds, encoder, similarities)
    similarity_of = {}
    for hit in [*by_keywords, *by_encoder]:
        found = _locate(pool, hit)
        if found is not None:
            similarity_of[id(hit.document)] = float(similarities[found[0]][found[1]])
    meaning = _by_similarity(pool, similarities)
    return _fuse(by_keywords, meaning, similarity_of, coverage if judged else None, limit, by_encoder)


ENCODER_WEIGHT = 0.7
"""The encoder's ranking counts as much as WordLlama's (chosen on the tune halves, issue 34)."""
ENCODER_SIMILARITY = 0.5
"""An encoder similarity at least this high vouches for an entry by itself."""


def _by_encoder(
    pool: list[Index], text: str, kinds: frozenset[str] | None, encoder: Any, similarities: list[Any]
) -> list[Hit]:
    """The encoder's `DEPTH` nearest entries (`similarity` its own cosine), or [] where an index has
    no encoder vectors yet (they are made in the background) or the encoder fails."""
    if encoder is None or not all(ix.encoded is not None for ix in pool):
        return []
    try:
        query_vector = encoder.embed([text])[0]
    except Exception:  # a fault in the encoder's files: the other signals still answer
        log.exception("the encoder failed on a query; ranked without it")
        return []
    mask = [s > -2.0 for s in similarities]  # the kinds asked for
    return _by_similarity(pool, [_masked(ix.encoded @ query_vector, m) for ix, m in zip(pool, mask, strict=True)])


def _masked(values: Any, keep: Any) -> Any:
    import numpy as np

    return np.where(keep, values, -2.0)


def _exact(hit: Hit) -> bool:
    return hit.score >= EXACT_BOOST


LONG_QUERY_WORDS = 16
"""Past this many words a query is a pasted message, not a need put in words: its hits are ranked
but not judged (no entry can be expected to carry its words), so none is marked weak."""
TYPING_WORDS = 3
"""A query of at most this many words whose last one only starts longer words is being typed."""


def _being_typed(pool: list[Index], query: Query, terms: Terms) -> bool:
    """Whether the query is short and its last word matches no whole word of any entry, only the
    start of longer ones (a palette search as the user types it)."""
    if not query.prefix or len(query.words) + 1 > TYPING_WORDS:
        return False
    if terms.contain_any(terms.with_e_variant(stem(query.prefix))):
        return False
    return any(ix.with_prefix(query.prefix) for ix in pool)


def _coverage(pool: list[Index], query: Query, terms: Terms, hits: list[Hit]) -> dict[int, float]:
    """Per hit (keyed by its document's id()), the share of the query's IDF weight its words match.

    A word weighs its IDF; a word no entry has gets the highest IDF there is, so a query about
    something absent is never covered by its common words alone ("read my email").
    """
    if not hits or terms.n_docs == 0:
        return {}
    # Whole words only (with their e-variant and synonyms): an abbreviation's completions rank
    # an entry, but do not vouch for it. The word being typed counts with its completions.
    groups = [terms.with_e_variant(w) for w in dict.fromkeys(query.words)]
    if query.prefix:
        whole = stem(query.prefix)
        groups.append(terms.with_e_variant(whole) + terms.completions(query.prefix, whole))
    weights = [terms.idf(g[0][0]) for g in groups]
    total = sum(weights) or 1.0
    out: dict[int, float] = {}
    for hit in hits:
        found = _locate(pool, hit)
        if found is None:
            continue
        ix, doc_id = pool[found[0]], found[1]
        matched = sum(w for g, w in zip(groups, weights, strict=True) if any(ix.contains(t, doc_id) for t, _ in g))
        out[id(hit.document)] = matched / total
    return out


def _locate(pool: list[Index], hit: Hit) -> tuple[int, int] | None:
    """Where a hit is: its index's place in the pool, and its row there."""
    for n, ix in enumerate(pool):
        if ix.server == hit.document.server and 0 <= hit.row < len(ix.kinds) and ix.documents[hit.row] is hit.document:
            return n, hit.row
    return None


def _similarities(pool: list[Index], query_vector: Any, kinds: frozenset[str] | None) -> list[Any]:
    """Per index, every entry's similarity to the query (-2 for entries of other kinds)."""
    import numpy as np

    out = []
    for ix in pool:
        sims = ix.vectors @ query_vector
        out.append(np.where(ix.kind_mask(kinds), sims, -2.0) if kinds is not None else sims)
    return out


def _by_similarity(pool: list[Index], similarities: list[Any]) -> list[Hit]:
    """The `DEPTH` most similar entries of the pool, best first (`similarity` set, score 0)."""
    import numpy as np

    every = np.concatenate(similarities) if similarities else np.zeros(0)
    take = min(DEPTH, len(every))
    if take == 0:
        return []
    top = np.argpartition(-every, take - 1)[:take] if take < len(every) else np.arange(len(every))
    starts = np.cumsum([0, *(len(s) for s in similarities)])
    found = []
    for at in top.tolist():
        if every[at] <= -2.0:
            continue
        which = int(np.searchsorted(starts, at, side="right")) - 1
        row = at - int(starts[which])
        found.append(Hit(0.0, pool[which].documents[row], similarity=float(every[at]), row=row))
    found.sort(key=lambda h: (-(h.similarity or 0.0), *hit_order(h)[1:]))
    return found


def _fuse(
    by_keywords: list[Hit],
    by_meaning: list[Hit],
    similarity_of: dict[int, float],
    coverage: dict[int, float] | None,
    limit: int,
    by_encoder: list[Hit] | None = None,
) -> list[Hit]:
    """Reciprocal-rank fusion of the lists; each entry vouched for, or marked weak (`coverage`
    None: a query too long to judge, nothing is marked)."""
    found: dict[int, list[Any]] = {}  # id(document) → [hit, keyword rank, semantic rank, score]
    rank = 0
    for position, hit in enumerate(by_keywords, 1):
        # Entries the keywords score alike share a rank: their catalog order is no evidence.
        if position == 1 or round(hit.score, 9) != round(by_keywords[position - 2].score, 9):
            rank = position
        score = KEYWORD_WEIGHT / (RRF_K + rank) + (EXACT_BOOST if _exact(hit) else 0.0)
        found[id(hit.document)] = [hit, rank, None, score]
    for rank, near in enumerate(by_meaning, 1):
        key = id(near.document)
        entry = found.get(key)
        if entry is None:
            if (near.similarity or 0.0) < FLOOR:
                continue
            entry = found[key] = [near, None, None, 0.0]
        entry[2] = rank
        entry[3] += SEMANTIC_WEIGHT / (RRF_K + rank)
    encoded = _add_encoder(found, by_encoder or [])
    out = []
    for key, (hit, keyword, semantic, score) in found.items():
        similarity = similarity_of.get(key, hit.similarity)
        vouched = (
            coverage is None
            or _exact(hit)
            or coverage.get(key, 0.0) >= COVERAGE
            or (similarity or 0.0) >= SIMILARITY
            or encoded.get(key, 0.0) >= ENCODER_SIMILARITY
        )
        out.append(Hit(score, hit.document, keyword, semantic, similarity, not vouched, hit.row))
    if coverage is None:
        # A message too long to judge: an entry only near in meaning must be near enough to vouch.
        out = [h for h in out if h.keyword is not None or _near(h, encoded)]
    elif any(not h.weak and h.keyword is not None for h in out):
        # Keywords found real matches: an entry only vaguely near in meaning is filler, not an answer.
        out = [h for h in out if not (h.weak and h.keyword is None)]
    out.sort(key=hit_order)
    return out[:limit]


def _add_encoder(found: dict[int, list[Any]], by_encoder: list[Hit]) -> dict[int, float]:
    """The encoder's ranking added to the fusion; each entry's encoder similarity, by document id()."""
    encoded: dict[int, float] = {}
    for rank, near in enumerate(by_encoder, 1):
        key = id(near.document)
        encoded[key] = near.similarity or 0.0
        entry = found.get(key)
        if entry is None:
            entry = found[key] = [replace(near, similarity=None), None, None, 0.0]
        entry[3] += ENCODER_WEIGHT / (RRF_K + rank)
    return encoded


def _near(hit: Hit, encoded: dict[int, float]) -> bool:
    """Near enough in meaning to vouch for itself, by WordLlama or by the encoder."""
    return (hit.similarity or 0.0) >= SIMILARITY or encoded.get(id(hit.document), 0.0) >= ENCODER_SIMILARITY


def is_judged(text: str) -> bool:
    """Whether a query is short enough for its hits to be judged (marked weak or not)."""
    return _judged(parse_query(text))


def _judged(query: Query) -> bool:
    return len(query.words) + (query.prefix is not None) <= LONG_QUERY_WORDS
