"""Sessions: which tools are active for each client session, and when they stop being.

A tool is active in a session from its activation until the session ends (`mcp/session/end`),
its server's definition changes, or the server is removed or disabled (a reconcile drops it, with
one `ToolsDeactivated` event per session and reason), or the session budget deactivates it to make
room (`BUDGET`). Each session keeps the order its tools were last used in (activated or called),
apart from the order they are listed in, which a use never changes (a host's list stays as its
model's prompt cache saw it). Nothing here talks to a server.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mcp_sidecar.events import EventHub, Reconciled, RowMayHaveChanged, ToolsDeactivated

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry

BUDGET = "session budget"
"""The reason of tools deactivated to keep a session within its budget (`ToolsDeactivated`)."""


@dataclass(frozen=True, slots=True)
class ActiveTool:
    server: str
    name: str
    descriptor: dict[str, Any]
    canonical: str
    """The descriptor's canonical text at activation: a call refuses a tool whose live one differs."""
    config_fingerprint: str
    tokens: int | None = None
    """Its definition's token estimate at activation (None without the tokenizer)."""


class Sessions:
    def __init__(self, hub: EventHub, registry: ServerRegistry) -> None:
        self._hub = hub
        self._registry = registry
        self._by_id: dict[str, dict[str, ActiveTool]] = {}
        self._directories: dict[str, str] = {}
        """The server directory each session's model was last shown in a result (`includeDirectory`)."""
        self._clock = itertools.count(1)
        self._used: dict[str, dict[str, int]] = {}
        """Each session's active tools' places in the order of use (higher: more recent)."""
        self._evicted: dict[str, set[str]] = {}
        """Each session's tools the budget deactivated, until activated again (a call is told why)."""
        hub.subscribe(Reconciled, self._reconciled)

    def active(self, session: str) -> Mapping[str, ActiveTool]:
        """The session's active tools by id (empty for a session never seen)."""
        return self._by_id.get(session, {})

    def get(self, session: str, tool_id: str) -> ActiveTool | None:
        return self._by_id.get(session, {}).get(tool_id)

    def open(self, session: str) -> None:
        """A session exists from its first activation request, whatever loads: reloads report in this order."""
        self._by_id.setdefault(session, {})

    def activate(self, session: str, tool_id: str, tool: ActiveTool) -> None:
        self._by_id.setdefault(session, {})[tool_id] = tool
        self.touch(session, tool_id)

    def touch(self, session: str, tool_id: str) -> None:
        """The tool was just used (activated, or called): the budget deactivates it last."""
        if tool_id in self._by_id.get(session, {}):
            self._used.setdefault(session, {})[tool_id] = next(self._clock)
            self._evicted.get(session, set()).discard(tool_id)

    def last_used(self, session: str) -> Mapping[str, int]:
        """The session's active tools' places in the order of use (higher: more recent)."""
        return self._used.get(session, {})

    def evict(self, session: str, ids: list[str]) -> list[str]:
        """Deactivate `ids` to keep the session within its budget (reason `BUDGET`); a later call of one is
        told so (`evicted`)."""
        gone = self.deactivate(session, ids, BUDGET)
        self._evicted.setdefault(session, set()).update(gone)
        return gone

    def evicted(self, session: str, tool_id: str) -> bool:
        """Whether the budget deactivated the tool and it was not activated since."""
        return tool_id in self._evicted.get(session, set())

    def activated(self, servers: set[str]) -> None:
        """Tell the status rows of `servers` that their Loaded count may have changed."""
        for server in sorted(servers):
            self._hub.publish(RowMayHaveChanged(server))

    def set_tokens(self, session: str, tool_id: str, tokens: int) -> None:
        """Record the estimate of an active tool counted after its activation (its place is kept)."""
        active = self._by_id.get(session, {})
        if tool_id in active:
            active[tool_id] = replace(active[tool_id], tokens=tokens)

    def tokens(self, session: str) -> int | None:
        """The session's active tools' estimates together; None when one is not known."""
        counts = [t.tokens for t in self.active(session).values()]
        return None if any(n is None for n in counts) else sum(n for n in counts if n is not None)

    def loaded_count(self, server: str) -> int:
        """How many distinct tool ids of `server` are active in any session."""
        return len({tool_id for active in self._by_id.values() for tool_id, t in active.items() if t.server == server})

    def directory_news(self, session: str, directory: str) -> bool:
        """Whether the session's model was not shown this `directory` (a key of it) yet; now it counts as shown."""
        if self._directories.get(session) == directory:
            return False
        self._directories[session] = directory
        return True

    def end(self, session: str) -> list[str]:
        """Forget the session: its active tools are dropped (one `ToolsDeactivated`, "session ended")."""
        self._directories.pop(session, None)
        self._used.pop(session, None)
        self._evicted.pop(session, None)
        active = self._by_id.pop(session, {})
        if active:
            self._hub.publish(ToolsDeactivated(session, tuple(active), "session ended"))
            self.activated({tool.server for tool in active.values()})  # the Loaded column counts live sessions
        return list(active)

    def deactivate(self, session: str, ids: list[str], reason: str) -> list[str]:
        """Drop `ids` from the session (one `ToolsDeactivated` for those it had): a gateway host's
        tool whose live definition changed, so its list never shows a stale schema."""
        active = self._by_id.get(session, {})
        gone = {tool_id: tool for tool_id in ids if (tool := active.pop(tool_id, None)) is not None}
        used = self._used.get(session, {})
        for tool_id in gone:
            used.pop(tool_id, None)
        if gone:
            self._hub.publish(ToolsDeactivated(session, tuple(gone), reason))
            self.activated({tool.server for tool in gone.values()})
        return list(gone)

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)

    def deactivate_stale(self) -> list[ToolsDeactivated]:
        """Drop active tools whose server was removed, disabled or changed; one event per session and reason."""
        sent: list[ToolsDeactivated] = []
        for session, active in self._by_id.items():
            dropped: dict[str, list[str]] = {}
            for tool_id, tool in list(active.items()):
                reason = self._stale_because(tool)
                if reason is not None:
                    dropped.setdefault(reason, []).append(tool_id)
                    del active[tool_id]
            for reason, ids in dropped.items():
                event = ToolsDeactivated(session, tuple(ids), reason)
                sent.append(event)
                self._hub.publish(event)
        return sent

    def _stale_because(self, tool: ActiveTool) -> str | None:
        conn = self._registry.get(tool.server)
        if conn is None:
            return "server removed"
        if conn.config.disabled:
            return "server disabled"
        if conn.config.fingerprint() != tool.config_fingerprint:
            return "definition changed"
        return None

    def _reconciled(self, event: Reconciled) -> None:
        self.deactivate_stale()
