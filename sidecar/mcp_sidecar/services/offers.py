"""What the servers are offered as MCP client capabilities, when a client of the sidecar decides it.

The editor's offer is fixed at `initialize` (`initializationOptions.mcpCapabilities`). The
gateway's follows the MCP hosts connected to it, so it can change while servers are connected:
a server offered less than the new offer is reconnected (a call in flight on it then fails as
on any reconnection), one offered more keeps its session (what it asks is declined when no
host can answer). Memory copies of tool lists are dropped either way: a server may list other
tools under another offer (the disk cache is keyed by the offer already).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcp_sidecar import tasks
from mcp_sidecar.connections.client_hooks import DECLINED, DECLINED_MESSAGE, LEVELS, ClientOffer

if TYPE_CHECKING:
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.services.catalogs import Catalogs

log = logging.getLogger(__name__)


class Declined(Exception):
    """An answer to a server's question meaning no: MCP's `-1`, as an editor's decline is read."""

    code = DECLINED
    message = DECLINED_MESSAGE


def declared(capabilities: object) -> ClientOffer:
    """The offer for a client's MCP `ClientCapabilities` (as JSON): elicitation modes, sampling and apps."""
    return ClientOffer.from_capabilities(capabilities)


def union(offers: Iterable[ClientOffer]) -> ClientOffer:
    """What any of `offers` can answer."""
    listed = list(offers)
    return ClientOffer(
        elicitation_form=any(o.elicitation_form for o in listed),
        elicitation_url=any(o.elicitation_url for o in listed),
        sampling=any(o.sampling for o in listed),
        apps=any(o.apps for o in listed),
    )


def covers(offer: ClientOffer, wanted: ClientOffer) -> bool:
    """`offer` has everything `wanted` has."""
    return (
        (offer.elicitation_form or not wanted.elicitation_form)
        and (offer.elicitation_url or not wanted.elicitation_url)
        and (offer.sampling or not wanted.sampling)
        and (offer.apps or not wanted.apps)
    )


def level_rank(level: str) -> int:
    """MCP log levels in order, `debug` lowest; an unknown level ranks as `debug`."""
    return LEVELS.index(level) if level in LEVELS else 0


class Offers:
    """What the servers are offered now (`current`), and the reconnections a smaller offer needs."""

    def __init__(self, registry: ServerRegistry, catalogs: Catalogs) -> None:
        self._registry = registry
        self._catalogs = catalogs
        self.current = ClientOffer()
        """What the client can render for a server; nothing until the client says."""

    def change(self, offer: ClientOffer) -> None:
        """Offer `offer` from now on; connected servers offered less reconnect (in the background) for it."""
        if offer == self.current:
            return
        self.current = offer
        self._registry.rekey()  # the offer is part of each connection's key
        stale = []
        for conn in self._registry:
            self._catalogs.drop(conn, "tools")
            if conn.state == "connected" and not covers(conn.hooks.offer, offer):
                stale.append(conn)
        if stale:
            tasks.spawn(self._reconnect(stale), "offer-changed")

    async def _reconnect(self, stale: list[ServerConnection]) -> None:
        for conn in stale:
            log.info("server %s reconnects to be offered what the clients now can answer", conn.name)
            await conn.close()
            self._catalogs.forget(conn)
