"""Resource watches on the negotiated protocol.

Handshake-era sessions use `resources/subscribe`; modern ones a `subscriptions/listen` stream
whose filter names every watched URI (`watch_stream.py`), replaced make-before-break when the
set changes.
"""

from __future__ import annotations

import asyncio

from mcp_sidecar.connections.content_requests import RESOURCE_NOT_FOUND
from mcp_sidecar.connections.live_session import ErrorCodes, LiveSession
from mcp_sidecar.connections.sdk_streams import is_modern
from mcp_sidecar.protocol.errors import fail


async def subscribe_resource(session: LiveSession, uri: str, operation: str) -> int:
    """Ask for updates of `uri` on the negotiated protocol; returns the connection generation.

    Handshake-era sessions use `resources/subscribe`; modern ones a `subscriptions/listen`
    stream whose filter names every watched URI (replaced when the set changes).
    """
    if "resources" not in session.capabilities:
        raise fail("resources_unsupported", operation, "The server does not offer resources.", session.server)
    if "subscribe" not in session.capabilities:
        raise fail(
            "subscriptions_unsupported", operation, "The server does not offer resource subscriptions.", session.server
        )
    if is_modern(session.protocol_version):
        await session.watches.replace(session, session.watches.uris | {uri}, operation)
        if uri not in session.watches.uris:
            raise fail(
                "subscriptions_unsupported",
                operation,
                "The server did not accept a subscription to that URI.",
                session.server,
            )
        return session.generation
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

    codes: ErrorCodes = {
        RESOURCE_NOT_FOUND: ("resource_not_found", "The server has no resource at that URI."),
        INVALID_PARAMS: ("resource_not_found", "The server could not subscribe to that URI."),
        METHOD_NOT_FOUND: ("subscriptions_unsupported", "The server does not serve resources/subscribe."),
    }
    try:
        await session.client.subscribe_resource(uri)
    except (asyncio.CancelledError, Exception) as exc:
        raise await session.mapped_failure(exc, operation, codes) from None
    return session.generation


async def unsubscribe_resource(session: LiveSession | None, uri: str, operation: str) -> None:
    """Stop updates of `uri` on the current session (best effort: failures are the caller's to ignore)."""
    if session is None:
        return  # the session that held the subscription is gone, and with it the subscription
    if is_modern(session.protocol_version):
        await session.watches.replace(session, session.watches.uris - {uri}, operation)
        return
    try:
        await session.client.unsubscribe_resource(uri)
    except (asyncio.CancelledError, Exception) as exc:
        raise await session.mapped_failure(exc, operation, {}) from None
