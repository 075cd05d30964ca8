"""The hosts connected to the gateway: one sidecar session each, its native names, how to tell it.

A handshake-era connection (stdio, or one `Mcp-Session-Id` over HTTP) is one host: its tools
accumulate until it disconnects. The 2026-07-28 era has no connection state, so every modern
request of one gateway process shares one host, told through `subscriptions/listen`.

A host is told `notifications/tools/list_changed` whenever the tools it would list change: an
activation, a deactivation (disable, reload, removal, the session's end), a schema change of an
active tool, or a new server directory in `mcp_tools`' description.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar import tasks
from mcp_sidecar.events import CatalogInvalidated, ProfileChanged, Reconciled, ToolsDeactivated
from mcp_sidecar.gateway import native
from mcp_sidecar.gateway.durable import digest

if TYPE_CHECKING:
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.gateway.durable import DurableSession
    from mcp_sidecar.services.app import Sidecar

log = logging.getLogger(__name__)

Tell = Callable[[], Awaitable[None]]
Relisting = Literal["before", "after", "never"]
"""When a host lists its tools again after `list_changed`: before an activation's answer, while it
waits (Claude Code, Gemini CLI: the answer waits for that list); only after the answer has arrived
(Codex with `mcp_tool_list_changed`: the answer need not wait); never (Codex by default: its model
is told to use `mcp_call`)."""
LATE_S = 1.0
"""How soon after an activation's answer a host's new `tools/list` counts as its way of listing."""


@dataclass(eq=False)
class Host:
    session: str
    """The sidecar session its activations go to."""
    tell: Tell
    """Sends the host `tools/list_changed` (its era's way)."""
    tell_prompts: Tell | None = None
    """Sends the host `prompts/list_changed`."""
    version: str = "2025-11-25"
    """The protocol version it speaks: what its lists and results must fit."""
    names: dict[str, str] = field(default_factory=dict)
    """Tool id → native name, kept for the host's life so a name never moves to another tool."""
    ids: dict[str, str] = field(default_factory=dict)
    """Native name → tool id: the reverse of `names` (each name has one id)."""
    durable: DurableSession | None = None
    """Where its activated ids are kept across restarts (`--session NAME`)."""
    dropped: dict[str, str] = field(default_factory=dict)
    """Tool id → why it left the host's list, until it is activated again (for the call that follows)."""
    restoring: asyncio.Task[None] | None = None
    """Activating a durable session's saved ids again, after a restart."""
    listings: int = 0
    """How many of its `tools/list` requests were answered."""
    lists: Relisting = "before"
    """When it lists its tools again after `list_changed`, as seen so far (`Relisting`)."""
    apps: dict[str, str] = field(default_factory=dict)
    """Server → the (server's own) `ui://` URI of its app this host last read: the apps it may render,
    whose calls back to their server it sends with the server's own tool names (`gateway/apps.py`)."""
    exposed: dict[str, tuple[str, dict[str, Any], str]] = field(default_factory=dict)
    """Tool id → (server, descriptor, canonical text) of the tools its last `tools/list` had because every
    tool is listed (`--expose`, `exposure.py`): a call of one is activated first, as that definition."""
    closed: bool = False
    _listed: asyncio.Event = field(default_factory=asyncio.Event)

    def listed(self) -> None:
        """One of its `tools/list` requests was answered."""
        self.listings += 1
        self._listed.set()

    def watch_lists(self, since: int) -> None:
        """Learn from what follows an activation's answer: a host that lists its tools within LATE_S of it
        lists them "after" answers (its model's next request has them); one that does not, "never"."""

        async def watch() -> None:
            if await self.listed_since(since, LATE_S):
                self.lists = "after"
            elif not self.closed:
                self.lists = "never"

        tasks.spawn(watch(), "gateway-relist-watch")

    def gone(self) -> None:
        """It disconnected: nothing waits for it any more."""
        self.closed = True
        self._listed.set()

    async def listed_since(self, since: int, within_s: float) -> bool:
        """Whether it listed its tools after its `since`-th listing, waiting up to `within_s`; False at once
        when it disconnected (a waiting activation is never left behind)."""
        deadline = asyncio.get_running_loop().time() + within_s
        while self.listings <= since and not self.closed:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            self._listed.clear()
            try:
                await asyncio.wait_for(self._listed.wait(), left)
            except TimeoutError:
                return False
        return self.listings > since

    def native_name(self, server: str, tool: str) -> str:
        """The tool's name in this host: given once (on its activation), kept for the host's life."""
        tool_id = f"{server}.{tool}"
        name = self.names.get(tool_id)
        if name is None:
            name = native.native_name(server, tool, self.ids.keys())
            self.names[tool_id] = name
            self.ids[name] = tool_id
        return name

    def would_name(self, server: str, tool: str) -> str:
        """The name `server.tool` has, or would get if activated now (nothing is kept)."""
        return self.names.get(f"{server}.{tool}") or native.native_name(server, tool, self.ids.keys())

    def tool_id(self, name: str) -> str | None:
        """The id a native name was given to in this host, if any."""
        return self.ids.get(name)

    def as_id(self, name: Any, servers: Collection[str]) -> Any:
        """A native name the model took for an id (`basic__echo`) as the id it names (`basic.echo`)."""
        if not isinstance(name, str) or "." in name or name.startswith("mcp__"):
            return name
        known = self.tool_id(name)
        if known is not None:
            return known
        longest_first = sorted(servers, key=len, reverse=True)
        server = next((s for s in longest_first if name.startswith(f"{s}__") and len(name) > len(s) + 2), None)
        return f"{server}.{name[len(server) + 2 :]}" if server is not None else name


class Hosts:
    """Every host of one gateway process, and the events that change what they list."""

    def __init__(self, app: Sidecar, lists_active: bool = True) -> None:
        """`lists_active`: hosts list their active tools (native mode), so a change is news to them."""
        self._app = app
        self.lists_active = lists_active
        self._by_session: dict[str, Host] = {}
        self._counter = 0
        app.hub.subscribe(ToolsDeactivated, self._deactivated)
        app.hub.subscribe(CatalogInvalidated, self._invalidated)
        app.hub.subscribe(Reconciled, self._reconciled)
        app.hub.subscribe(ProfileChanged, self._profile_changed)

    def open(self, tell: Tell, durable: DurableSession | None = None, tell_prompts: Tell | None = None) -> Host:
        """A new host; its session is the durable one's name, or a fresh `gateway-N`."""
        if durable is not None:
            session = durable.name
        else:
            self._counter += 1
            session = f"gateway-{self._counter}"
        host = Host(session, tell, tell_prompts, durable=durable)
        self._by_session[session] = host
        return host

    def close(self, host: Host) -> None:
        """The host disconnected: its session ends, its tools are no longer active anywhere, its background
        calls are released."""
        host.gone()
        if self._by_session.get(host.session) is host:
            del self._by_session[host.session]
            self._app.sessions.end(host.session)
            self._app.background.end_session(host.session)  # its calls in the background, cancelled if running

    def __iter__(self) -> Iterator[Host]:
        return iter(list(self._by_session.values()))

    def changed(self, host: Host, tell: bool = True) -> None:
        """The host's active tools changed: a durable session keeps its new set of ids, and a host that
        lists them (native mode) is told its list changed, in the background (never from inside an
        event handler's caller). In proxy mode its list stays `mcp_tools` and `mcp_call`: nothing to tell;
        nor when `tell` is False (a tool it listed already, activated as it is called)."""
        for tool_id in self._app.sessions.active(host.session):
            host.dropped.pop(tool_id, None)
        if host.durable is not None and self._by_session.get(host.session) is host:
            active = self._app.sessions.active(host.session)
            host.durable.save({tool_id: digest(tool.canonical) for tool_id, tool in active.items()})
        if self.lists_active and tell:
            self.tell(host)

    def tell(self, host: Host) -> None:
        """Tell `host` its list changed."""
        tasks.spawn(_tell(host.tell), "gateway-list-changed")

    def _deactivated(self, event: ToolsDeactivated) -> None:
        host = self._by_session.get(event.session)
        if host is not None and event.reason != "session ended":
            host.dropped.update(dict.fromkeys(event.removed, event.reason))
            self.changed(host)

    def _reconciled(self, event: Reconciled) -> None:
        # The server directory in `mcp_tools`' description, and the prompts, may have changed.
        if event.added or event.removed or event.changed:
            for host in list(self._by_session.values()):
                self.tell(host)  # in any mode: `mcp_tools`' description carries the directory
                self.prompts_changed(host)

    def _profile_changed(self, event: ProfileChanged) -> None:
        # Its servers changed: `mcp_tools`' directory and the prompts a host lists may have too.
        for host in list(self._by_session.values()):
            self.tell(host)
            self.prompts_changed(host)

    def prompts_changed(self, host: Host) -> None:
        if host.tell_prompts is not None:
            tasks.spawn(_tell(host.tell_prompts), "gateway-prompts-changed")

    def _invalidated(self, event: CatalogInvalidated) -> None:
        if event.kind == "prompts":
            for host in list(self._by_session.values()):
                self.prompts_changed(host)
        if event.kind != "tools":
            return
        affected = [
            h
            for h in self._by_session.values()
            if any(t.server == event.conn.name for t in self._app.sessions.active(h.session).values())
        ]
        if affected:
            tasks.spawn(self.recheck(event.conn, affected), "gateway-recheck")

    async def recheck(self, conn: ServerConnection, hosts: list[Host]) -> None:
        """Drop the tools of `conn` whose live definition changed or went, from each host's session."""
        await self._app.activation.deactivate_changed(conn, [host.session for host in hosts], "gateway")


async def _tell(tell: Tell) -> None:
    await deliver(tell, "list_changed")


async def deliver(send: Callable[[], Awaitable[None]], what: str) -> None:
    """Send one notification to a host; a host that went away has nothing to be told (logged)."""
    try:
        await send()
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        log.debug("gateway: %s not delivered: %s", what, type(exc).__name__)
