"""Reconnect, refresh and shutdown: the operations on a whole connection."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_sidecar.catalog.kinds import GROUPS, TOOL
from mcp_sidecar.connections import sdk_streams, stdio
from mcp_sidecar.protocol.errors import SidecarError, fail, refused_disabled

if TYPE_CHECKING:
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import KindDiagnostic, ServerRefreshResult
    from mcp_sidecar.services.catalogs import Catalogs
    from mcp_sidecar.services.configuration import Configuration
    from mcp_sidecar.services.notifier import Notifier
    from mcp_sidecar.services.status import Status


async def load_sdk() -> None:
    """The MCP SDK, imported once, off the event loop (for an entry point that warms it up)."""
    await sdk_streams.load_sdk()


class Lifecycle:
    """Reconnect, refresh and shutdown over the registry's connections and their catalogs."""

    def __init__(
        self,
        configuration: Configuration,
        registry: ServerRegistry,
        catalogs: Catalogs,
        notifier: Notifier,
        status: Status,
        clear_watches: Callable[[str, str], object],
    ) -> None:
        self._configuration = configuration
        self._registry = registry
        self._catalogs = catalogs
        self._notifier = notifier
        self._status = status
        self._clear_watches = clear_watches
        """`Watches.clear(server, reason)`: a closing server's watches end."""

    async def reconnect(self, name: str) -> ServerConnection:
        conn = self._configuration.connection(name, "reconnect")
        if conn.config.disabled:
            raise refused_disabled("reconnect", name, conn.config.approval_required)
        if conn.lists.in_flight:
            # Closing now would fail the listing under its discovery; the caller retries once it is in.
            # A connection attempt is not a listing: reconnecting is how a hanging one is stopped.
            raise fail("busy", "reconnect", "A discovery is fetching this server's catalog.", name)
        await conn.close()
        self._catalogs.forget(conn)
        await self._catalogs.tool_catalog(conn, "reconnect", live=True)
        return conn

    async def refresh(self, name: str) -> ServerRefreshResult:
        """Fetch tool, resource and prompt metadata again; read no resource, load no tool."""
        op = "refresh"
        conn = self._configuration.connection(name, op)
        if conn.config.disabled:
            raise refused_disabled(op, name, conn.config.approval_required)
        catalogs = self._catalogs
        catalogs.forget(conn)
        diagnostics: list[KindDiagnostic] = []
        async with catalogs.slot(catalogs.key_of(conn)):
            tools = await catalogs.tool_catalog(conn, op, live=True)  # raises: nothing else can work
            for group in GROUPS:
                if group == TOOL.group:
                    continue  # listed above
                try:
                    await catalogs.catalog(conn, group, op)
                except SidecarError as exc:
                    diagnostics.append({"kind": group, "diagnostic": exc.diagnostic.to_json()})
        self._notifier.status(conn)
        return {
            "server": name,
            "status": self._status.row(conn),
            "toolsSource": tools.source,
            "diagnostics": diagnostics,
        }

    async def leave(self) -> None:
        """This client is gone but the user's connections serve others (the engine): stop watching its
        files and end its watches; the connections stay."""
        await self._configuration.stop_watching()
        for name in self._registry.names():
            self._clear_watches(name, "shutdown")

    async def shutdown(self, quick: bool = False) -> None:
        """Close every connection; `quick`: the process is ending on a signal, so stdio servers get a
        few tens of milliseconds for each step of their stop instead of seconds."""
        if quick:
            stdio.hurry()
        await self._configuration.stop_watching()
        for name in self._registry.names():
            self._clear_watches(name, "shutdown")
        await asyncio.gather(*(c.close() for c in self._registry), return_exceptions=True)
