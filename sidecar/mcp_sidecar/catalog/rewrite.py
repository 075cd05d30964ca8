"""Query rewrite for task-style requests: the servers a request names, and the actions it asks for.

An assistant sends needs like "find the open bug about login timeouts in acme/webapp on GitHub
and post a summary to #eng in Slack": several actions, each on a product the user names. Ranked
as one text, the words of one action drown the other's, and nothing ties "Slack" to the Slack
server's tools but their descriptions. Two rewrites are fused with the whole query's ranking
(`catalog/hybrid.py`), never instead of it:

* the servers named: a query word that is a server's name ("github", "slack", "mongo" for
  `mongodb`) ranks the query again within those servers only;
* the actions: a long request is split into its clauses (at sentence ends, dashes, commas and
  "and", "then", "plus", ...), each kept to its verbs and objects (filler such as "please",
  "I", "my", "the", "can you" left out), and each clause is ranked within the named servers.

Both were chosen on the tune halves of the task-style and paraphrase sets over the 488-tool
catalog (`benchmarks/retrieval_quality.py`); clauses ranked over every server, and clauses
without a named server, helped nothing there and cost a search each, so they are not made.
Off unless `MCP_SIDECAR_REWRITE=1`: on the held-out halves it did not reach issue 34's adoption
bar (docs/performance.md), so discovery ranks the whole query alone by default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

SERVER_WEIGHT = 0.5
"""The named servers' ranking counts half the whole query's."""
CLAUSE_WEIGHT = 0.5
"""Each clause's ranking within the named servers counts half the whole query's."""
CLAUSE_QUERY_WORDS = 7
"""A request of fewer words is one action: it is not split."""
MIN_CLAUSE_WORDS = 2
"""A clause of fewer kept words ("then", "thanks") is no action of its own."""
MAX_CLAUSES = 6
"""A pasted message can have dozens of clauses: the first few are ranked, the rest read as a whole."""
MIN_NAME_PREFIX = 4
"""A query word at least this long that begins a server's name names it ("mongo" for `mongodb`)."""

_BOUNDARY = re.compile(
    r"[.?!;:]+(?:\s+|$)"  # sentence ends
    r"|\s+-+\s+"  # a dash between words
    r"|,\s*(?:and\s+)?(?:then\s+)?"  # commas, with their "and then"
    r"|\s+(?:and\s+then|and|then|plus|also|after\s+that|once)\s+",
    re.IGNORECASE,
)
_NAME_WORD = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")
_NAME_SEPARATORS = re.compile(r"[-_. ]")
_EDGE_PUNCTUATION = ",.?!'\"()[]"
_FILLER_WORDS = """
i i'm im i'd i'll me my mine we we're our ours us you your please pls can could would will should
want need like just kindly hey hi ok so also it its it's this that these those there here some any
the a an of for to in on at by with from is are was were be been being do does did have has had
what's whats let's lets know tell give show make sure then and thanks thank
"""
FILLER = frozenset(_FILLER_WORDS.split())
"""Words that carry no action or object: dropped from a clause (the whole query keeps them)."""


def enabled_by_environment() -> bool:
    """`MCP_SIDECAR_REWRITE=1` turns the rewrite on for discovery; it is off by default."""
    return os.environ.get("MCP_SIDECAR_REWRITE", "0").strip().lower() in ("1", "true", "yes", "on")


class Named(Protocol):
    """What a named-server test needs of an index: its server's name."""

    @property
    def server(self) -> str: ...


def clauses(text: str) -> list[str]:
    """The actions a long request asks for, each its clause's verbs and objects; [] for a short
    request, or one that is a single action."""
    if len(text.split()) < CLAUSE_QUERY_WORDS:
        return []
    found = []
    for part in _BOUNDARY.split(text):
        kept = [w for w in part.split() if w.lower().strip(_EDGE_PUNCTUATION) not in FILLER]
        if len(kept) >= MIN_CLAUSE_WORDS:
            found.append(" ".join(kept))
    return found[:MAX_CLAUSES] if len(found) >= 2 else []


_Index = TypeVar("_Index", bound=Named)


def named_servers(pool: Sequence[_Index], text: str) -> list[_Index]:
    """The indexes whose server the query names: a word equal to its name (with or without its
    separators), or at least `MIN_NAME_PREFIX` letters that begin it."""
    words = set(_NAME_WORD.findall(text.lower()))
    if not words:
        return []
    found = []
    for ix in pool:
        name = ix.server.lower()
        flat = _NAME_SEPARATORS.sub("", name)
        if name in words or flat in words or any(len(w) >= MIN_NAME_PREFIX and flat.startswith(w) for w in words):
            found.append(ix)
    return found
