"""How long a listed catalog is used without asking the server again, and whether it may go to disk.

On 2026-07-28 sessions every list result carries caching hints (MCP's `server/utilities/caching`):
`ttlMs`, how long the client may consider it fresh, and `cacheScope`, `public` (the same for
every user: any cache may keep it) or `private` (only for the authorization context that asked).
The sidecar's disk cache is keyed by the server's definition as written, not by the credentials
that reach it, so only a `public` list is written there; a `private` one is kept in memory only.
But `ttlMs: 0` with `private` is what a server sends when its author set no hints (the SDK's
defaults, and the specification's defaults for absent fields): it says nothing, so it counts as
no hint at all, and the list is cached as a handshake-era one is. Without that, no server built
on the SDK could be discovered from the disk cache before it connects.

A positive TTL replaces the sidecar's own freshness rule for that copy, never for longer than
24 hours. A TTL of 0 promises nothing, the same as no hint at all (the specification's default
when `ttlMs` is absent is 0): the sidecar's own rules then apply (change notices, the five-minute
limit for resources and prompts, the 24-hour disk cache). Handshake-era results carry no hints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_FRESH_S = 24 * 3600.0
"""No copy is used for longer than this without asking the server, whatever its TTL."""


@dataclass(frozen=True, slots=True)
class CacheHints:
    """One list's hints over all its pages: the shortest TTL, and `shared` only if every page was public."""

    ttl_ms: int
    shared: bool

    def fresh_s(self, default_s: float) -> float:
        """Seconds a copy is used without re-listing: the TTL (at most 24 h), else `default_s`."""
        if self.ttl_ms <= 0:
            return default_s
        return min(self.ttl_ms / 1000, MAX_FRESH_S)


def fold(pages: Iterable[tuple[int | None, str | None]]) -> CacheHints | None:
    """The hints of a list from its pages' `(ttlMs, cacheScope)`, each None where the page sent none.

    None when no page sent either field (a handshake-era session, or a server that gives no hints).
    A page without a TTL counts as 0, and one without a scope as not public.
    """
    sent = [(ttl, scope) for ttl, scope in pages if ttl is not None or scope is not None]
    if not sent:
        return None
    ttl_ms = min(max(ttl or 0, 0) for ttl, _ in sent)
    shared = all(scope == "public" for _, scope in sent)
    if ttl_ms == 0 and not shared:
        return None  # the defaults of a server whose author set no hints: nothing was said
    return CacheHints(ttl_ms, shared)


def fresh_for(hints: CacheHints | None, default_s: float) -> float:
    """Seconds a copy of a list with these hints is used without re-listing (`default_s` without hints)."""
    return default_s if hints is None else hints.fresh_s(default_s)


def may_keep_on_disk(hints: CacheHints | None) -> bool:
    """Only a list every user would get alike: `public`, or one from a session without hints."""
    return hints is None or hints.shared


def combine(*hints: CacheHints | None) -> CacheHints | None:
    """The hints of a catalog made of several lists (resources and their templates)."""
    given = [h for h in hints if h is not None]
    if not given:
        return None
    return CacheHints(min(h.ttl_ms for h in given), all(h.shared for h in given))


__all__ = ["MAX_FRESH_S", "CacheHints", "combine", "fold", "fresh_for", "may_keep_on_disk"]
