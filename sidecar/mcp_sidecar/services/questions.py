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
import itertools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, Protocol

from mcp_sidecar.connections.client_hooks import ClientOffer, ClientSide
from mcp_sidecar.events import EventHub, NoAnswerer


class Client(Protocol):
    """What the routing needs of a client (`services/client_context.py`'s `ClientContext`)."""

    id: str
    """How the user's connections name it (`connections/sharing.py`)."""
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


Users = Callable[[], list[str]]
"""The ids of the clients attached to one connection, in the order they attached."""


class Clients:
    """The clients attached to the user's state, in the order they came, and where a question goes."""

    def __init__(self) -> None:
        self._attached: list[Client] = []
        self._ids = itertools.count(1)

    def new_id(self) -> str:
        return f"client-{next(self._ids)}"

    def attach(self, client: Client) -> None:
        self._attached.append(client)

    def detach(self, client: Client) -> None:
        if client in self._attached:
            self._attached.remove(client)

    def attached(self) -> list[Client]:
        return list(self._attached)

    def latest(self) -> Client | None:
        return self._attached[-1] if self._attached else None

    def of(self, users: Users | None) -> list[Client]:
        """The attached clients among `users`, in their order (all of them without `users`)."""
        if users is None:
            return list(self._attached)
        by_id = {client.id: client for client in self._attached}
        return [by_id[i] for i in users() if i in by_id]

    def asked(self, users: Users | None = None) -> Client | None:
        """Who answers a question now: the acting client while it is attached (to the connection, given
        its `users`), else the one attached to it last."""
        among = self.of(users)
        client = _ACTING.get()
        if client is not None and client in among:
            return client
        return among[-1] if among else None

    def client_side(self, users: Users | None = None) -> ClientSide:
        """What one connection is given: the routing above among its `users`, and the offer and roots of
        the latest of them (equal for all of them by the connection's key)."""

        async def ask(request: object, timeout_s: float) -> Any:
            client = self.asked(users)
            if client is None:
                raise NoAnswerer(type(request).__name__)
            return await client.hub.ask(request, timeout_s)

        def latest() -> Client | None:
            among = self.of(users)
            return among[-1] if among else None

        def offer() -> ClientOffer:
            client = latest()
            return client.current_offer() if client is not None else ClientOffer()

        def roots() -> list[tuple[str, str]]:
            client = latest()
            return client.current_roots() if client is not None else []

        return ClientSide(offer=offer, roots=roots, ask=ask, whose=acting_client, asking_for=acting)
