"""Resource watches on the negotiated protocol (mixed into Connection).

Handshake-era sessions use `resources/subscribe`; modern ones a `subscriptions/listen` stream
whose filter names every watched URI, replaced make-before-break when the set changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from mcp_sidecar import tasks
from mcp_sidecar.connections.content_requests import RESOURCE_NOT_FOUND, mapped_failure
from mcp_sidecar.connections.sdk_streams import is_modern
from mcp_sidecar.events import ResourceUpdated, WatchesLost
from mcp_sidecar.protocol.errors import fail

if TYPE_CHECKING:
    from mcp import Client

    from mcp_sidecar.connections.connection import Connection

log = logging.getLogger(__name__)


async def subscribe_resource(conn: Connection, uri: str, operation: str) -> int:
    """Ask for updates of `uri` on the negotiated protocol; returns the connection generation.

    Handshake-era sessions use `resources/subscribe`; modern ones a `subscriptions/listen`
    stream whose filter names every watched URI (replaced when the set changes).
    """
    client = await conn.connect(operation)
    owner = conn._owner
    generation = conn.generation
    if "resources" not in conn.capabilities:
        raise fail("resources_unsupported", operation, "The server does not offer resources.", conn.name)
    if "subscribe" not in conn.capabilities:
        raise fail(
            "subscriptions_unsupported", operation, "The server does not offer resource subscriptions.", conn.name
        )
    if is_modern(conn.protocol_version):
        await _set_watch_filter(conn, client, conn._watch_uris | {uri}, operation, owner)
        if uri not in conn._watch_uris:
            raise fail(
                "subscriptions_unsupported",
                operation,
                "The server did not accept a subscription to that URI.",
                conn.name,
            )
        return generation
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

    codes = {
        RESOURCE_NOT_FOUND: ("resource_not_found", "The server has no resource at that URI."),
        INVALID_PARAMS: ("resource_not_found", "The server could not subscribe to that URI."),
        METHOD_NOT_FOUND: ("subscriptions_unsupported", "The server does not serve resources/subscribe."),
    }
    try:
        await client.subscribe_resource(uri)
    except (asyncio.CancelledError, Exception) as exc:
        raise await mapped_failure(conn, exc, operation, owner, codes) from None
    return generation


async def unsubscribe_resource(conn: Connection, uri: str, operation: str) -> None:
    """Stop updates of `uri` on the current session (best effort: failures are the caller's to ignore)."""
    client = conn._client
    if client is None or conn.state != "connected":
        return  # the session that held the subscription is gone, and with it the subscription
    owner = conn._owner
    if is_modern(conn.protocol_version):
        await _set_watch_filter(conn, client, conn._watch_uris - {uri}, operation, owner)
        return
    try:
        await client.unsubscribe_resource(uri)
    except (asyncio.CancelledError, Exception) as exc:
        raise await mapped_failure(conn, exc, operation, owner, {}) from None


async def _set_watch_filter(
    conn: Connection, client: Client, uris: frozenset[str], operation: str, owner: asyncio.Task[None] | None
) -> None:
    """Replace the watch stream with one for `uris`, make before break: the new stream is
    acknowledged before the old one closes, so no update falls between them."""
    async with conn._watch_lock:
        if uris == conn._watch_uris and (conn._watch_stream is not None or not uris):
            return
        old = conn._watch_stream
        new: asyncio.Task[None] | None = None
        honored: frozenset[str] = frozenset()
        if uris:
            acked: asyncio.Future[frozenset[str]] = asyncio.get_running_loop().create_future()
            new = tasks.spawn(_watch(conn, client, uris, acked), f"mcp-watch:{conn.name}")
            try:
                honored = await asyncio.shield(acked)
            except asyncio.CancelledError:
                new.cancel()
                raise
            except Exception as exc:
                new.cancel()
                from mcp_types import METHOD_NOT_FOUND

                codes = {METHOD_NOT_FOUND: ("subscriptions_unsupported", "The server does not serve subscriptions.")}
                raise await mapped_failure(conn, exc, operation, owner, codes) from None
        if owner is not conn._owner:
            if new is not None:
                new.cancel()
            return  # the session closed meanwhile; its streams went with it
        conn._watch_stream, conn._watch_uris = new, honored
        if old is not None:
            old.cancel()
            with contextlib.suppress(BaseException):
                await old


async def _watch(conn: Connection, client: Client, uris: frozenset[str], acked: asyncio.Future[frozenset[str]]) -> None:
    try:
        async with client.listen(resource_subscriptions=sorted(uris)) as subscription:
            acked.set_result(frozenset(subscription.honored.resource_subscriptions or ()))
            async for event in subscription:
                uri = getattr(event, "uri", None)
                if type(event).__name__ == "ResourceUpdated" and isinstance(uri, str):
                    conn.publish(ResourceUpdated(conn, uri))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if not acked.done():
            acked.set_exception(exc)
            acked.exception()  # mark retrieved: the waiter may have gone
            return
        log.info("server %s: watch stream lost (%s)", conn.name, type(exc).__name__)
    if asyncio.current_task() is conn._watch_stream and not conn._closing:
        # Watches are never re-established automatically: the owner of the watches is told.
        conn._watch_stream, conn._watch_uris = None, frozenset()
        conn.publish(WatchesLost(conn))
