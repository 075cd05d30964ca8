"""The composition root: the registry, the event hub, the services and the notifier, wired once.

Handlers call the services with this object; notifications go out through the `notify`
callable the protocol layer supplies, so nothing here knows about pygls. The order of the
subscriptions below is the order of the editor's notifications for one event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_sidecar.catalog.disk_cache import ToolCache
from mcp_sidecar.config import paths
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections.client_hooks import ClientSide
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.connections.registry import ConnectionFactory, ServerRegistry
from mcp_sidecar.events import ConnectionEvent, EventHub
from mcp_sidecar.services.activation import Activation
from mcp_sidecar.services.approvals import Approvals
from mcp_sidecar.services.auth import Auth
from mcp_sidecar.services.catalogs import Catalogs
from mcp_sidecar.services.commands import Commands
from mcp_sidecar.services.completion import Completion
from mcp_sidecar.services.config_edits import ConfigEdits
from mcp_sidecar.services.config_imports import ConfigImports
from mcp_sidecar.services.configuration import Configuration
from mcp_sidecar.services.discovery import Discovery
from mcp_sidecar.services.lifecycle import Lifecycle
from mcp_sidecar.services.model_tool import ModelTool
from mcp_sidecar.services.notifier import Notifier, Notify
from mcp_sidecar.services.offers import Offers
from mcp_sidecar.services.prompts import Prompts
from mcp_sidecar.services.reading import Reading
from mcp_sidecar.services.roots import Roots
from mcp_sidecar.services.sessions import Sessions
from mcp_sidecar.services.status import Status
from mcp_sidecar.services.watches import Watches

MAX_DISCOVERIES_IN_FLIGHT = 4


class Sidecar:
    def __init__(
        self,
        notify: Notify,
        workspace: Path | None = None,
        trusted: bool = False,
        interactive: bool = False,
        use_disk_cache: bool = True,
        watch_config: bool = True,
        approve_project: bool = False,
        connection_factory: ConnectionFactory | None = None,
    ) -> None:
        """`connection_factory` builds each server's connection (tests pass one making fakes)."""
        self.hub = EventHub()
        self.notify = notify
        self.registry = ServerRegistry(self.hub, connection_factory or self._new_connection)
        self.configuration = Configuration(
            self.registry,
            self.hub,
            workspace=workspace,
            trusted=trusted,
            interactive=interactive,
            watch_files=watch_config,
            grant=approve_project,
        )
        # Subscribers run in this order for each event (see events.py).
        self.watches = Watches(notify, self.hub, self.configuration, self.registry)
        cache = ToolCache(paths.cache_dir() / "catalogs") if use_disk_cache else None
        self.catalogs = Catalogs(cache, asyncio.Semaphore(MAX_DISCOVERIES_IN_FLIGHT), self.hub)
        self.prompts = Prompts(self.configuration, self.registry, self.catalogs, self.hub)
        """Prompt previews, pending ones too: a configuration reload or their server's disconnection ends them."""
        self.sessions = Sessions(self.hub, self.registry)
        self.auth = Auth(self.configuration)
        """OAuth: the credential store, how to open a URL, logins waiting for a pasted callback."""
        self.status = Status(self.configuration, self.registry, self.catalogs, self.sessions, self.auth)
        self.notifier = Notifier(
            notify,
            self.hub,
            self.registry,
            self.status.row,
            lambda: self.configuration.pending.values(),
            lambda: self.model_tool.definition(),  # built below; asked only once events flow
        )
        self.roots = Roots(self.configuration, self.registry, self.hub)
        self.offers = Offers(self.registry, self.catalogs)
        """What the servers are offered: the editor's `mcpCapabilities`, or the gateway's hosts'; nothing by default."""
        self._client_side = ClientSide(offer=lambda: self.offers.current, roots=self.roots.current, ask=self.hub.ask)
        self.lifecycle = Lifecycle(
            self.configuration, self.registry, self.catalogs, self.notifier, self.status, self.watches.clear
        )
        self.approvals = Approvals(self.configuration)
        self.config_edits = ConfigEdits(self.configuration, self.registry)
        self.config_imports = ConfigImports(self.configuration)
        # The discovery side's features, lower ones first.
        self.activation = Activation(self.configuration, self.registry, self.catalogs, self.sessions)
        self.reading = Reading(self.configuration, self.registry, self.catalogs)
        self.completion = Completion(self.configuration, self.reading, self.prompts)
        self.discovery = Discovery(self.configuration, self.registry, self.catalogs, self.sessions, self.activation)
        self.model_tool = ModelTool(
            self.configuration,
            self.registry,
            self.catalogs,
            self.sessions,
            discovery=self.discovery,
            activation=self.activation,
            reading=self.reading,
            completion=self.completion,
            prompts=self.prompts,
        )
        self.commands = Commands(self.configuration, self.registry)

    @classmethod
    def headless(cls, workspace: Path, trust_project: bool) -> Sidecar:
        """One CLI run: no notifications, no file watching; `--trust-project` grants trust for this run."""
        return cls(
            lambda method, params: None,
            workspace=workspace,
            trusted=trust_project,
            watch_config=False,
            approve_project=trust_project,
        )

    def _new_connection(
        self, server: ServerConfig, run_dir: Path, publish: Callable[[ConnectionEvent], None]
    ) -> Connection:
        return Connection(server, run_dir, publish, self._http_auth, self._client_side)

    async def _http_auth(self, conn: Connection) -> tuple[Any, str]:
        return await self.auth.connection_auth(conn)

    # -- what every service needs first ------------------------------------------------------

    def ensure_loaded(self) -> None:
        self.configuration.ensure_loaded()

    def connection(self, name: str, operation: str) -> ServerConnection:
        """The named server's connection, once the configuration is loaded; a diagnostic when there is none."""
        return self.configuration.connection(name, operation)

    async def shutdown(self, quick: bool = False) -> None:
        await self.lifecycle.shutdown(quick)
