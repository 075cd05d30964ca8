"""Resource watches: explicit, memory-only subscriptions for a person at an interactive client.

An update marks the watch changed and sends `mcp/resourceUpdated` once; later updates
coalesce into that marker until the watch is removed. No content is fetched and no model
turn starts. Watches belong to one connection: reload, disconnection, session replacement
and exit clear them, and nothing restores or retries them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.events import EventHub, Reconciled, ResourceUpdated, StatusChanged, WatchesLost
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError, fail, refused_disabled
from mcp_sidecar.services.notifier import Notify
from mcp_sidecar.services.reading import check_uri

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        ResourceUpdatedParams,
        SubscribeResult,
        SubscriptionsResult,
        UnsubscribeResult,
        WatchesClearedParams,
    )
    from mcp_sidecar.protocol.results import Watch as WatchJson
    from mcp_sidecar.services.configuration import Configuration

log = logging.getLogger(__name__)

MAX_WATCHES_PER_CONNECTION = 50


@dataclass(slots=True)
class Watch:
    server: str
    uri: str
    generation: int
    since: float
    changed: bool = False
    updates: int = 0
    updated_at: float | None = None

    def to_json(self) -> WatchJson:
        return {
            "server": self.server,
            "uri": self.uri,
            "changed": self.changed,
            "updates": self.updates,
            "subscribedAt": self.since,
            "updatedAt": self.updated_at,
        }


class Watches:
    """The client's resource watches, by server: subscribing, coalescing updates, clearing them."""

    def __init__(self, notify: Notify, hub: EventHub, configuration: Configuration, registry: ServerRegistry) -> None:
        self._notify = notify
        self._configuration = configuration
        self._registry = registry
        self._by_server: dict[str, dict[str, Watch]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        hub.subscribe(StatusChanged, lambda event: self.connection_changed(event.conn))
        hub.subscribe(ResourceUpdated, lambda event: self.resource_updated(event.conn, event.uri))
        hub.subscribe(WatchesLost, self._lost)
        hub.subscribe(Reconciled, self._reconciled)

    def _lost(self, event: WatchesLost) -> None:
        self.clear(event.conn.name, "subscription stream lost")

    def _reconciled(self, event: Reconciled) -> None:
        for conn in event.closing:
            self.clear(conn.name, "configuration reload")

    # -- events from connections -------------------------------------------------------------

    def resource_updated(self, conn: ServerConnection, uri: str) -> None:
        watch = self._by_server.get(conn.name, {}).get(uri)
        if watch is None or watch.generation != conn.generation:
            return  # not watched (or watched on an earlier session): ignored
        watch.updates += 1
        watch.updated_at = time.time()
        if watch.changed:
            return  # coalesced into the marker already sent
        watch.changed = True
        updated: ResourceUpdatedParams = {"server": conn.name, "uri": uri, "changed": True}
        self._notify(methods.RESOURCE_UPDATED, updated)

    def clear(self, server: str, reason: str) -> list[str]:
        """Forget every watch of `server` (its session ended or was replaced); tell the client."""
        dropped = self._by_server.pop(server, {})
        if dropped:
            uris = sorted(dropped)
            log.info("server %s: %d watch(es) cleared (%s)", server, len(uris), reason)
            cleared: WatchesClearedParams = {"server": server, "uris": uris, "reason": reason}
            self._notify(methods.WATCHES_CLEARED, cleared)
            return uris
        return []

    def connection_changed(self, conn: ServerConnection) -> None:
        watches = self._by_server.get(conn.name)
        if not watches:
            return
        if conn.state != "connected" or any(w.generation != conn.generation for w in watches.values()):
            self.clear(conn.name, "disconnected")

    # -- requests ----------------------------------------------------------------------------

    def list(self) -> SubscriptionsResult:
        watches = [w.to_json() for server in sorted(self._by_server) for w in self._by_server[server].values()]
        return {"watches": watches, "limitPerConnection": MAX_WATCHES_PER_CONNECTION}

    def _lock(self, server: str) -> asyncio.Lock:
        return self._locks.setdefault(server, asyncio.Lock())

    async def subscribe(self, server: str, uri: str) -> SubscribeResult:
        op = "subscribe"
        if not self._configuration.interactive:
            raise fail(
                "interactive_required",
                op,
                "Resource watches need an interactive client (initializationOptions.interactive).",
                server,
            )
        check_uri(uri, op, server)
        conn = self._configuration.connection(server, op)
        if conn.config.disabled:
            raise refused_disabled(op, server, conn.config.approval_required)
        async with self._lock(server):
            current = self._by_server.get(server, {})
            existing = current.get(uri)
            if existing is not None and existing.generation == conn.generation and conn.state == "connected":
                return {"watch": existing.to_json(), "created": False}
            live = {u: w for u, w in current.items() if w.generation == conn.generation}
            if len(live) >= MAX_WATCHES_PER_CONNECTION:
                raise fail(
                    "subscription_limit",
                    op,
                    f"The server already has {MAX_WATCHES_PER_CONNECTION} watches on this connection.",
                    server,
                )
            generation = await conn.subscribe_resource(uri, op)
            if not self._registry.is_current(conn) or conn.generation != generation:
                raise fail("cancelled", op, "The connection was replaced while subscribing.", server)
            watches = self._by_server.setdefault(server, {})
            for stale in [u for u, w in watches.items() if w.generation != generation]:
                del watches[stale]
            watch = watches[uri] = Watch(server, uri, generation, time.time())
            return {"watch": watch.to_json(), "created": True}

    async def unsubscribe(self, server: str, uri: str) -> UnsubscribeResult:
        op = "unsubscribe"
        check_uri(uri, op, server)
        conn = self._configuration.connection(server, op)
        async with self._lock(server):
            watch = self._by_server.get(server, {}).pop(uri, None)
            if not self._by_server.get(server):
                self._by_server.pop(server, None)
            if watch is None:
                return {"server": server, "uri": uri, "removed": False}
            if watch.generation == conn.generation:
                try:
                    await conn.unsubscribe_resource(uri, op)
                except SidecarError as exc:
                    # Best effort: the watch is gone here whatever the server's outcome.
                    log.info("server %s: unsubscribe failed: %s", server, exc.diagnostic.code)
            return {"server": server, "uri": uri, "removed": True}
