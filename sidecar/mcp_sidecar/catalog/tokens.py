"""Identifier-aware tokenising for metadata search.

`list_teams`, `listTeams`, `list-teams` and `ListTeams` all yield `list` and `teams`, so a
query for "list teams" finds each spelling. Tokens are lowercase runs of letters or digits.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_RUN = re.compile(r"[^\W_]+", re.UNICODE)


@lru_cache(maxsize=65536)
def _split_run(run: str) -> tuple[str, ...]:
    if run.isascii():
        parts = _WORD.findall(run)
        if parts:
            return tuple(p.lower() for p in parts)
    return (run.lower(),)


def tokenize(text: str) -> list[str]:
    """Split on anything that is not a letter or digit, then on case and digit changes."""
    out: list[str] = []
    for run in _RUN.findall(text):
        out.extend(_split_run(run))
    return out


STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "some",
        "that",
        "the",
        "this",
        "to",
        "use",
        "using",
        "what",
        "which",
        "with",
        "you",
    ]
)


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """A light English stemmer: plural and -ing/-ed endings, enough for "tables" ~ "table"."""
    if len(token) <= 3 or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "shes", "ches", "xes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    if token.endswith("ing") and len(token) > 5:
        return token[:-3]
    if token.endswith("ed") and len(token) > 4:
        return token[:-2]
    return token


def terms(text: str) -> list[str]:
    """Index terms of a text: identifier-aware tokens, stemmed."""
    return [stem(t) for t in tokenize(text)]
