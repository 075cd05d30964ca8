"""A Connection publishes what happens to it as typed events, against a real stdio fixture server."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_sidecar.config.model import ProtocolMode, ServerConfig
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.events import CatalogInvalidated, ConnectionEvent, ResourceUpdated, StatusChanged
from mcp_sidecar.protocol.errors import SidecarError
from support.servers import basic_stdio

TIMEOUT = 30.0
ERAS: list[ProtocolMode] = ["legacy", "auto"]
"""Handshake era (notifications) and modern era (`subscriptions/listen` streams)."""


class Recorder:
    """Every published event, with the connection's state at the moment it was published."""

    def __init__(self) -> None:
        self.events: list[tuple[ConnectionEvent, str]] = []
        self._arrived = asyncio.Event()

    def publish(self, event: ConnectionEvent) -> None:
        self.events.append((event, event.conn.state))
        self._arrived.set()

    def states(self) -> list[str]:
        return [state for event, state in self.events if isinstance(event, StatusChanged)]

    async def wait_for(self, found: Callable[[ConnectionEvent], bool]) -> ConnectionEvent:
        async def poll() -> ConnectionEvent:
            while True:
                for event, _ in self.events:
                    if found(event):
                        return event
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(poll(), TIMEOUT)


def _basic(protocol: ProtocolMode = "auto", *options: str) -> ServerConfig:
    entry = basic_stdio(*options)
    command, args = entry["command"], entry["args"]
    assert isinstance(command, str)
    assert isinstance(args, list)
    return ServerConfig(
        name="basic", scope="global", transport="stdio", command=command, args=tuple(args), protocol=protocol
    )


async def test_connecting_and_closing_publish_each_state_change(tmp_path: Path) -> None:
    recorder = Recorder()
    conn = Connection(_basic(), tmp_path, recorder.publish, environ=os.environ)
    try:
        tools = await asyncio.wait_for(conn.list_tools("test"), TIMEOUT)
        assert "echo" in {tool["name"] for tool in tools}
        assert recorder.states() == ["connecting", "connected"]
    finally:
        await conn.close()
    assert recorder.states() == ["connecting", "connected", "idle"]
    assert all(event.conn is conn for event, _ in recorder.events)


async def test_a_server_that_cannot_start_publishes_failed(tmp_path: Path) -> None:
    recorder = Recorder()
    config = ServerConfig(name="missing", scope="global", transport="stdio", command=str(tmp_path / "no-such-server"))
    conn = Connection(config, tmp_path, recorder.publish, environ=os.environ)
    with pytest.raises(SidecarError) as raised:
        await asyncio.wait_for(conn.list_tools("test"), TIMEOUT)
    assert raised.value.diagnostic.code == "connection_failed"
    assert recorder.states() == ["connecting", "failed"]
    assert conn.last_diagnostic is not None
    assert conn.last_diagnostic.code == "connection_failed"
    await conn.close()


async def test_an_unchanged_state_publishes_nothing(tmp_path: Path) -> None:
    recorder = Recorder()
    conn = Connection(_basic(), tmp_path, recorder.publish, environ=os.environ)
    await conn.close()  # idle to idle, no diagnostic either way
    assert recorder.events == []


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_tools_list_change_publishes_catalog_invalidated(tmp_path: Path, protocol: ProtocolMode) -> None:
    recorder = Recorder()
    conn = Connection(_basic(protocol), tmp_path, recorder.publish, environ=os.environ)
    try:
        await asyncio.wait_for(conn.list_tools("test"), TIMEOUT)
        if protocol == "auto":
            await _listening(conn)
            # Listed before the change stream was acknowledged: stale once, so listed again.
            await asyncio.wait_for(conn.list_tools("test"), TIMEOUT)
        assert not conn.tools_stale
        await asyncio.wait_for(conn.call_tool("redefine", {"mode": "change"}, "test"), TIMEOUT)
        event = await recorder.wait_for(lambda e: isinstance(e, CatalogInvalidated))
        assert isinstance(event, CatalogInvalidated)
        assert (event.conn, event.kind) == (conn, "tools")
        assert conn.tools_stale  # the next listing goes to the server
    finally:
        await conn.close()


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
@pytest.mark.parametrize("protocol", ERAS)
async def test_a_watched_resource_publishes_resource_updated(tmp_path: Path, protocol: ProtocolMode) -> None:
    recorder = Recorder()
    conn = Connection(_basic(protocol, "--resources", "--watchable"), tmp_path, recorder.publish, environ=os.environ)
    try:
        generation = await asyncio.wait_for(conn.subscribe_resource("notes://readme", "test"), TIMEOUT)
        assert generation == conn.generation == 1
        await asyncio.wait_for(conn.call_tool("touch", {"uri": "notes://readme"}, "test"), TIMEOUT)
        event = await recorder.wait_for(lambda e: isinstance(e, ResourceUpdated))
        assert isinstance(event, ResourceUpdated)
        assert (event.conn, event.uri) == (conn, "notes://readme")
        await asyncio.wait_for(conn.unsubscribe_resource("notes://readme", "test"), TIMEOUT)
    finally:
        await conn.close()
    assert not any(type(event).__name__ == "WatchesLost" for event, _ in recorder.events)


async def _listening(conn: Connection) -> None:
    """Modern sessions announce list changes only once their change stream is acknowledged."""

    async def poll() -> None:
        while not conn.listening:  # noqa: ASYNC110 (the flag is all a Connection exposes)
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), TIMEOUT)
