"""WatchStream: the modern-era watch stream, against an in-memory client (no server, no sleeps)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from mcp_sidecar.connections.live_session import LiveSession
from mcp_sidecar.connections.watch_stream import WatchStream
from mcp_sidecar.protocol.errors import SidecarError, fail

TIMEOUT = 5.0


@dataclass
class ResourceUpdated:
    """Named like the SDK's listen-stream event, which WatchStream recognises by name."""

    uri: str


@dataclass
class _Honored:
    resource_subscriptions: list[str]


class _Subscription:
    def __init__(self, honored: list[str]) -> None:
        self.honored = _Honored(honored)
        self.events: asyncio.Queue[ResourceUpdated | Exception | None] = asyncio.Queue()

    def __aiter__(self) -> _Subscription:
        return self

    async def __anext__(self) -> ResourceUpdated:
        item = await self.events.get()
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, Exception):
            raise item
        return item


@dataclass
class FakeClient:
    """`listen(resource_subscriptions=...)` as the SDK's Client offers it; records what happened."""

    honor: Callable[[list[str]], list[str]] = lambda uris: uris
    refuse: Exception | None = None
    log: list[str] = field(default_factory=list)
    streams: list[_Subscription] = field(default_factory=list)

    @asynccontextmanager
    async def listen(self, resource_subscriptions: list[str]) -> AsyncIterator[_Subscription]:
        if self.refuse is not None:
            raise self.refuse
        subscription = _Subscription(self.honor(resource_subscriptions))
        self.streams.append(subscription)
        label = ",".join(resource_subscriptions)
        self.log.append(f"open {label}")
        try:
            yield subscription
        finally:
            self.log.append(f"close {label}")


@dataclass
class Watcher:
    """A WatchStream with what it reported, and a LiveSession over a fake client."""

    client: FakeClient = field(default_factory=FakeClient)
    updated: list[str] = field(default_factory=list)
    lost: int = 0
    closing: bool = False
    current: bool = True
    failures: list[BaseException] = field(default_factory=list)
    stream: WatchStream = field(init=False)
    session: LiveSession = field(init=False)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.stream = WatchStream("srv", self._updated, self._lost, lambda: self.closing)
        self.session = LiveSession(
            server="srv",
            client=cast(Any, self.client),
            owner=None,
            generation=1,
            protocol_version=None,
            capabilities=frozenset({"resources", "subscribe"}),
            watches=self.stream,
            on_failure=self._failed,
            owner_now=self._owner_now,
        )

    def _updated(self, uri: str) -> None:
        self.updated.append(uri)
        self.changed.set()

    def _lost(self) -> None:
        self.lost += 1
        self.changed.set()

    def _owner_now(self) -> asyncio.Task[Any] | None:
        return None if self.current else asyncio.current_task()

    async def _failed(self, exc: BaseException, operation: str, owner: asyncio.Task[None] | None) -> SidecarError:
        self.failures.append(exc)
        return fail("connection_failed", operation, "The connection to the server failed.", "srv")

    async def wait(self, until: Callable[[], bool]) -> None:
        async def poll() -> None:
            while not until():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(poll(), TIMEOUT)


async def _stream_ended() -> None:
    """Wait for every watch stream task to finish (however it ends)."""
    streams = [t for t in asyncio.all_tasks() if t.get_name() == "mcp-watch:srv"]
    if streams:
        _, pending = await asyncio.wait(streams, timeout=TIMEOUT)
        assert not pending


async def test_a_filter_opens_one_stream_whose_updates_are_reported() -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://b", "notes://a"}), "watch")
    assert w.stream.uris == frozenset({"notes://a", "notes://b"})
    assert w.client.log == ["open notes://a,notes://b"]  # sorted, one stream for every URI

    w.client.streams[0].events.put_nowait(ResourceUpdated("notes://a"))
    await w.wait(lambda: bool(w.updated))
    assert w.updated == ["notes://a"]
    assert w.lost == 0


async def test_the_same_filter_again_changes_nothing() -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    assert w.client.log == ["open notes://a"]


async def test_a_new_filter_is_acknowledged_before_the_old_stream_closes() -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    await w.stream.replace(w.session, frozenset({"notes://a", "notes://b"}), "watch")
    assert w.client.log == ["open notes://a", "open notes://a,notes://b", "close notes://a"]
    assert w.stream.uris == frozenset({"notes://a", "notes://b"})


async def test_an_empty_filter_closes_the_stream() -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    await w.stream.replace(w.session, frozenset(), "unwatch")
    assert w.client.log == ["open notes://a", "close notes://a"]
    assert w.stream.uris == frozenset()
    assert w.lost == 0  # closing on purpose is no loss


async def test_uris_are_what_the_server_honoured() -> None:
    w = Watcher(client=FakeClient(honor=lambda uris: [u for u in uris if u != "secret://x"]))
    await w.stream.replace(w.session, frozenset({"notes://a", "secret://x"}), "watch")
    assert w.stream.uris == frozenset({"notes://a"})


@pytest.mark.parametrize("ending", [None, ConnectionError()], ids=["ended", "failed"])
async def test_a_stream_that_ends_on_its_own_loses_every_watch(ending: Exception | None) -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    w.client.streams[0].events.put_nowait(ending)
    await w.wait(lambda: w.lost > 0)
    assert w.lost == 1
    assert w.stream.uris == frozenset()


async def test_a_stream_ending_while_the_connection_closes_is_not_a_loss() -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    w.closing = True
    w.client.streams[0].events.put_nowait(None)
    await _stream_ended()
    assert w.client.log == ["open notes://a", "close notes://a"]
    assert w.lost == 0
    assert w.stream.uris == frozenset({"notes://a"})


async def test_a_refused_stream_is_a_failure_and_keeps_the_old_filter() -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    refusal = ConnectionError()
    w.client.refuse = refusal
    with pytest.raises(SidecarError):
        await w.stream.replace(w.session, frozenset({"notes://a", "notes://b"}), "watch")
    assert w.failures == [refusal]  # classified by the connection's failure handler
    assert w.stream.uris == frozenset({"notes://a"})
    assert w.client.log == ["open notes://a"]


async def test_a_session_closed_meanwhile_gets_no_stream() -> None:
    w = Watcher()
    w.current = False
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    await _stream_ended()
    assert w.client.log == ["open notes://a", "close notes://a"]
    assert w.stream.uris == frozenset()


async def test_detach_hands_over_the_task_and_forgets_the_uris() -> None:
    w = Watcher()
    await w.stream.replace(w.session, frozenset({"notes://a"}), "watch")
    task = w.stream.detach()
    assert task is not None
    assert w.stream.uris == frozenset()
    assert w.stream.detach() is None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert w.client.log == ["open notes://a", "close notes://a"]
    assert w.lost == 0
