"""Reconnect, refresh and shutdown: the operations on a whole connection."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from mcp_sidecar.catalog.kinds import GROUPS, TOOL
from mcp_sidecar.connections import sdk_streams, stdio
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.protocol.errors import SidecarError, fail, refused_disabled
from mcp_sidecar.services.status import status_row

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import KindDiagnostic, ServerRefreshResult
    from mcp_sidecar.services.app import Sidecar


async def reconnect(app: Sidecar, name: str) -> Connection:
    conn = app.connection(name, "reconnect")
    if conn.config.disabled:
        raise refused_disabled("reconnect", name, conn.config.approval_required)
    if conn.lists.in_flight:
        # Closing now would fail the listing under its discovery; the caller retries once it is in.
        # A connection attempt is not a listing: reconnecting is how a hanging one is stopped.
        raise fail("busy", "reconnect", "A discovery is fetching this server's catalog.", name)
    await conn.close()
    app.catalogs.forget(name)
    await app.catalogs.tool_catalog(conn, "reconnect", live=True)
    return conn


async def refresh(app: Sidecar, name: str) -> ServerRefreshResult:
    """Fetch tool, resource and prompt metadata again; read no resource, load no tool."""
    op = "refresh"
    conn = app.connection(name, op)
    if conn.config.disabled:
        raise refused_disabled(op, name, conn.config.approval_required)
    app.catalogs.forget(name)
    diagnostics: list[KindDiagnostic] = []
    async with app.catalogs.slot(name):
        tools = await app.catalogs.tool_catalog(conn, op, live=True)  # raises: nothing else can work
        for group in GROUPS:
            if group == TOOL.group:
                continue  # listed above
            try:
                await app.catalogs.catalog(conn, group, op)
            except SidecarError as exc:
                diagnostics.append({"kind": group, "diagnostic": exc.diagnostic.to_json()})
    app.notifier.status(conn)
    return {"server": name, "status": status_row(app, conn), "toolsSource": tools.source, "diagnostics": diagnostics}


async def load_sdk() -> None:
    """The MCP SDK, imported once, off the event loop (for an entry point that warms it up)."""
    await sdk_streams.load_sdk()


async def shutdown(app: Sidecar, quick: bool = False) -> None:
    """Close every connection; `quick`: the process is ending on a signal, so stdio servers get a
    few tens of milliseconds for each step of their stop instead of seconds."""
    if quick:
        stdio.hurry()
    await app.configuration.stop_watching()
    for name in app.registry.names():
        app.watches.clear(name, "shutdown")
    await asyncio.gather(*(c.close() for c in app.registry), return_exceptions=True)
