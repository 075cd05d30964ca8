"""The user's state: what every client of this process shares, built once per process.

The server connections (the shared registry, one connection per `ConnectionKey`, and the
factory that builds them), the catalogs with their disk cache, stored indexes and discovery
slots, the OAuth credential store, and the project approvals that could not be saved. The
semantic model (`catalog/semantic.py`) is process-wide already: loaded once, whoever ranks
first. Each client (`services/client_context.py`) attaches here: it hears the events of the
connections it uses on its own hub (routed by the registry, `connections/sharing.py`), and
becomes the one a server's question goes to while its request is in flight
(`services/questions.py`), among the clients of that server's connection.

Nothing here imports a client's module (`tests/unit/test_layers.py`): a client holds the user's
state, never the other way round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_sidecar.catalog.disk_cache import ToolCache
from mcp_sidecar.config import paths
from mcp_sidecar.config.approvals import HeldApprovals
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.connections.sharing import ConnectionFactory, ConnectionKey, ConnectionRoute, SharedRegistry
from mcp_sidecar.events import EventHub, RowMayHaveChanged
from mcp_sidecar.services.catalogs import Catalogs
from mcp_sidecar.services.credentials import Credentials
from mcp_sidecar.services.fronts import EngineInfo, Fronts, Workspace
from mcp_sidecar.services.questions import Clients

if TYPE_CHECKING:
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.protocol.results import EngineStatus
    from mcp_sidecar.services.questions import Client

MAX_DISCOVERIES_IN_FLIGHT = 4


class UserState:
    def __init__(
        self, connection_factory: ConnectionFactory | None = None, use_disk_cache: bool = True, server_idle_s: float = 0
    ) -> None:
        """`connection_factory` builds each server's connection (tests pass one making fakes);
        `server_idle_s`, how long a server no client uses stays up (the engine's; else closed at once)."""
        self.hub = EventHub()
        """The user's events: connections (then routed to their clients), the catalogs'. Its
        subscribers run before any client's."""
        self.clients = Clients()
        self.engine: EngineInfo | None = None
        """The engine serving this state (set by the engine); None in a process of its own."""
        self.fronts = Fronts()
        """The front each client came through, in the engine."""
        self.registry = SharedRegistry(self.hub, connection_factory or self._new_connection, server_idle_s)
        """Every connection, one per key, with the clients using each (each client's view is its own
        `ServerRegistry`, `connections/registry.py`)."""
        cache = ToolCache(paths.cache_dir() / "catalogs") if use_disk_cache else None
        self.catalogs = Catalogs(cache, asyncio.Semaphore(MAX_DISCOVERIES_IN_FLIGHT), self.hub, self._catalog_key)
        self.credentials = Credentials()
        self.held_approvals = HeldApprovals()
        self.hub.subscribe(RowMayHaveChanged, self._row_may_have_changed)

    def _new_connection(
        self, server: ServerConfig, run_dir: Path, route: ConnectionRoute, environ: Mapping[str, str]
    ) -> Connection:
        """A connection whose offer, roots and questions are its own clients' (`route.users`), resolved in
        the environment of the client that wanted it first (its sharers' resolves the same)."""
        client_side = self.clients.client_side(route.users)
        return Connection(server, run_dir, route, self.credentials.connection_auth, client_side, environ=environ)

    def _catalog_key(self, conn: ServerConnection) -> Hashable:
        """Catalogs are kept per connection key: two clients' `github` may be two servers."""
        key = self.registry.key_of(conn)
        return key if key is not None else ConnectionKey(conn.name, definition=f"released-{id(conn)}")

    def _row_may_have_changed(self, event: RowMayHaveChanged) -> None:
        """A catalog's news reaches the clients of its connection only."""
        users = self.registry.users(event.key) if isinstance(event.key, ConnectionKey) else None
        for client in self.clients.of((lambda: users) if users is not None else None):
            client.hub.publish(event)

    def attach(self, client: Client, workspace: Workspace = lambda: None) -> Callable[[], None]:
        """Route questions to `client` (its connections' events reach its hub through its registry view)
        and, in the engine, record the front it came through with its `workspace`; returns the detach."""
        self.clients.attach(client)
        self.fronts.attach(client.id, workspace)

        def detach() -> None:
            self.clients.detach(client)
            self.fronts.detach(client.id)

        return detach

    def engine_status(self, client: str) -> EngineStatus | None:
        """The engine and its clients as `client` sees them in `mcp/status`; None without an engine."""
        return self.fronts.status(self.engine, client) if self.engine is not None else None

    async def close(self) -> None:
        """Close every connection, idle ones too (the engine is exiting)."""
        closing = [*self.registry.close_idle(), *self.registry]
        await asyncio.gather(*(conn.close() for conn in closing), return_exceptions=True)
