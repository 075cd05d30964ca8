"""The sidecar's state: configuration, one Connection per server, catalogs and sessions.

Handlers call the services through this object; notifications go out through the
`notify` callable the protocol layer supplies, so nothing here knows about pygls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.config import loader
from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.validate import ConfigProblems
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, diagnostic, fail

log = logging.getLogger(__name__)

Notifier = Callable[[str, dict[str, Any]], None]
MAX_DISCOVERIES_IN_FLIGHT = 4


@dataclass(frozen=True, slots=True)
class ActiveTool:
    server: str
    name: str
    descriptor: dict[str, Any]
    canonical: str
    config_fingerprint: str


class Sidecar:
    def __init__(
        self,
        notify: Notifier,
        workspace: Path | None = None,
        trusted: bool = False,
        interactive: bool = False,
    ) -> None:
        self.notify = notify
        self.workspace = workspace
        self.trusted = trusted
        self.interactive = interactive
        self.config: EffectiveConfig | None = None
        self.config_errors: list[Diagnostic] = []
        self.connections: dict[str, Connection] = {}
        self.tool_catalogs: dict[str, ToolCatalog] = {}
        self.sessions: dict[str, dict[str, ActiveTool]] = {}
        self.discovery_slots = asyncio.Semaphore(MAX_DISCOVERIES_IN_FLIGHT)
        self._catalog_locks: dict[str, asyncio.Lock] = {}
        self._sent_rows: dict[str, dict[str, Any]] = {}
        self._loaded = False

    # -- configuration -----------------------------------------------------------------------

    def configure(self, workspace: Path | None, trusted: bool, interactive: bool) -> None:
        """Apply the editor's `initialize` answer; a configuration already loaded is reloaded lazily."""
        changed = (workspace, trusted) != (self.workspace, self.trusted)
        self.workspace, self.trusted, self.interactive = workspace, trusted, interactive
        if changed and self._loaded:
            self._loaded = False

    def ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            self._apply(self._read_config())

    def _read_config(self) -> EffectiveConfig | None:
        try:
            config = loader.load(self.workspace, self.trusted)
        except ConfigProblems as exc:
            self.config_errors = [
                diagnostic("configuration_invalid", "configuration", problem) for problem in exc.problems
            ]
            log.warning("configuration invalid: %d problem(s)", len(exc.problems))
            return None
        self.config_errors = []
        return config

    def _apply(self, config: EffectiveConfig | None) -> None:
        """Swap in a new configuration; connections of changed definitions are replaced."""
        if config is None:
            if self.config is None:
                self.config = EffectiveConfig(servers={}, files=())
            return  # invalid: keep the previous setup
        old = self.connections
        self.config = config
        self.connections = {}
        removed: list[str] = []
        for name, server in config.servers.items():
            previous = old.get(name)
            if previous is not None and previous.config.fingerprint() == server.fingerprint():
                previous.workspace = self.workspace
                self.connections[name] = previous
            else:
                self.connections[name] = Connection(
                    server, self.workspace, self._connection_changed, self._catalog_invalidated
                )
                self.tool_catalogs.pop(name, None)
        for name, conn in old.items():
            if self.connections.get(name) is not conn:
                removed.append(name)
                self.tool_catalogs.pop(name, None)
                from mcp_sidecar import tasks

                tasks.spawn(conn.close(), f"close:{name}")
        self._deactivate_stale(reason="configuration changed")

    def _deactivate_stale(self, reason: str) -> None:
        for session, active in self.sessions.items():
            dropped = []
            for tool_id, tool in list(active.items()):
                conn = self.connections.get(tool.server)
                if conn is None or conn.config.disabled or conn.config.fingerprint() != tool.config_fingerprint:
                    dropped.append(tool_id)
                    del active[tool_id]
            if dropped:
                self.notify(methods.ACTIVE_TOOLS_CHANGED, {"session": session, "removed": dropped, "reason": reason})

    # -- connections -------------------------------------------------------------------------

    def connection(self, name: str, operation: str) -> Connection:
        self.ensure_loaded()
        conn = self.connections.get(name)
        if conn is None:
            if self.config_errors:
                raise SidecarError(
                    diagnostic(
                        "configuration_invalid",
                        operation,
                        f"No server named {name!r}: the configuration is invalid ({len(self.config_errors)} "
                        "problem(s), see mcp/status).",
                        name,
                    )
                )
            raise fail("server_not_found", operation, f"No server named {name!r} is configured.", name)
        return conn

    def _connection_changed(self, conn: Connection) -> None:
        if self.connections.get(conn.name) is not conn:
            return
        self._notify_status(conn)

    def _notify_status(self, conn: Connection) -> None:
        """Send the server's row only when it changed: re-listing a catalog usually changes nothing."""
        row = _row(self, conn)
        if self._sent_rows.get(conn.name) != row:
            self._sent_rows[conn.name] = row
            self.notify(methods.SERVER_STATUS, row)

    def _catalog_invalidated(self, conn: Connection, kind: str) -> None:
        if self.connections.get(conn.name) is not conn:
            return
        if kind == "tools":
            self.tool_catalogs.pop(conn.name, None)
        self.notify(methods.CATALOG_CHANGED, {"server": conn.name, "kind": kind})

    async def tool_catalog(self, conn: Connection, operation: str, *, live: bool = False) -> ToolCatalog:
        """The server's tool catalog; `live` demands one fetched on the current, listening connection."""
        lock = self._catalog_locks.setdefault(conn.name, asyncio.Lock())
        async with lock:
            current = self.tool_catalogs.get(conn.name)
            if current is not None and not _needs_fetch(current, conn, live):
                return current
            async with self.discovery_slots:
                descriptors = await conn.list_tools(operation)
            catalog = ToolCatalog(conn.name, descriptors, source="live", generation=conn.generation)
            if self.connections.get(conn.name) is conn:
                self.tool_catalogs[conn.name] = catalog
                self._notify_status(conn)
            return catalog

    async def reconnect(self, name: str) -> Connection:
        conn = self.connection(name, "reconnect")
        if conn.config.disabled:
            raise fail("server_disabled", "reconnect", "The server is disabled.", name)
        await conn.close()
        self.tool_catalogs.pop(name, None)
        await self.tool_catalog(conn, "reconnect", live=True)
        return conn

    async def shutdown(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)


def _needs_fetch(catalog: ToolCatalog, conn: Connection, live: bool) -> bool:
    if catalog.source == "cache":
        return live
    if conn.state != "connected" or catalog.generation != conn.generation:
        # A catalog from an earlier connection still serves browsing; calls demand a live one.
        return live
    if conn.tools_stale:
        return True
    # Over HTTP a change notice travels on its own stream and can trail the answer that caused
    # it; only stdio's single pipe delivers it first, so calls over HTTP always re-list.
    return live and (not conn.listening or conn.config.transport == "http")


def _row(app: Sidecar, conn: Connection) -> dict[str, Any]:
    from mcp_sidecar.services.status import status_row

    return status_row(app, conn)
