"""Listing a server's tools, resources, resource templates or prompts, every page, within limits.

A catalog is taken whole or refused whole: a server that repeats names or cursors, or lists
more than the limits allow, is broken, and half a catalog would hide that. A list whose
kind's change notice arrives while it is fetched is fetched once more (`Listings`). What the
pages say about caching (2026-07-28 `ttlMs`/`cacheScope`, `catalog/freshness.py`) is kept with the
list, and what tools say about tasks (`execution.taskSupport`) with the session. The server's
secret values in its descriptors are replaced (`output/redact.py`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_sidecar.catalog import kinds
from mcp_sidecar.catalog.freshness import CacheHints, fold
from mcp_sidecar.catalog.kinds import ListName
from mcp_sidecar.connections.live_session import LiveSession
from mcp_sidecar.output.redact import Redactor
from mcp_sidecar.protocol.errors import SidecarError, fail

log = logging.getLogger(__name__)

MAX_CATALOG_ENTRIES = 10_000
MAX_CATALOG_BYTES = 4 * 1024 * 1024

LISTING_ATTEMPTS = 2
"""A list overtaken by a change notice of its kind is fetched once more; overtaken again, it fails."""


class Listings:
    """One connection's list requests in flight, and the change notices that overtake them.

    A notice that arrives while a list of its kind is fetched says the answer may predate the
    change, so that answer is not kept: the list is fetched once more, and a second overtaken
    answer fails as `catalog_changed` rather than be returned stale. Only notices that arrive
    before the answer count (on stdio the one pipe keeps the server's order; over HTTP a notice
    can trail the answer, and then only drops the copy afterwards, as any notice does).
    """

    def __init__(self, server: str) -> None:
        self.server = server
        self.in_flight = 0
        """List requests sent to the server and not answered yet (all pages of one list count once)."""
        self._changes: dict[str, int] = dict.fromkeys(kinds.GROUPS, 0)
        """Change notices seen per group (resources/list_changed covers templates too)."""
        self.hints: dict[ListName, CacheHints | None] = {}
        """The caching hints of each list's last kept answer (None: it had none)."""

    def changed(self, group: str) -> None:
        self._changes[group] += 1

    async def settled(
        self, live: Callable[[], Awaitable[LiveSession]], kind: ListName, operation: str
    ) -> list[dict[str, Any]] | None:
        """`list_all` on the live session, again when overtaken; `catalog_changed` when overtaken twice."""
        group = kinds.listed(kind).group
        for _attempt in range(LISTING_ATTEMPTS):
            session = await live()
            before = self._changes[group]
            self.in_flight += 1
            try:
                listed = await list_all(session, kind, operation)
            finally:
                self.in_flight -= 1
            if self._changes[group] == before:
                self.hints[kind] = None if listed is None else listed[1]
                return None if listed is None else listed[0]
            log.info("server %s: %s list changed while it was listed", self.server, group)
        message = f"The server's {group} list changed while it was listed, twice in a row: retry shortly."
        raise fail("catalog_changed", operation, message, self.server)


async def list_all(
    session: LiveSession, kind: ListName, operation: str
) -> tuple[list[dict[str, Any]], CacheHints | None] | None:
    """Every page of one list and its caching hints; None when the server does not offer it (nothing to show)."""
    if getattr(session.client.server_capabilities, kinds.listed(kind).capability, None) is None:
        return None
    try:
        check = _Check(session.server, kind, operation, session.redaction)
        descriptors = await _pages(getattr(session.client, kinds.listed(kind).client_call), check)
        if kind == "tools":
            session.tool_tasks.clear()
            session.tool_tasks.update(_task_support(descriptors))
        return descriptors, fold(check.hints)
    except SidecarError:
        raise
    except Exception as exc:
        from mcp import MCPError
        from mcp_types import METHOD_NOT_FOUND

        if isinstance(exc, MCPError) and exc.code == METHOD_NOT_FOUND and kind != "tools":
            return None  # advertised the capability but not this list: nothing to show
        raise await session.failed(exc, operation) from None


async def _pages(fetch: Callable[..., Awaitable[Any]], check: _Check) -> list[dict[str, Any]]:
    cursor: str | None = None
    while True:
        page = await fetch(cursor=cursor)
        check.hinted(page)
        for item in getattr(page, kinds.listed(check.kind).page_field):
            check.add(item.model_dump(by_alias=True, mode="json", exclude_none=True))
        check.within_limits()
        cursor = page.next_cursor
        if cursor is None:
            return check.descriptors
        check.new_cursor(cursor)


class _Check:
    """The descriptors taken so far, refusing the catalog as soon as it shows itself broken."""

    def __init__(self, server: str, kind: ListName, operation: str, redaction: Redactor | None = None) -> None:
        self.server, self.kind, self.operation = server, kind, operation
        self.redaction = redaction
        self.descriptors: list[dict[str, Any]] = []
        self._seen: set[str] = set()
        self._cursors: set[str] = set()
        self._size = 0
        self.hints: list[tuple[int | None, str | None]] = []
        """Each page's `(ttlMs, cacheScope)`, None for a field the page did not send."""

    def hinted(self, page: Any) -> None:
        sent: set[str] = getattr(page, "model_fields_set", set())
        ttl = getattr(page, "ttl_ms", None) if "ttl_ms" in sent else None
        scope = getattr(page, "cache_scope", None) if "cache_scope" in sent else None
        self.hints.append((ttl if isinstance(ttl, int) else None, scope if isinstance(scope, str) else None))

    def add(self, descriptor: dict[str, Any]) -> None:
        key = kinds.listed(self.kind).key
        text = json.dumps(descriptor, separators=(",", ":"), ensure_ascii=False)
        self._size += len(text.encode())
        name = descriptor.get(key)
        if not isinstance(name, str) or not name:
            raise self._invalid(f"has an entry without a valid `{key}`.")
        if name in self._seen:
            raise self._invalid(f"lists {name!r} twice.")
        self._seen.add(name)
        self.descriptors.append(self._redacted(descriptor, text))

    def _redacted(self, descriptor: dict[str, Any], text: str) -> dict[str, Any]:
        """Names, descriptions and schemas reach editors, models and the disk cache: without the
        server's secret values (an entry whose key holds one is then refused as invalid).

        A descriptor whose JSON is ASCII without a backslash holds every string as written and
        nothing a sanitiser would remove: one search of that JSON rules it out, instead of a walk.
        """
        redaction = self.redaction
        if not redaction or (text.isascii() and "\\" not in text and not redaction.found_in(text)):
            return descriptor
        redacted: dict[str, Any] = redaction.value(descriptor)[0]
        return redacted

    def within_limits(self) -> None:
        if len(self.descriptors) > MAX_CATALOG_ENTRIES or self._size > MAX_CATALOG_BYTES:
            raise self._invalid(f"exceeds {MAX_CATALOG_ENTRIES} entries or 4 MiB of descriptors.")

    def new_cursor(self, cursor: str) -> None:
        if cursor in self._cursors:
            raise self._invalid("repeats a pagination cursor.")
        self._cursors.add(cursor)

    def _invalid(self, why: str) -> SidecarError:
        return fail("protocol_error", self.operation, f"The {self.kind} catalog {why}", self.server)


def _task_support(tools: list[dict[str, Any]]) -> dict[str, str]:
    """name -> `execution.taskSupport` for the tools that may run as a task (`optional`, `required`)."""
    out: dict[str, str] = {}
    for tool in tools:
        execution = tool.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        if support in ("optional", "required"):
            out[tool["name"]] = support
    return out


__all__ = ["LISTING_ATTEMPTS", "MAX_CATALOG_BYTES", "MAX_CATALOG_ENTRIES", "ListName", "Listings", "list_all"]
