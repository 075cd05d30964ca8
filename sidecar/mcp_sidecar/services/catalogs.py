"""Catalog fetching and caching for every kind, and the ranking indexes built on them.

Tools: memory, then the 24-hour disk cache (tool-only discovery and activation need no
connection), then the server. Resources, templates and prompts: memory only, for at most
five minutes. A list-changed notification, a disconnection or an explicit refresh drops the
affected copies. On 2026-07-28 sessions the servers' cache hints apply on top
(`catalog/freshness.py`): a positive `ttlMs` is how long a copy is used before the next need
lists again (at most 24 hours, in memory and on disk), and a list that is not `public` is kept
in memory only. Entries the sidecar refuses (`catalog/names.py`: tool and prompt names outside
the MCP form, resource URIs and templates with control characters) are left out of every
catalog and kept in its `refused` list. Fetches of different servers are bounded by the discovery slots (at most
four in flight); one server's lists are fetched under a single slot.

A slot belongs to a server, not to a task: every task working on a server (a discovery's
three lists, an activation, a call) shares the slot the first one took. So a discovery that
holds a server's slot while waiting for that server's catalog lock never waits for a second
slot behind it, and discoveries and activations of the same servers cannot deadlock.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_sidecar import heavy, tasks
from mcp_sidecar.catalog import disk_cache, documents, kinds, names, semantic, stored_index, token_count
from mcp_sidecar.catalog.disk_cache import TTL_SECONDS, ToolCache, cache_key
from mcp_sidecar.catalog.freshness import CacheHints, combine, fresh_for, may_keep_on_disk
from mcp_sidecar.catalog.index import Document, Index
from mcp_sidecar.catalog.kinds import GROUPS, Group, Kind
from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.events import CatalogInvalidated, ConnectionKeysChanged, EventHub, RowMayHaveChanged, StatusChanged
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services.encodings import Encodings

log = logging.getLogger(__name__)

MEMORY_TTL_SECONDS = 300.0


@dataclass(slots=True)
class ListCatalog:
    """Resource (with templates) or prompt metadata, held in memory only; refused entries left out."""

    server: str
    items: list[dict[str, Any]]
    templates: list[dict[str, Any]]
    generation: int
    kind: Group = "resources"
    fetched_at: float = field(default_factory=time.monotonic)
    refused: list[dict[str, Any]] = field(default_factory=list)
    """`{kind, name | uri | uriTemplate, diagnostic}` for every entry left out."""
    fresh_s: float = MEMORY_TTL_SECONDS
    """How long it is used without listing again: five minutes, or the server's TTL."""

    def fresh(self, conn: ServerConnection) -> bool:
        return (
            time.monotonic() - self.fetched_at <= self.fresh_s
            and conn.state == "connected"
            and conn.generation == self.generation
            and self.kind not in conn.stale_kinds
        )

    def by_kind(self) -> list[tuple[Kind, list[dict[str, Any]]]]:
        """Each kind of its group with its entries: the first kind's in `items`, templates in `templates`."""
        # Not strict: a group of one kind (prompts) has no templates.
        return list(zip(kinds.in_group(self.kind), (self.items, self.templates), strict=False))


@dataclass(slots=True)
class _ServerSlot:
    acquired: asyncio.Future[bool]
    users: int = 0


@dataclass(frozen=True, slots=True)
class _Kept:
    copies: dict[Hashable, Any]
    """Connection key -> its copy of the group's catalog."""
    fetch: Callable[[ServerConnection, str], Awaitable[ToolCatalog | ListCatalog]]


@dataclass(slots=True)
class _IndexEntry:
    source: object
    index: Index


KeyOf = Callable[[ServerConnection], Hashable]


class Catalogs:
    def __init__(
        self, cache: ToolCache | None, slots: asyncio.Semaphore, hub: EventHub, key_of: KeyOf | None = None
    ) -> None:
        self.cache = cache
        self.slots = slots
        self.key_of: KeyOf = key_of or (lambda conn: conn.name)
        """What a connection's copies, locks and slot are kept under: the user's registry's `ConnectionKey`
        (two clients' `github` may be two servers); the server's name by default (one client)."""
        self.tools: dict[Hashable, ToolCatalog] = {}
        self.resources: dict[Hashable, ListCatalog] = {}
        self.prompts: dict[Hashable, ListCatalog] = {}
        self._groups: dict[Group, _Kept] = {
            "tools": _Kept(self.tools, self.tool_catalog),
            "resources": _Kept(self.resources, self.resource_catalog),
            "prompts": _Kept(self.prompts, self.prompt_catalog),
        }
        """Where each group's copies are kept and how one is got: services' own, which a kind's record
        (catalog/kinds.py) cannot name."""
        self._indexes: dict[tuple[Hashable, Group], _IndexEntry] = {}
        self._locks: dict[tuple[Hashable, Group], asyncio.Lock] = {}
        self._builds: dict[tuple[Hashable, Group], asyncio.Lock] = {}
        """One index build at a time per catalog (its fetch lock is not held while building)."""
        self._slots_held: dict[Hashable, _ServerSlot] = {}
        self.encodings = Encodings()
        """The optional encoder's vectors, made in the background (`services/encodings.py`)."""
        self._counter: token_count.TokenCounter | None = None
        self._counter_loaded = False
        self._tokenizer_digest: str | None = None
        self._counting: dict[Hashable, tuple[ToolCatalog, asyncio.Task[None]]] = {}
        """The tool catalog whose token estimates are being counted, per connection key."""
        self._hub = hub
        hub.subscribe(StatusChanged, self._status_changed)
        hub.subscribe(CatalogInvalidated, self._invalidated)
        hub.subscribe(ConnectionKeysChanged, self._keys_changed)

    # -- events ------------------------------------------------------------------------------

    def _status_changed(self, event: StatusChanged) -> None:
        if event.conn.state in ("idle", "failed", "needs_login", "disabled"):
            # Disconnection invalidates resource and prompt metadata; tools keep their copy
            # (and the disk cache) for browsing, and calls re-list on the next connection.
            self.drop(event.conn, "resources")
            self.drop(event.conn, "prompts")

    def _invalidated(self, event: CatalogInvalidated) -> None:
        self.drop(event.conn, event.kind, disk=True)

    def _keys_changed(self, event: ConnectionKeysChanged) -> None:
        """Copies of a connection no client uses go; those of one whose offer or roots changed move."""
        for key in event.released:
            self._drop_key(key)
        for old, new in event.moved:
            for g in GROUPS:
                copies = self._groups[g].copies
                if old in copies:
                    copies[new] = copies.pop(old)
                if (old, g) in self._indexes:
                    self._indexes[(new, g)] = self._indexes.pop((old, g))

    # -- invalidation ------------------------------------------------------------------------

    def drop(self, conn: ServerConnection, group: Group | None = None, *, disk: bool = False) -> None:
        self._drop_key(self.key_of(conn), group)
        if disk and self.cache is not None and group in (None, "tools"):
            self.cache.invalidate(self.key(conn))

    def _drop_key(self, key: Hashable, group: Group | None = None) -> None:
        for g in (group,) if group else GROUPS:
            self._groups[g].copies.pop(key, None)
            self._indexes.pop((key, g), None)

    def forget(self, conn: ServerConnection) -> None:
        self.drop(conn)

    def tools_in_memory(self, conn: ServerConnection) -> ToolCatalog | None:
        """The memory copy of `conn`'s tool catalog, if any (no disk, no server)."""
        return self.tools.get(self.key_of(conn))

    def list_in_memory(self, conn: ServerConnection, group: Group) -> ListCatalog | None:
        """The memory copy of `conn`'s resource or prompt catalog, if any."""
        return (self.resources if group == "resources" else self.prompts).get(self.key_of(conn))

    def discard_stored_index(self, conn: ServerConnection) -> None:
        """A stored index found damaged in use: forget the copy it came with and remove the index
        file, so the catalog is read (or fetched) and indexed again."""
        log.warning("server %s: the stored catalog index disagrees with its catalog; it is built again", conn.name)
        self.drop(conn, "tools")
        if self.cache is not None:
            self.cache.invalidate(self.key(conn), index_only=True)

    def key(self, conn: ServerConnection) -> str:
        return cache_key(conn.name, conn.config.fingerprint(), conn.workspace, conn.offered())

    # -- tools -------------------------------------------------------------------------------

    def cached_tools(self, conn: ServerConnection) -> ToolCatalog | None:
        """The memory copy, else a fresh disk copy; never contacts the server."""
        current = self.tools.get(self.key_of(conn))
        if current is not None and current.source == "cache" and current.expired():
            # A disk copy expires in memory too (24 hours, or its TTL), however long the sidecar runs.
            self.drop(conn, "tools")
            current = None
        if current is not None:
            return current
        if self.cache is None:
            return None
        key = self.key(conn)
        raw = self.cache.read(key)
        if raw is None:
            return None
        # A stored index is read with numpy: before its owner loaded it (`heavy.NUMPY`), the
        # catalog is read alone, and `index` takes up its stored index once numpy is there.
        catalog = self._stored(conn, key, raw) if heavy.NUMPY.loaded else None
        if catalog is None:
            loaded = disk_cache.parse(key, raw)
            if loaded is None:
                return None
            catalog = ToolCatalog(
                conn.name,
                loaded.tools,
                source="cache",
                generation=0,
                fetched_at=loaded.fetched_at,
                fresh_s=loaded.fresh_s,
                disk=raw,
            )
        self.tools[self.key_of(conn)] = catalog
        return catalog

    def _stored(self, conn: ServerConnection, key: str, raw: bytes) -> ToolCatalog | None:
        """The catalog with its index as stored beside it, its descriptors left unparsed; None
        when no index made from this very file (same filters, same model) is there."""
        assert self.cache is not None
        data = self.cache.load_index(key)
        if data is None:
            return None
        # When the copy was fetched is the catalog file's to say, never its index's.
        own = disk_cache.header(key, raw)
        if own is None or not disk_cache.fresh(own.get("fetchedAt"), own.get("freshS", TTL_SECONDS)):
            return None
        found = stored_index.from_bytes(data, self._fingerprint(conn, key, raw), raw)
        if found is None or not isinstance(found.meta.get("refused"), list):
            return None
        _own_encoder_only(found)
        catalog = ToolCatalog(
            conn.name,
            None,
            source="cache",
            generation=0,
            fetched_at=float(own["fetchedAt"]),
            fresh_s=float(own.get("freshS", TTL_SECONDS)),
            disk=raw,
            loader=lambda: _descriptors(key, raw),
            refused=found.meta["refused"],
        )
        self._indexes[(self.key_of(conn), "tools")] = _IndexEntry(catalog, found.index)
        return catalog

    def _fingerprint(self, conn: ServerConnection, key: str, raw: bytes) -> stored_index.Fingerprint:
        model = self.model()
        filters = stored_index.filters_digest(conn.config.include_tools, conn.config.exclude_tools)
        digest = stored_index.catalog_digest(raw)
        return stored_index.Fingerprint(key, digest, filters, model.digest if model is not None else None, conn.name)

    async def tool_catalog(self, conn: ServerConnection, operation: str, *, live: bool = False) -> ToolCatalog:
        """The server's tools; `live` demands a copy fetched on the current connection and still current."""
        key = self.key_of(conn)
        async with self._lock(key, "tools"):
            current = self.cached_tools(conn) if not live else self.tools.get(key)
            if current is not None and not tools_need_fetch(current, conn, live):
                return current
            async with self.slot(key):
                descriptors = await conn.list_tools(operation)
            hints = conn.lists.hints.get("tools")
            fresh_s = fresh_for(hints, math.inf)
            catalog = ToolCatalog(conn.name, descriptors, source="live", generation=conn.generation, fresh_s=fresh_s)
            if current is not None and current.tokens is not None and current.listed_as(descriptors):
                catalog.tokens = current.tokens  # the same list again (a call's re-list): nothing to count
            self.tools[key] = catalog
            self._indexes.pop((key, "tools"), None)
            self._keep_on_disk(conn, catalog, hints)
            self._hub.publish(RowMayHaveChanged(conn.name, key))
            if catalog.tokens is None or catalog.disk is not None:
                # Kept again for the new disk copy too (its unchanged tools' counts are reused).
                self._count_soon(conn, catalog)
            return catalog

    def _keep_on_disk(self, conn: ServerConnection, catalog: ToolCatalog, hints: CacheHints | None) -> None:
        if self.cache is None:
            return
        if not may_keep_on_disk(hints):
            # Private to the credentials that listed it: never on disk, and no older copy stays.
            self.cache.invalidate(self.key(conn))
            return
        fresh_s = fresh_for(hints, TTL_SECONDS)
        catalog.disk = self.cache.store(self.key(conn), conn.name, catalog.descriptors, catalog.fetched_at, fresh_s)

    # -- token estimates (catalog/token_count.py) --------------------------------------------

    def tokens_at_hand(self, conn: ServerConnection, catalog: ToolCatalog) -> dict[str, int] | None:
        """The catalog's token estimates per tool: in memory, else kept beside its disk copy. When
        neither has them they are counted in the background (the server's row is sent again then)
        and None is the answer now."""
        if self.known_tokens(conn, catalog) is None and self.tokenizer_installed():
            self._count_soon(conn, catalog)
        return catalog.tokens

    def known_tokens(self, conn: ServerConnection, catalog: ToolCatalog) -> dict[str, int] | None:
        """The catalog's estimates in memory, else kept beside its disk copy for that very file; never
        counts (a catalog read with its stored index keeps its descriptors unparsed)."""
        if catalog.tokens is None and self.tokenizer_installed():
            catalog.tokens = self._kept_tokens(conn, catalog)
        return catalog.tokens

    async def tool_tokens(self, conn: ServerConnection, catalog: ToolCatalog) -> dict[str, int] | None:
        """The catalog's token estimates per tool, counted now (in a worker thread) when they are not at
        hand; None without the tokenizer."""
        if self.tokens_at_hand(conn, catalog) is None:
            entry = self._counting.get(self.key_of(conn))
            if entry is not None and entry[0] is catalog:
                await asyncio.wait([entry[1]])  # its failure is the task's to log
        return catalog.tokens

    async def token_counter(self) -> token_count.TokenCounter | None:
        """The counter, loaded on the first need in a worker thread (with numpy, about 0.3 s); None when
        the tokenizer's package is not installed."""
        if not self._counter_loaded:
            await heavy.NUMPY.ready()
            self._counter = await asyncio.to_thread(token_count.load_counter, self._models_dir())
            self._counter_loaded = True
        return self._counter

    def tokenizer_installed(self) -> bool:
        """Whether the tokenizer's files are there (from their sizes and times: nothing is loaded)."""
        if self._counter_loaded:
            return self._counter is not None
        if self._tokenizer_digest is None:
            self._tokenizer_digest = token_count.files_digest() or ""
        return bool(self._tokenizer_digest)

    def definition_tokens_at_hand(self, definition: dict[str, Any]) -> int | None:
        """One definition's estimate, counted here when the counter is loaded (a few tools at most:
        on the event loop); None until a count loaded it (asking never loads numpy and the counter:
        `mcp_tools`' definition is built at every start, by clients that may never rank or count)."""
        counter = self._counter
        return counter.tool(definition) if counter is not None else None

    async def definition_tokens(self, descriptors: Sequence[dict[str, Any]]) -> list[int] | None:
        """The token estimate of each tool definition, counted in a worker thread; None without the tokenizer."""
        counter = await self.token_counter()
        if counter is None:
            return None
        if not descriptors:
            return []
        return await asyncio.to_thread(lambda: [counter.tool(d) for d in descriptors])

    def _models_dir(self) -> Path | None:
        return self.cache.directory.parent / "models" if self.cache is not None else None

    def _kept_tokens(self, conn: ServerConnection, catalog: ToolCatalog) -> dict[str, int] | None:
        """The estimates kept beside the catalog's disk copy, when made from that very file."""
        if catalog.disk is None:
            return None
        kept = self._kept(conn, stored_index.catalog_digest(catalog.disk))
        return kept.tokens if kept is not None else None

    def _kept(self, conn: ServerConnection, catalog: str | None) -> token_count.Counted | None:
        """The estimates kept beside the server's disk copy with this tokenizer (for catalog file
        `catalog`, when given: else whichever copy they were made for)."""
        if self.cache is None:
            return None
        if self._tokenizer_digest is None:
            self._tokenizer_digest = token_count.files_digest() or ""
        data = self.cache.load_tokens(self.key(conn))
        if data is None or not self._tokenizer_digest:
            return None
        return token_count.from_kept(data, self._tokenizer_digest, catalog)

    def _count_soon(self, conn: ServerConnection, catalog: ToolCatalog) -> None:
        if self._counter_loaded and self._counter is None:
            return  # no tokenizer: nothing to count with
        key = self.key_of(conn)
        entry = self._counting.get(key)
        if (entry is not None and entry[0] is catalog) or not _in_event_loop():
            return
        task = tasks.spawn(self._count(conn, catalog, key), f"count-tokens:{conn.name}")
        self._counting[key] = (catalog, task)

    async def _count(self, conn: ServerConnection, catalog: ToolCatalog, key: Hashable) -> None:
        """Count the catalog's accepted tools in a worker thread, keep the estimates beside its disk copy,
        and tell the server's row."""
        try:
            counter = await self.token_counter()
            if counter is None:
                return
            file_key = self.key(conn)
            # What is kept beside the disk copy: this list's, or an earlier one's for its unchanged tools.
            earlier = await asyncio.to_thread(self._kept, conn, None)
            raw = catalog.disk
            digest = stored_index.catalog_digest(raw) if raw is not None else None
            if earlier is not None and digest is not None and earlier.catalog == digest:
                catalog.tokens = earlier.tokens  # counted for this very file: nothing to parse or count
                self._hub.publish(RowMayHaveChanged(conn.name, key))
                return
            counted = await asyncio.to_thread(token_count.count_catalog, counter, catalog.accepted(), earlier)
            catalog.tokens = counted.tokens
            if raw is not None and self.cache is not None:
                data = token_count.kept_bytes(digest or "", counter.digest, counted)
                await asyncio.to_thread(self.cache.store_tokens, file_key, data)
            self._hub.publish(RowMayHaveChanged(conn.name, key))
        finally:
            entry = self._counting.get(key)
            if entry is not None and entry[0] is catalog:
                del self._counting[key]

    # -- resources and prompts ---------------------------------------------------------------

    async def resource_catalog(self, conn: ServerConnection, operation: str) -> ListCatalog:
        return await self._listed(conn, "resources", operation, lambda: conn.list_resources(operation))

    async def prompt_catalog(self, conn: ServerConnection, operation: str) -> ListCatalog:
        async def prompts() -> tuple[list[dict[str, Any]]]:
            return (await conn.list_prompts(operation),)

        return await self._listed(conn, "prompts", operation, prompts)

    async def _listed(
        self,
        conn: ServerConnection,
        group: Group,
        operation: str,
        fetch: Callable[[], Awaitable[Sequence[list[dict[str, Any]]]]],
    ) -> ListCatalog:
        """A catalog kept in memory only: the lists of its group's kinds (`fetch`, in their order), screened."""
        store: dict[Hashable, ListCatalog] = self._groups[group].copies
        key = self.key_of(conn)
        async with self._lock(key, group):
            current = store.get(key)
            if current is not None and current.fresh(conn):
                return current
            async with self.slot(key):
                listed = await fetch()
            group_kinds = kinds.in_group(group)
            screened = [names.screen(conn.name, k.name, found) for k, found in zip(group_kinds, listed, strict=True)]
            accepted = [entries for entries, _ in screened]
            hints = combine(*(conn.lists.hints.get(k.listed_as) for k in group_kinds))
            catalog = ListCatalog(
                conn.name,
                accepted[0],
                accepted[1] if len(accepted) > 1 else [],
                conn.generation,
                kind=group,
                refused=[r for _, refused in screened for r in refused],
                fresh_s=fresh_for(hints, MEMORY_TTL_SECONDS),
            )
            store[key] = catalog
            self._indexes.pop((key, group), None)
            return catalog

    # -- any group ---------------------------------------------------------------------------

    async def catalog(self, conn: ServerConnection, group: Group, operation: str) -> ToolCatalog | ListCatalog:
        """The server's catalog of one group, for whoever treats the groups alike (discovery, refresh)."""
        return await self._groups[group].fetch(conn, operation)

    async def listed_by_each(
        self, conns: Sequence[ServerConnection], group: Group, operation: str
    ) -> list[ListCatalog | None]:
        """Each server's catalog of a list group (resources, prompts), asked at once, in `conns`' order;
        None for a server that cannot list it now (it has nothing to offer now)."""

        async def of(conn: ServerConnection) -> ListCatalog | None:
            try:
                found = await self.catalog(conn, group, operation)
            except SidecarError:
                return None
            return found if isinstance(found, ListCatalog) else None

        return list(await asyncio.gather(*(of(c) for c in conns)))

    def at_hand(self, conn: ServerConnection, group: Group) -> bool:
        """Whether the server's catalog of `group` can be used without asking the server."""
        if group == kinds.TOOL.group:  # memory, else the disk cache
            catalog = self.cached_tools(conn)
            return catalog is not None and not tools_need_fetch(catalog, conn, live=False)
        current: ListCatalog | None = self._groups[group].copies.get(self.key_of(conn))
        return current is not None and current.fresh(conn)

    # -- indexes -----------------------------------------------------------------------------

    async def index(self, conn: ServerConnection, group: Group, source: ToolCatalog | ListCatalog) -> Index:
        """The ranking index of one catalog, rebuilt only when that catalog object changes.

        A disk copy's index stored beside it is used when it was made from that very copy. A
        build (tokens, embeddings, the stored copy) runs in a worker thread: a catalog of
        thousands of tools takes a second or more, and other requests are answered meanwhile.
        Both compute with numpy, loaded by its owner first.
        """
        await self.ready_to_rank()
        key = (self.key_of(conn), group)
        entry = self._indexes.get(key)
        if entry is None or entry.source is not source:
            async with self._builds.setdefault(key, asyncio.Lock()):
                entry = self._indexes.get(key)
                if entry is None or entry.source is not source:
                    index = self._stored_index(conn, source)
                    if index is None:
                        index = await asyncio.to_thread(self._build, conn, source)
                    entry = self._indexes[key] = _IndexEntry(source, index)
        self.encodings.later(key, entry.index, self._keeper(conn, source))
        return entry.index

    def _keeper(self, conn: ServerConnection, source: ToolCatalog | ListCatalog) -> Callable[[Index], None] | None:
        """What stores an index again once the encoder's vectors are attached (tool catalogs on disk)."""
        if not isinstance(source, ToolCatalog) or source.disk is None or self.cache is None:
            return None
        raw = source.disk
        return lambda index: self._keep_index(conn, source, index, raw)

    def _stored_index(self, conn: ServerConnection, source: ToolCatalog | ListCatalog) -> Index | None:
        """The index stored beside a disk copy read before numpy was loaded (`cached_tools`)."""
        if not isinstance(source, ToolCatalog) or source.source != "cache" or source.disk is None:
            return None
        assert self.cache is not None
        key = self.key(conn)
        data = self.cache.load_index(key)
        found = stored_index.from_bytes(data, self._fingerprint(conn, key, source.disk), source.disk) if data else None
        if found is None:
            return None
        _own_encoder_only(found)
        return found.index

    async def ready_to_rank(self) -> None:
        """numpy (every index computes with it) and the embedding model, loaded on the first need."""
        await heavy.NUMPY.ready()
        self.model()

    def load_model_if_cached(self) -> None:
        """numpy and the model now, when an earlier discovery left an index in the disk cache: the
        next one reads it, and pays nothing then. Otherwise they load on the first discovery."""
        if self.cache is not None and self.cache.holds_indexes():
            heavy.NUMPY.wait()
            self.model()

    def _build(self, conn: ServerConnection, source: ToolCatalog | ListCatalog) -> Index:
        """The documents of every kind in the catalog, numbered in one sequence (templates after resources)."""
        if isinstance(source, ToolCatalog):
            listed = [(kinds.TOOL, list(source.visible(conn.config).values()))]
        else:
            listed = source.by_kind()
        docs: list[Document] = []
        for kind, entries in listed:
            offset = len(docs)
            docs += [kind.document(conn.name, d, offset + i) for i, d in enumerate(entries)]
        index = Index.build(conn.name, docs, self._embed(docs))
        if isinstance(source, ToolCatalog) and source.disk is not None:
            self._keep_index(conn, source, index, source.disk)
        return index

    def _embed(self, docs: list[Document]) -> Any:
        """The documents' embeddings, or None (keywords alone rank them) without the model."""
        model = self.model()
        if model is None:
            return None
        try:
            vectors = model.embed([documents.embedding_text(d) for d in docs])
            # At the precision they are stored in: a restart ranks exactly as this process does.
            return vectors.astype("float16").astype("float32")
        except Exception:  # a fault in the model's files must not take discovery down with it
            log.exception("embedding failed; this catalog is ranked by keywords alone")
            return None

    def model(self) -> semantic.Model | None:
        """The embedding model for the semantic signal, or None when it is off or not installed.

        Reads its files with numpy: for callers after `ready_to_rank` (or in a build it started)."""
        if not semantic.enabled_by_environment():
            return None
        return semantic.load_model(self._models_dir())

    def _keep_index(self, conn: ServerConnection, catalog: ToolCatalog, index: Index, raw: bytes) -> None:
        """Store a tool catalog's index beside its disk copy, for the next start's first discovery."""
        assert self.cache is not None
        spans = stored_index.tool_spans(raw, catalog.descriptors)
        if spans is None:
            return
        where = {id(d): span for d, span in zip(catalog.descriptors, spans, strict=True)}
        visible = catalog.visible(conn.config).values()
        key = self.key(conn)
        meta: dict[str, Any] = {"refused": catalog.refused}
        if index.encoded is not None:
            meta["encoder"] = self.encodings.digest()
        data = stored_index.to_bytes(index, self._fingerprint(conn, key, raw), [where[id(d)] for d in visible], meta)
        if data is not None:
            self.cache.store_index(key, data)

    @asynccontextmanager
    async def slot(self, server: Hashable) -> AsyncIterator[None]:
        """A connection's discovery slot (by `key_of`): taken by its first user, shared until its last leaves."""
        entry = self._slots_held.get(server)
        if entry is None:
            entry = self._slots_held[server] = _ServerSlot(asyncio.ensure_future(self.slots.acquire()))
        entry.users += 1
        try:
            # shield: one user's cancellation must not abort the acquisition the others wait for.
            await asyncio.shield(entry.acquired)
            yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._slots_held[server]
                if entry.acquired.done() and not entry.acquired.cancelled():
                    self.slots.release()
                else:
                    entry.acquired.cancel()  # Semaphore.acquire gives back a slot granted meanwhile

    def _lock(self, server: Hashable, group: Group) -> asyncio.Lock:
        return self._locks.setdefault((server, group), asyncio.Lock())


def _descriptors(key: str, raw: bytes) -> list[dict[str, Any]]:
    """A stored catalog's descriptors, parsed when first needed (its index proved it well formed)."""
    loaded = disk_cache.parse(key, raw, fresh_only=False)
    return loaded.tools if loaded is not None else []


def tools_need_fetch(catalog: ToolCatalog, conn: ServerConnection, live: bool) -> bool:
    """Whether the server must be asked again before `catalog` is used (`live`: for a call)."""
    if catalog.expired():
        return True  # its TTL (or a disk copy's 24 hours) ran out
    if catalog.source == "cache":
        return live
    if conn.state != "connected":
        # A copy from an earlier connection still serves browsing; calls demand a live one.
        return live
    if catalog.generation != conn.generation:
        # Reconnected: changes announced while no connection was open were lost.
        return True
    if conn.tools_stale:
        return True
    # Over HTTP a change notice travels on its own stream and can trail the answer that caused
    # it; only stdio's single pipe delivers it first, so calls over HTTP always re-list.
    return live and (not conn.listening or conn.config.transport == "http")


def _in_event_loop() -> bool:
    """Whether an event loop runs here (a synchronous caller in a test has none: nothing is started)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _own_encoder_only(found: stored_index.Stored) -> None:
    """Encoder vectors stored by other encoder files are never compared with this one's."""
    if found.index.encoded is not None and found.meta.get("encoder") != Encodings.digest():
        found.index.encoded = None
