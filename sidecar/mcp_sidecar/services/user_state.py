"""The user's state: what every client of this process shares, built once per process.

The server connections (the registry and the factory that builds them), the catalogs with
their disk cache, stored indexes and discovery slots, the OAuth credential store, and the
project approvals that could not be saved. The semantic model (`catalog/semantic.py`) is
process-wide already: loaded once, whoever ranks first. Each client
(`services/client_context.py`) attaches here: it hears the user hub's events on its own hub,
and becomes the one a server's question goes to while its request is in flight
(`services/questions.py`).

Nothing here imports a client's module (`tests/unit/test_layers.py`): a client holds the user's
state, never the other way round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_sidecar.catalog.disk_cache import ToolCache
from mcp_sidecar.config import paths
from mcp_sidecar.config.approvals import HeldApprovals
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.connections.registry import ConnectionFactory, ServerRegistry
from mcp_sidecar.events import (
    CatalogInvalidated,
    ConnectionEvent,
    ElicitationCompleted,
    EventHub,
    Reconciled,
    ResourceUpdated,
    RowMayHaveChanged,
    ServerLogged,
    StatusChanged,
    WatchesLost,
)
from mcp_sidecar.services.catalogs import Catalogs
from mcp_sidecar.services.credentials import Credentials
from mcp_sidecar.services.questions import Clients

if TYPE_CHECKING:
    from mcp_sidecar.services.questions import Client

MAX_DISCOVERIES_IN_FLIGHT = 4

USER_EVENTS: tuple[type[object], ...] = (
    StatusChanged,
    CatalogInvalidated,
    ResourceUpdated,
    WatchesLost,
    ServerLogged,
    ElicitationCompleted,
    Reconciled,
    RowMayHaveChanged,
)
"""What is published on the user hub (by the connections, the registry and the catalogs) and
relayed to every client's hub, in the order of the client's own subscriptions."""


class UserState:
    def __init__(self, connection_factory: ConnectionFactory | None = None, use_disk_cache: bool = True) -> None:
        """`connection_factory` builds each server's connection (tests pass one making fakes)."""
        self.hub = EventHub()
        """The user's events: connections, reconciles, catalogs. Its subscribers run before any client's."""
        self.clients = Clients()
        self.registry = ServerRegistry(self.hub, connection_factory or self._new_connection)
        cache = ToolCache(paths.cache_dir() / "catalogs") if use_disk_cache else None
        self.catalogs = Catalogs(cache, asyncio.Semaphore(MAX_DISCOVERIES_IN_FLIGHT), self.hub)
        self.credentials = Credentials()
        self.held_approvals = HeldApprovals()
        self.client_side = self.clients.client_side()
        """What every connection is given: the offer, the roots and the way to ask, routed to a client."""

    def _new_connection(
        self, server: ServerConfig, run_dir: Path, publish: Callable[[ConnectionEvent], None]
    ) -> Connection:
        return Connection(server, run_dir, publish, self.credentials.connection_auth, self.client_side)

    def attach(self, client: Client) -> Callable[[], None]:
        """Relay the user's events to `client`'s hub and route questions to it; returns the detach."""
        relays = [self.hub.subscribe(kind, client.hub.publish) for kind in USER_EVENTS]
        self.clients.attach(client)

        def detach() -> None:
            for unsubscribe in relays:
                unsubscribe()
            self.clients.detach(client)

        return detach

    async def close(self) -> None:
        """Close every connection (the engine is exiting)."""
        await asyncio.gather(*(conn.close() for conn in self.registry), return_exceptions=True)
