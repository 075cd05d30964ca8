"""The modern-era watch stream: one `subscriptions/listen` stream whose filter names every watched URI.

A new filter replaces the stream make before break: the new stream is acknowledged before
the old one closes, so no update falls between them. A lock serialises replacements, so
two watches added at once both end up in the filter.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_sidecar import tasks

if TYPE_CHECKING:
    from mcp import Client

    from mcp_sidecar.connections.live_session import ErrorCodes, LiveSession

log = logging.getLogger(__name__)


class WatchStream:
    def __init__(
        self,
        server: str,
        on_updated: Callable[[str], None],
        on_lost: Callable[[], None],
        closing: Callable[[], bool],
    ) -> None:
        self._server = server
        self._on_updated = on_updated
        self._on_lost = on_lost
        """Told when the stream ends on its own: watches are never re-established automatically."""
        self._closing = closing
        """True while the connection closes on purpose: its streams end without a loss to report."""
        self._task: asyncio.Task[None] | None = None
        self._uris: frozenset[str] = frozenset()
        """The URIs the server honoured on the current stream."""
        self._lock = asyncio.Lock()

    @property
    def uris(self) -> frozenset[str]:
        return self._uris

    def new_session(self) -> None:
        """A new session holds no watches yet."""
        self._uris = frozenset()

    def detach(self) -> asyncio.Task[None] | None:
        """Forget the stream (its session is ending) and hand its task to the caller to stop."""
        task, self._task, self._uris = self._task, None, frozenset()
        return task

    async def replace(self, session: LiveSession, uris: frozenset[str], operation: str) -> None:
        """Make the stream carry exactly `uris` (none: no stream), make before break."""
        async with self._lock:
            if uris == self._uris and (self._task is not None or not uris):
                return
            old = self._task
            new: asyncio.Task[None] | None = None
            honored: frozenset[str] = frozenset()
            if uris:
                new, honored = await self._open(session, uris, operation)
            if not session.is_current():
                if new is not None:
                    new.cancel()
                return  # the session closed meanwhile; its streams went with it
            self._task, self._uris = new, honored
            if old is not None:
                old.cancel()
                with contextlib.suppress(BaseException):
                    await old

    async def _open(
        self, session: LiveSession, uris: frozenset[str], operation: str
    ) -> tuple[asyncio.Task[None], frozenset[str]]:
        """A new stream for `uris`, once the server acknowledged it, with the URIs it honoured."""
        acked: asyncio.Future[frozenset[str]] = asyncio.get_running_loop().create_future()
        new = tasks.spawn(self._run(session.client, uris, acked), f"mcp-watch:{self._server}")
        try:
            return new, await asyncio.shield(acked)
        except asyncio.CancelledError:
            new.cancel()
            raise
        except Exception as exc:
            new.cancel()
            from mcp_types import METHOD_NOT_FOUND

            codes: ErrorCodes = {
                METHOD_NOT_FOUND: ("subscriptions_unsupported", "The server does not serve subscriptions.")
            }
            raise await session.mapped_failure(exc, operation, codes) from None

    async def _run(self, client: Client, uris: frozenset[str], acked: asyncio.Future[frozenset[str]]) -> None:
        try:
            async with client.listen(resource_subscriptions=sorted(uris)) as subscription:
                acked.set_result(frozenset(subscription.honored.resource_subscriptions or ()))
                async for event in subscription:
                    uri = getattr(event, "uri", None)
                    if type(event).__name__ == "ResourceUpdated" and isinstance(uri, str):
                        self._on_updated(uri)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not acked.done():
                acked.set_exception(exc)
                acked.exception()  # mark retrieved: the waiter may have gone
                return
            log.info("server %s: watch stream lost (%s)", self._server, type(exc).__name__)
        if asyncio.current_task() is self._task and not self._closing():
            # Watches are never re-established automatically: the owner of the watches is told.
            self._task, self._uris = None, frozenset()
            self._on_lost()


__all__ = ["WatchStream"]
