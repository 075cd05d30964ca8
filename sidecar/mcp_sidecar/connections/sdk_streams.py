"""SDK loading and the transport stream wrapper shared by every connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp_sidecar import heavy
from mcp_sidecar.catalog.icons import safe_icons

if TYPE_CHECKING:
    from mcp import Client

    from mcp_sidecar.protocol.results import Icon


def cancelled_by_caller() -> bool:
    """True when the current task itself is being cancelled, not merely handed a CancelledError."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def load_sdk() -> None:
    """The MCP SDK, loaded once by its owner (`heavy.SDK`); `initialize` never waits for it."""
    await heavy.SDK.ready()


def capabilities_of(client: Client) -> frozenset[str]:
    capabilities = client.server_capabilities
    found: set[str] = set()
    if capabilities is None:
        return frozenset()
    resources = getattr(capabilities, "resources", None)
    if resources is not None:
        found.add("resources")
        if getattr(resources, "subscribe", None):
            found.add("subscribe")
    for name in ("completions", "prompts", "tools"):
        if getattr(capabilities, name, None) is not None:
            found.add(name)
    return frozenset(found)


def server_icons_of(client: Client) -> list[Icon]:
    """The icons of the server's `serverInfo` that may reach an editor."""
    info = client.server_info
    icons = getattr(info, "icons", None) if info is not None else None
    if not icons:
        return []
    return safe_icons([icon.model_dump(by_alias=True, mode="json", exclude_none=True) for icon in icons])


def is_modern(version: str | None) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return version in MODERN_PROTOCOL_VERSIONS


@asynccontextmanager
async def watched(
    transport: Any, on_eof: Callable[[], None], on_garbage: Callable[[], None], http: Any = None
) -> AsyncIterator[tuple[Any, Any]]:
    """Wrap the transport's read stream to notice garbage lines and the end of the stream."""
    try:
        async with transport as (read, write):
            yield WatchedReceive(read, on_eof, on_garbage), write
    finally:
        if http is not None:
            await http.aclose()


class WatchedReceive:
    """Delegates to the transport's receive stream and reports garbage and end of stream."""

    def __init__(self, inner: Any, on_eof: Callable[[], None], on_garbage: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof
        self._on_garbage = on_garbage

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_eof()
            raise
        if isinstance(item, Exception):
            self._on_garbage()
        return item

    def __aiter__(self) -> WatchedReceive:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        self._inner.close()

    async def __aenter__(self) -> WatchedReceive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
