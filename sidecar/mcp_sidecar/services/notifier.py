"""The editor's notifications, made from events: status rows, catalog changes, deactivations, approvals.

A status row is sent only when it differs from the last one sent for that server: re-listing
a catalog usually changes nothing. Watches send their own notifications (`Watches`), since
only they know which update is the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config.approvals import Pending
from mcp_sidecar.events import (
    CatalogInvalidated,
    ElicitationCompleted,
    EventHub,
    Reconciled,
    RowMayHaveChanged,
    ServerLogged,
    StatusChanged,
    ToolsDeactivated,
)
from mcp_sidecar.protocol import methods

if TYPE_CHECKING:
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        ApprovalRequiredParams,
        CatalogChangedParams,
        ElicitationCompleteParams,
        ModelToolChangedParams,
        ModelToolDefinition,
        ServerLogParams,
        StatusRow,
    )

Notify = Callable[[str, Mapping[str, Any]], None]
"""Sends one notification to the editor: (method, params). The protocol layer supplies it."""


class Notifier:
    def __init__(
        self,
        notify: Notify,
        hub: EventHub,
        registry: ServerRegistry,
        row: Callable[[ServerConnection], StatusRow],
        pending: Callable[[], Iterable[Pending]],
        model_tool: Callable[[], ModelToolDefinition],
    ) -> None:
        self.notify = notify
        self._model_tool = model_tool
        self._sent_model_tool: str | None = None
        self._registry = registry
        self._row = row
        self._pending = pending
        self._sent_rows: dict[str, StatusRow] = {}
        self._sent_pending: frozenset[tuple[str, str]] = frozenset()
        hub.subscribe(StatusChanged, lambda event: self.status(event.conn))
        hub.subscribe(CatalogInvalidated, self._catalog_invalidated)
        hub.subscribe(RowMayHaveChanged, lambda event: self.status_of(event.server))
        hub.subscribe(ToolsDeactivated, lambda event: notify(methods.ACTIVE_TOOLS_CHANGED, event.to_json()))
        hub.subscribe(Reconciled, self._reconciled)
        hub.subscribe(ServerLogged, self._server_logged)
        hub.subscribe(ElicitationCompleted, self._elicitation_completed)

    def status(self, conn: ServerConnection) -> None:
        """Send the server's row if it differs from the last one sent."""
        row = self._row(conn)
        if self._sent_rows.get(conn.name) != row:
            self._sent_rows[conn.name] = row
            self.notify(methods.SERVER_STATUS, row)

    def status_of(self, server: str) -> None:
        conn = self._registry.get(server)
        if conn is not None:
            self.status(conn)

    def approvals(self) -> None:
        """Tell the editor once per change of the definitions waiting for approval."""
        pending = list(self._pending())
        current = frozenset((p.server, p.definition_hash) for p in pending)
        if current != self._sent_pending:
            self._sent_pending = current
            if current:
                required: ApprovalRequiredParams = {"pending": [p.to_json() for p in pending]}
                self.notify(methods.APPROVAL_REQUIRED, required)

    def _server_logged(self, event: ServerLogged) -> None:
        if not event.notify:
            return
        logged: ServerLogParams = {"server": event.conn.name, "level": event.level, "text": event.text}
        if event.logger is not None:
            logged["logger"] = event.logger
        self.notify(methods.SERVER_LOG, logged)

    def _elicitation_completed(self, event: ElicitationCompleted) -> None:
        completed: ElicitationCompleteParams = {"server": event.conn.name, "elicitationId": event.elicitation_id}
        self.notify(methods.ELICITATION_COMPLETE, completed)

    def _catalog_invalidated(self, event: CatalogInvalidated) -> None:
        changed: CatalogChangedParams = {"server": event.conn.name, "kind": event.kind}
        self.notify(methods.CATALOG_CHANGED, changed)
        self.status(event.conn)

    def _reconciled(self, event: Reconciled) -> None:
        if not event.first_load:
            for name in (*event.added, *event.changed):
                self.status_of(name)
        self.approvals()
        self._model_tool_changed(event)

    def _model_tool_changed(self, event: Reconciled) -> None:
        """Send the `mcp_tools` definition when a reload added, removed or changed servers.

        Not on the first load: the editor fetches the definition itself (and computing it then
        would read every tool cache at start-up).
        """
        if event.first_load or not (event.added or event.removed or event.changed):
            return
        self.model_tool_changed()

    def model_tool_changed(self) -> None:
        """Send the `mcp_tools` definition when it differs from the one last sent (a reload, a new profile)."""
        definition = self._model_tool()
        if definition["description"] != self._sent_model_tool:
            self._sent_model_tool = definition["description"]
            changed: ModelToolChangedParams = {"definition": definition}
            self.notify(methods.MODEL_TOOL_CHANGED, changed)
