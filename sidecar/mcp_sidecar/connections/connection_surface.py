"""What the services see of a connection: the requests they make (list its server's catalogs, call
a tool, read, complete, watch) and what its server says (its change notices, published as events
and kept as the staleness the lists read). `Connection` (connection.py) inherits it and owns the
session these requests run on; every request gets the live session through `_live` (connecting
first when needed), never the connection's task or its SDK client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.catalog import kinds
from mcp_sidecar.catalog.kinds import Group, ListName
from mcp_sidecar.connections import content_requests, watch_requests
from mcp_sidecar.connections.sdk_streams import is_modern
from mcp_sidecar.events import (
    CatalogInvalidated,
    ConnectionEvent,
    ElicitationCompleted,
    ResourceUpdated,
    ServerLogged,
    WatchesLost,
)

if TYPE_CHECKING:
    from mcp import Client

    from mcp_sidecar.config.model import ServerConfig
    from mcp_sidecar.connections.client_hooks import ClientHooks
    from mcp_sidecar.connections.listing import Listings
    from mcp_sidecar.connections.live_session import LiveSession
    from mcp_sidecar.connections.protocol import State
    from mcp_sidecar.connections.stderr_log import StderrLog
    from mcp_sidecar.output.redact import Redactor
    from mcp_sidecar.protocol.errors import Diagnostic
    from mcp_sidecar.protocol.results import Icon

log = logging.getLogger(__name__)


class ConnectionSurface:
    """The services' half of a connection; the state it reads is set up by `Connection`.

    With that state declared it is a `ServerConnection` itself, which the events it publishes carry.
    """

    name: str
    config: ServerConfig
    workspace: Path | None
    environ: Mapping[str, str]
    state: State
    generation: int
    last_diagnostic: Diagnostic | None
    protocol_version: str | None
    capabilities: frozenset[str]
    server_icons: list[Icon]
    hooks: ClientHooks
    lists: Listings
    tools_stale: bool
    stale_kinds: set[str]
    listening: bool
    _listed_early: set[str]
    _session: LiveSession | None
    _publish: Callable[[ConnectionEvent], None]

    redaction: Redactor
    log: StderrLog

    def secrets_used(self, values: Iterable[str]) -> None:
        """Values this attempt sends its server beyond its definition's (OAuth tokens, a client
        secret, refreshed tokens mid-connection): replaced in its answers and its log from now on."""
        self.redaction.add(values)
        self.log.add_secrets(values)

    async def _live(self, operation: str) -> LiveSession:
        """The current session, connecting first when there is none (`Connection`)."""
        raise NotImplementedError

    async def close(self, state: State | None = None, diag: Diagnostic | None = None) -> None:
        """Close the connection and wait for its owner task (`Connection`)."""
        raise NotImplementedError

    # -- requests ----------------------------------------------------------------------------

    async def list_tools(self, operation: str) -> list[dict[str, Any]]:
        descriptors = await self._list_all("tools", operation)
        self.tools_stale = False
        return descriptors

    async def list_resources(self, operation: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Resources and resource templates; both empty when the server has no resources capability."""
        resources = await self._list_all("resources", operation)
        templates = await self._list_all("resource templates", operation)
        return resources, templates

    async def list_prompts(self, operation: str) -> list[dict[str, Any]]:
        return await self._list_all("prompts", operation)

    async def _list_all(self, kind: ListName, operation: str) -> list[dict[str, Any]]:
        """Every page of one list (`listing.py`), and what listing it tells about staleness."""
        descriptors = await self.lists.settled(lambda: self._live(operation), kind, operation)
        if descriptors is None:
            return []
        listed = kinds.listed(kind)
        group = listed.group
        if listed is kinds.in_group(group)[0]:
            # Its group's first list (resources, before their templates) says the group is current.
            self.stale_kinds.discard(group)
        if not self.listening and is_modern(self.protocol_version):
            self._listed_early.add(group)
        return descriptors

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        operation: str,
        progress: content_requests.ProgressSink | None = None,
    ) -> content_requests.ToolAnswer:
        session = await self._live(operation)
        timeout_s = self.config.call_timeout_s
        return await content_requests.call_tool(session, name, arguments, timeout_s, operation, progress)

    def offered(self) -> dict[str, Any]:
        """What this server is offered as the client's capabilities: on its current session, else on
        its next connection (the offer can change meanwhile: the gateway's follows its hosts)."""
        if self._session is not None and self.state == "connected":
            return self.hooks.offer.to_json()
        return self.hooks.side.offer().to_json()

    async def roots_changed(self) -> None:
        """Tell a connected handshake-era server that was offered roots that they changed."""
        session = self._session if self.state == "connected" else None
        if session is None or not self.hooks.roots_enabled or is_modern(session.protocol_version):
            return
        await content_requests.roots_changed(session)

    # -- content and watch requests (content_requests.py, watch_requests.py) ---------------

    async def read_resource(self, uri: str, operation: str) -> content_requests.ContentAnswer:
        return await content_requests.read_resource(await self._live(operation), uri, operation)

    async def get_prompt(self, name: str, arguments: dict[str, str], operation: str) -> content_requests.ContentAnswer:
        return await content_requests.get_prompt(await self._live(operation), name, arguments, operation)

    async def complete(
        self,
        reference: tuple[Literal["template", "prompt"], str],
        argument: tuple[str, str],
        context: dict[str, str],
        operation: str,
    ) -> content_requests.ContentAnswer:
        session = await self._live(operation)
        return await content_requests.complete(session, reference, argument, context, operation)

    async def subscribe_resource(self, uri: str, operation: str) -> int:
        return await watch_requests.subscribe_resource(await self._live(operation), uri, operation)

    async def unsubscribe_resource(self, uri: str, operation: str) -> None:
        session = self._session if self.state == "connected" else None
        await watch_requests.unsubscribe_resource(session, uri, operation)

    # -- what the server says: events for the services, and the staleness the lists read ------

    def _resource_updated(self, uri: str) -> None:
        self._publish(ResourceUpdated(self, uri))

    def _watches_lost(self) -> None:
        self._publish(WatchesLost(self))

    async def _listen(self, client: Client) -> None:
        """Modern-era sessions announce list changes only on a `subscriptions/listen` stream."""
        try:
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as subscription:
                self.listening = bool(subscription.honored.tools_list_changed)
                # A change between connecting and this acknowledgement was announced to no one:
                # lists fetched in that window may be stale, so they are fetched again once.
                self.stale_kinds |= self._listed_early
                self.tools_stale = self.tools_stale or "tools" in self._listed_early
                self._listed_early.clear()
                async for event in subscription:
                    kind = kinds.MODERN_CHANGES.get(type(event).__name__)
                    if kind is not None:
                        self._list_changed(kind)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("server %s: change stream unavailable (%s)", self.name, type(exc).__name__)
        finally:
            # Without a stream, changes can go unnoticed: callers re-list before trusting the catalog.
            self.listening = False
            self.tools_stale = True

    def _list_changed(self, kind: Group) -> None:
        self.lists.changed(kind)
        if kind == "tools":
            self.tools_stale = True
        self._publish(CatalogInvalidated(self, kind))

    def _logged(self, level: str, logger: str | None, text: str, notify: bool) -> None:
        self._publish(ServerLogged(self, level, logger, text, notify))

    def _task_progressed(self, params: Any) -> None:
        """A 2025-11-25 task's progress, after the SDK stopped following its `tools/call`'s (`task_calls.py`)."""
        sink = self.hooks.task_progress.get(str(params.progress_token))
        if sink is not None:
            sink(params.progress, params.total, params.message)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            return  # garbage lines are counted by the watched stream
        if type(message).__name__ == "ElicitCompleteNotification":
            elicitation_id = message.params.elicitation_id
            if self.hooks.completed(elicitation_id):
                self._publish(ElicitationCompleted(self, elicitation_id))
            return
        if is_modern(self.protocol_version):
            return  # the SDK also hands listen-stream events here; `_listen` handles them once
        kind = type(message).__name__
        if kind == "ProgressNotification":
            self._task_progressed(message.params)
            return
        if kind == "ResourceUpdatedNotification":
            self._publish(ResourceUpdated(self, str(message.params.uri)))
        elif kind in kinds.LEGACY_CHANGES:
            self._list_changed(kinds.LEGACY_CHANGES[kind])
