"""Which client a server's question goes to: the one whose request is in flight.

Every front's operation runs through `operations/row.py`'s `invoke` (the gateway's tool calls
through its own call path), which marks its client as the *acting* one for the task and the
tasks it starts. A connection reads that mark when one of its requests goes in flight and
hands it back when its server asks something (`ClientSide.whose` / `asking_for`): the SDK
answers a server's question in a task of the connection's own, whose context is not the
request's. The question then goes to the acting client's hub, so an elicitation, a sampling
request or a URL step reaches only that client's answerers; with no acting client (a request
no front started, such as a background connection) it goes to the client attached last.

What a connection is offered and the roots it discloses are the last attached client's too:
today one client per process. When clients share connections (issue 33) the offer and the
roots are part of the connection's key (`connections/registry.py`'s `ConnectionKey`), so every
client of one connection offers the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Protocol

from mcp_sidecar.connections.client_hooks import ClientOffer, ClientSide
from mcp_sidecar.events import EventHub, NoAnswerer


class Client(Protocol):
    """What the routing needs of a client (`services/client_context.py`'s `ClientContext`)."""

    hub: EventHub
    """Where its questions are answered (`hub.answer`)."""

    def current_offer(self) -> ClientOffer: ...

    def current_roots(self) -> list[tuple[str, str]]: ...


_ACTING: ContextVar[Client | None] = ContextVar("mcp_sidecar_acting_client", default=None)


@contextlib.contextmanager
def acting(client: Client | None) -> Iterator[Client | None]:
    """`client` is the one acting in this task (and the tasks it starts) inside the block."""
    token = _ACTING.set(client)
    try:
        yield client
    finally:
        _ACTING.reset(token)


def acting_client() -> Client | None:
    return _ACTING.get()


class Clients:
    """The clients attached to the user's state, in the order they came, and where a question goes."""

    def __init__(self) -> None:
        self._attached: list[Client] = []

    def attach(self, client: Client) -> None:
        self._attached.append(client)

    def detach(self, client: Client) -> None:
        if client in self._attached:
            self._attached.remove(client)

    def attached(self) -> list[Client]:
        return list(self._attached)

    def latest(self) -> Client | None:
        return self._attached[-1] if self._attached else None

    def asked(self) -> Client | None:
        """Who answers a question now: the acting client while it is attached, else the latest."""
        client = _ACTING.get()
        return client if client is not None and client in self._attached else self.latest()

    async def ask(self, request: object, timeout_s: float) -> Any:
        client = self.asked()
        if client is None:
            raise NoAnswerer(type(request).__name__)
        return await client.hub.ask(request, timeout_s)

    def client_side(self) -> ClientSide:
        """What every connection is given: the routing above, and the latest client's offer and roots."""
        return ClientSide(offer=self._offer, roots=self._roots, ask=self.ask, whose=acting_client, asking_for=acting)

    def _offer(self) -> ClientOffer:
        client = self.latest()
        return client.current_offer() if client is not None else ClientOffer()

    def _roots(self) -> list[tuple[str, str]]:
        client = self.latest()
        return client.current_roots() if client is not None else []
