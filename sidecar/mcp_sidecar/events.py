"""Typed events between the parts of the sidecar, on one small hub.

Connections publish what happened to them (`StatusChanged`, `CatalogInvalidated`,
`ResourceUpdated`, `WatchesLost`); the registry publishes `Reconciled` after a configuration
swap. Catalogs, watches, previews, sessions and the notifier subscribe. Nothing here knows
about pygls or the SDK.

Publishing is synchronous: handlers run in subscription order before `publish` returns, so
the order of the editor's notifications is the order of subscription. A handler that raises
is logged (by type only: a message may carry server text) and the others still run.

A *request* (a server asks and the editor answers: elicitation, sampling) is an event with a
reply: `ask` routes it to the one answerer registered for its type and waits for the answer
within a time limit; cancelling the caller cancels the answerer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from mcp_sidecar.catalog.kinds import Group
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.protocol.results import ActiveToolsChanged

log = logging.getLogger(__name__)

E = TypeVar("E")
R = TypeVar("R")


# -- what connections say ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class StatusChanged:
    """The connection's state or last diagnostic changed."""

    conn: ServerConnection


@dataclass(frozen=True, slots=True, eq=False)
class CatalogInvalidated:
    """The server announced that one of its lists changed."""

    conn: ServerConnection
    kind: Group


@dataclass(frozen=True, slots=True, eq=False)
class ResourceUpdated:
    conn: ServerConnection
    uri: str


@dataclass(frozen=True, slots=True, eq=False)
class WatchesLost:
    """The modern-era subscription stream ended: no watched URI will report again."""

    conn: ServerConnection


@dataclass(frozen=True, slots=True, eq=False)
class ServerLogged:
    """A server's log message at its configured `logLevel` or above, redacted and on one line."""

    conn: ServerConnection
    level: str
    logger: str | None
    text: str
    notify: bool = True
    """For the editor too (`mcp/serverLog`): at `warning` or above, within the server's per-second budget."""


@dataclass(frozen=True, slots=True, eq=False)
class ElicitationCompleted:
    """The server finished a URL elicitation the person consented to (`mcp/elicitationComplete`)."""

    conn: ServerConnection
    elicitation_id: str


ConnectionEvent = (
    StatusChanged | CatalogInvalidated | ResourceUpdated | WatchesLost | ServerLogged | ElicitationCompleted
)


# -- what servers ask the person (events with a reply, see EventHub.ask) -----------------------


@dataclass(frozen=True, slots=True)
class ElicitationAsked:
    """A server asks the person: `params` are exactly `mcp/elicit`'s; the answer is its result."""

    server: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SamplingAsked:
    """A server asks for a model's answer: `params` are exactly `mcp/sample`'s; the answer is its result."""

    server: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AppCallAsked:
    """An app in a loopback page asks to call a tool: `params` are exactly `mcp/app/confirmCall`'s
    (`{server, uri, name, arguments}`); the answer is its result (`{allow: bool}`)."""

    server: str
    params: dict[str, Any]


# -- what the registry and services say -------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Reconciled:
    """A configuration was swapped in; `closing` are the connections the caller closes next."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    unchanged: tuple[str, ...]
    closing: tuple[ServerConnection, ...]
    first_load: bool


@dataclass(frozen=True, slots=True)
class ConnectionKeysChanged:
    """The user's connections changed hands (`connections/sharing.py`): `released` keys no client
    wants any more (their connections close), `moved` (old, new) keys of a connection whose offer or
    roots changed. Published on the user hub only (the catalogs are kept by key)."""

    released: tuple[Hashable, ...]
    moved: tuple[tuple[Hashable, Hashable], ...] = ()


@dataclass(frozen=True, slots=True)
class ToolsDeactivated:
    """Active tools dropped from a session, for one reason (`mcp/activeToolsChanged`)."""

    session: str
    removed: tuple[str, ...]
    reason: str

    def to_json(self) -> ActiveToolsChanged:
        return {"session": self.session, "removed": list(self.removed), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class RowMayHaveChanged:
    """Something a status row shows changed (a catalog was fetched, a tool activated)."""

    server: str
    key: Hashable | None = None
    """The connection's key when the catalogs say so: only the clients using it hear it."""


@dataclass(frozen=True, slots=True)
class ProfileChanged:
    """What the client's profile searches changed: it chose another (or none), or a reload changed the
    definition of the one it chose. Published on the client's hub only."""

    profile: str | None


class NoAnswerer(Exception):
    """`ask` found nobody registered to answer this kind of request."""


class EventHub:
    def __init__(self) -> None:
        self._subscribers: dict[type[Any], list[Callable[[Any], None]]] = {}
        self._answerers: dict[type[Any], Callable[[Any], Awaitable[Any]]] = {}

    def subscribe(self, kind: type[E], handler: Callable[[E], None]) -> Callable[[], None]:
        """Call `handler` for every published `kind`; returns the function that unsubscribes."""
        handlers = self._subscribers.setdefault(kind, [])
        handlers.append(handler)

        def unsubscribe() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def publish(self, event: object) -> None:
        for handler in list(self._subscribers.get(type(event), ())):
            try:
                handler(event)
            except Exception as exc:
                log.error("event %s: handler %s failed: %s", type(event).__name__, _name(handler), type(exc).__name__)

    @contextmanager
    def collect(self, kind: type[E]) -> Iterator[list[E]]:
        """Every `kind` published inside the block, in order (a reload's summary of what it caused)."""
        seen: list[E] = []
        unsubscribe = self.subscribe(kind, seen.append)
        try:
            yield seen
        finally:
            unsubscribe()

    # -- requests with one answer -------------------------------------------------------------

    def answer(self, kind: type[E], answerer: Callable[[E], Awaitable[Any]]) -> Callable[[], None]:
        """Make `answerer` the one that answers `kind`; returns the function that withdraws it."""
        if kind in self._answerers:
            raise ValueError(f"{kind.__name__} already has an answerer")
        self._answerers[kind] = answerer

        def withdraw() -> None:
            if self._answerers.get(kind) is answerer:
                del self._answerers[kind]

        return withdraw

    async def ask(self, request: E, timeout_s: float) -> Any:
        """The answer to `request`; TimeoutError past `timeout_s` (the answerer is cancelled then)."""
        answerer = self._answerers.get(type(request))
        if answerer is None:
            raise NoAnswerer(type(request).__name__)
        return await asyncio.wait_for(answerer(request), timeout_s)


def _name(handler: Callable[..., Any]) -> str:
    return getattr(handler, "__qualname__", type(handler).__name__)


__all__ = [
    "AppCallAsked",
    "CatalogInvalidated",
    "ConnectionEvent",
    "ElicitationAsked",
    "ElicitationCompleted",
    "EventHub",
    "NoAnswerer",
    "Reconciled",
    "ResourceUpdated",
    "RowMayHaveChanged",
    "SamplingAsked",
    "ServerLogged",
    "StatusChanged",
    "ToolsDeactivated",
    "WatchesLost",
]
