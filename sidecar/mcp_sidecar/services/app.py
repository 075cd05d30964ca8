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

from mcp_sidecar import tasks
from mcp_sidecar.catalog.disk_cache import ToolCache
from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.config import loader, paths
from mcp_sidecar.config.approvals import Approval, Pending
from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.validate import ConfigProblems
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.events import CatalogInvalidated, ConnectionEvent, ResourceUpdated, StatusChanged
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, diagnostic, fail, refused_disabled
from mcp_sidecar.services import approvals, auth
from mcp_sidecar.services.auth import Logins
from mcp_sidecar.services.catalogs import Catalogs, Group
from mcp_sidecar.services.config_watch import ConfigWatcher, Signature, signature
from mcp_sidecar.services.prompts import Previews
from mcp_sidecar.services.watches import Watches

log = logging.getLogger(__name__)

Notifier = Callable[[str, dict[str, Any]], None]
MAX_DISCOVERIES_IN_FLIGHT = 4


@dataclass(frozen=True, slots=True)
class ReloadSummary:
    """What a reload changed. `applied` is False when the files were invalid (nothing changed)."""

    applied: bool
    added: list[str]
    removed: list[str]
    changed: list[str]
    unchanged: list[str]
    deactivated: list[dict[str, Any]]
    """The `mcp/activeToolsChanged` payloads sent."""
    diagnostics: list[dict[str, Any]]

    @classmethod
    def not_applied(cls, diagnostics: list[dict[str, Any]]) -> ReloadSummary:
        return cls(False, [], [], [], [], [], diagnostics)

    def to_json(self) -> dict[str, Any]:
        return {
            "applied": self.applied,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "deactivated": self.deactivated,
            "diagnostics": self.diagnostics,
        }

    def describe(self) -> str:
        if not self.applied:
            return f"not applied: {len(self.diagnostics)} configuration problem(s); the previous setup stays in use"
        parts = [f"{len(getattr(self, k))} {k}" for k in ("added", "removed", "changed", "unchanged")]
        tools = sum(len(d["removed"]) for d in self.deactivated)
        return ", ".join(parts) + f"; {tools} active tool(s) deactivated"


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
        use_disk_cache: bool = True,
        watch_config: bool = True,
        approve_project: bool = False,
    ) -> None:
        self.notify = notify
        self.workspace = workspace
        self.trusted = trusted
        self.interactive = interactive
        self.config: EffectiveConfig | None = None
        self.config_errors: list[Diagnostic] = []
        self.connections: dict[str, Connection] = {}
        self.sessions: dict[str, dict[str, ActiveTool]] = {}
        self.catalogs = Catalogs(
            ToolCache(paths.cache_dir() / "catalogs") if use_disk_cache else None,
            asyncio.Semaphore(MAX_DISCOVERIES_IN_FLIGHT),
            on_tools_changed=self._tools_fetched,
        )
        self.watches = Watches(notify)
        self.previews = Previews()
        self.logins = Logins()
        """OAuth: the credential store, how to open a URL, logins waiting for a pasted callback."""
        """Pending prompt previews: a configuration reload or their server's disconnection ends them."""
        self._sent_rows: dict[str, dict[str, Any]] = {}
        self._loaded = False
        self._watch_config = watch_config
        self._watcher: ConfigWatcher | None = None
        self._reload_lock = asyncio.Lock()
        self.pending: dict[str, Pending] = {}
        """Project definitions waiting for the person's approval (see services/approvals.py)."""
        self.approved_here: dict[str, Approval] = {}
        self.granted: list[Pending] = []
        """What the last grant of trust approved that was not approved before (the CLI reports it)."""
        """Approvals that could not be saved: they hold for this process only."""
        self._grant = approve_project and trusted
        """Trust was just granted (the CLI's --trust-project): the definitions present are approved."""
        self._sent_pending: frozenset[tuple[str, str]] = frozenset()

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

    # -- configuration -----------------------------------------------------------------------

    def configure(self, workspace: Path | None, trusted: bool, interactive: bool, granted: bool = False) -> None:
        """Apply the editor's `initialize` answer; a configuration already loaded is reloaded lazily.

        `granted` (`initializationOptions.trustGranted`): the person granted trust just now, so
        the project's definitions as they are count as approved.
        """
        changed = (workspace, trusted) != (self.workspace, self.trusted)
        self.workspace, self.trusted, self.interactive = workspace, trusted, interactive
        self._grant = granted and trusted
        if changed and self._loaded:
            self._loaded = False

    def grant_trust(self) -> None:
        """The person granted trust just now: the next load approves the project's definitions."""
        self.trusted = True
        self._grant = True

    def take_grant(self) -> bool:
        grant, self._grant = self._grant, False
        return grant

    def ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            seen = self._watched_signature()
            _, closing = self._apply(self._read_config())
            for conn in closing:
                tasks.spawn(conn.close(), f"close:{conn.name}")
            self._start_watching(seen)

    async def reload(self, *, close_all: bool = False) -> ReloadSummary:
        """Read the configuration files again and reconcile; invalid files keep the previous setup.

        Connections of changed, removed or disabled definitions close (all of them with
        `close_all`, an explicit reload); they reopen on demand. Tools of those definitions
        are deactivated; unchanged active tools stay.
        """
        async with self._reload_lock:
            self.ensure_loaded()  # so a first reload compares against what the files said before
            seen = self._watched_signature()
            summary, closing = self._apply(self._read_config(), close_all=close_all)
            self._start_watching(seen)
            await asyncio.gather(*(conn.close() for conn in closing), return_exceptions=True)
            return summary

    def watched_files(self) -> list[Path]:
        try:
            files = [paths.global_config_path()]
        except paths.InvalidHome:
            files = []
        if self.workspace is not None and self.trusted:
            files.append(paths.project_config_path(self.workspace))
        return files

    def _watched_signature(self) -> Signature:
        return signature(self.watched_files())

    def _start_watching(self, seen: Signature) -> None:
        """Start the file watcher once the configuration is loaded (never without an event loop)."""
        if not self._watch_config:
            return
        if self._watcher is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return
            self._watcher = ConfigWatcher(self.watched_files, self._reload_after_change)
            self._watcher.start()
        self._watcher.mark_loaded(seen)

    async def _reload_after_change(self) -> None:
        summary = await self.reload()
        log.info("configuration reloaded after a file change: %s", summary.describe())

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
        return approvals.gate(self, config)

    def _apply(
        self, config: EffectiveConfig | None, *, close_all: bool = False
    ) -> tuple[ReloadSummary, list[Connection]]:
        """Swap in a new configuration; connections of changed definitions are replaced.

        Returns what changed and the connections the caller must close.
        """
        if config is None:
            if self.config is None:
                self.config = EffectiveConfig(servers={}, files=())
            # Invalid: keep the previous setup.
            return ReloadSummary.not_applied([d.to_json() for d in self.config_errors]), []
        old = self.connections
        first_load = self.config is None
        self.previews.clear()
        self.config = config
        self.connections = {}
        added: list[str] = []
        changed: list[str] = []
        unchanged: list[str] = []
        closing: list[Connection] = []
        for name, server in config.servers.items():
            previous = old.get(name)
            run_dir = self._run_dir(server)
            if (
                previous is not None
                and previous.config.fingerprint() == server.fingerprint()
                and previous.workspace == run_dir
            ):
                self.connections[name] = previous
                unchanged.append(name)
                if close_all and previous.state in ("connecting", "connected", "failed"):
                    closing.append(previous)
            else:
                (changed if previous is not None else added).append(name)
                self.connections[name] = Connection(server, run_dir, self._from_connection, self._http_auth)
                self.catalogs.forget(name)
        removed: list[str] = []
        for name, conn in old.items():
            if self.connections.get(name) is not conn:
                if name not in config.servers:
                    removed.append(name)
                self.catalogs.forget(name)
                closing.append(conn)
        for conn in closing:
            self.watches.clear(conn.name, "configuration reload")
        deactivated = self._deactivate_stale()
        if not first_load:
            for name in [*added, *changed]:
                self._notify_status(self.connections[name])
        self._notify_pending()
        summary = ReloadSummary(True, added, removed, changed, unchanged, deactivated, [])
        return summary, closing

    def _run_dir(self, server: ServerConfig) -> Path:
        """Where a stdio server and secret commands run: the workspace only when it is trusted.

        An untrusted workspace's files are never on a server's path: a global `python -m pkg`
        would import its `./pkg.py`, `npx` its `node_modules`, a `git` secret command its
        `.git/config`. The bundled demo never needs the workspace.
        """
        if server.scope != "builtin" and self.trusted and self.workspace is not None:
            return self.workspace
        return paths.neutral_dir()

    def _notify_pending(self) -> None:
        """Tell the editor once per change of the definitions waiting for approval."""
        current = frozenset((p.server, p.definition_hash) for p in self.pending.values())
        if current != self._sent_pending:
            self._sent_pending = current
            if current:
                self.notify(methods.APPROVAL_REQUIRED, {"pending": approvals.pending_json(self)})

    def _deactivate_stale(self) -> list[dict[str, Any]]:
        """Drop active tools whose server was removed, disabled or changed; one notification per reason."""
        sent: list[dict[str, Any]] = []
        for session, active in self.sessions.items():
            dropped: dict[str, list[str]] = {}
            for tool_id, tool in list(active.items()):
                conn = self.connections.get(tool.server)
                if conn is None:
                    reason = "server removed"
                elif conn.config.disabled:
                    reason = "server disabled"
                elif conn.config.fingerprint() != tool.config_fingerprint:
                    reason = "definition changed"
                else:
                    continue
                dropped.setdefault(reason, []).append(tool_id)
                del active[tool_id]
            for reason, ids in dropped.items():
                payload = {"session": session, "removed": ids, "reason": reason}
                sent.append(payload)
                self.notify(methods.ACTIVE_TOOLS_CHANGED, payload)
        return sent

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

    async def _http_auth(self, conn: Connection) -> tuple[Any, str]:
        return await auth.connection_auth(self, conn)

    def _from_connection(self, event: ConnectionEvent) -> None:
        if isinstance(event, StatusChanged):
            self._connection_changed(event.conn)
        elif isinstance(event, CatalogInvalidated):
            self._catalog_invalidated(event.conn, event.kind)
        elif isinstance(event, ResourceUpdated):
            self._resource_updated(event.conn, event.uri)
        else:
            self._watches_lost(event.conn)

    def _connection_changed(self, conn: Connection) -> None:
        if self.connections.get(conn.name) is not conn:
            return
        self.watches.connection_changed(conn)
        if conn.state in ("idle", "failed", "disabled"):
            # Disconnection invalidates resource and prompt metadata; tools keep their copy
            # (and the disk cache) for browsing, and calls re-list on the next connection.
            self.catalogs.drop(conn.name, "resources")
            self.catalogs.drop(conn.name, "prompts")
            self.previews.drop_server(conn.name)
        self._notify_status(conn)

    def _tools_fetched(self, server: str) -> None:
        self.status_may_have_changed(server)

    def status_may_have_changed(self, server: str) -> None:
        """Send the server's status row if it differs from the last one sent (e.g. its Loaded count)."""
        conn = self.connections.get(server)
        if conn is not None:
            self._notify_status(conn)

    def _notify_status(self, conn: Connection) -> None:
        """Send the server's row only when it changed: re-listing a catalog usually changes nothing."""
        row = _row(self, conn)
        if self._sent_rows.get(conn.name) != row:
            self._sent_rows[conn.name] = row
            self.notify(methods.SERVER_STATUS, row)

    def _resource_updated(self, conn: Connection, uri: str) -> None:
        if self.connections.get(conn.name) is conn:
            self.watches.resource_updated(conn, uri)

    def _watches_lost(self, conn: Connection) -> None:
        if self.connections.get(conn.name) is conn:
            self.watches.clear(conn.name, "subscription stream lost")

    def _catalog_invalidated(self, conn: Connection, kind: str) -> None:
        if self.connections.get(conn.name) is not conn:
            return
        group: Group = "tools" if kind == "tools" else "resources" if kind == "resources" else "prompts"
        self.catalogs.drop(conn.name, group, disk=True, conn=conn)
        self.notify(methods.CATALOG_CHANGED, {"server": conn.name, "kind": kind})
        self._notify_status(conn)

    async def tool_catalog(self, conn: Connection, operation: str, *, live: bool = False) -> ToolCatalog:
        """The server's tool catalog; `live` demands one fetched on the current connection and still current."""
        return await self.catalogs.tool_catalog(conn, operation, live=live)

    async def reconnect(self, name: str) -> Connection:
        conn = self.connection(name, "reconnect")
        if conn.config.disabled:
            raise refused_disabled("reconnect", name, conn.config.approval_required)
        await conn.close()
        self.catalogs.forget(name)
        await self.catalogs.tool_catalog(conn, "reconnect", live=True)
        return conn

    async def refresh(self, name: str) -> dict[str, Any]:
        """Fetch tool, resource and prompt metadata again; read no resource, load no tool."""
        op = "refresh"
        conn = self.connection(name, op)
        if conn.config.disabled:
            raise refused_disabled(op, name, conn.config.approval_required)
        self.catalogs.forget(name)
        diagnostics: list[dict[str, Any]] = []
        async with self.catalogs.slot(name):
            tools = await self.catalogs.tool_catalog(conn, op, live=True)  # raises: nothing else can work
            for group in ("resources", "prompts"):
                try:
                    if group == "resources":
                        await self.catalogs.resource_catalog(conn, op)
                    else:
                        await self.catalogs.prompt_catalog(conn, op)
                except SidecarError as exc:
                    diagnostics.append({"kind": group, "diagnostic": exc.diagnostic.to_json()})
        self._notify_status(conn)
        return {"server": name, "status": _row(self, conn), "toolsSource": tools.source, "diagnostics": diagnostics}

    async def shutdown(self) -> None:
        if self._watcher is not None:
            await self._watcher.stop()
        for name in list(self.connections):
            self.watches.clear(name, "shutdown")
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)


def _row(app: Sidecar, conn: Connection) -> dict[str, Any]:
    from mcp_sidecar.services.status import status_row

    return status_row(app, conn)
