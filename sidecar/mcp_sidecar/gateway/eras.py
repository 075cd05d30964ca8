"""One stdio connection served in both protocol eras at once, through the SDK's serving loops.

The SDK's `serve_dual_era_loop` lets a connection's first request decide its era for good: a
2026-07-28 request first, and a later `initialize` is refused with -32022. Real hosts do not keep
to one: Claude Code sends `server/discover`, and when the answer is slow it gives up and sends
`initialize` 2025-11-25 on the same pipe. Here each message goes to the loop of its own era, each
loop opened by the first message of its era: `initialize`, a request without the 2026-07-28
envelope, a response (only handshake-era sessions ask the host anything) and the handshake-era
notifications go to the handshake loop; enveloped requests to the 2026-07-28 loop; a
cancellation to the loop that has the request it cancels. Both write to the host's stdout.

`initialize` answered by the start-up front (`front.py`) before the SDK was loaded is replayed
here under a private id, so the SDK's session holds the host's capabilities and version; its
second answer to it is not written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Literal

import anyio
from mcp.server.runner import serve_dual_era_loop
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter

from mcp_sidecar import tasks
from mcp_sidecar.gateway import wire

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.server.lowlevel.server import Server

    from mcp_sidecar.gateway.stdio import HostPipes, Unanswered

log = logging.getLogger(__name__)

Era = Literal["handshake", "modern"]
REPLAYED_ID = "mcp-sidecar-front-initialize"
"""The id of an `initialize` the front answered, replayed to the SDK: its answer is not written."""
OPEN_ID = "mcp-sidecar-front-open"
OPEN_METHOD = "mcp-sidecar/open"
"""Sent after a replayed `initialize`: the gateway opens its host for the connection at once (its
roots asked for, what it can answer offered, news of its prompts sent), as a first request from
the host itself would have. Its answer is not written either."""
PRIVATE_IDS = frozenset({REPLAYED_ID, OPEN_ID})
MAX_OWNERS = 4096
"""Requests whose era is remembered, so a cancellation reaches the loop that has its request."""


def parse(line: bytes | Exception) -> SessionMessage | Exception:
    """A message, or the error as a value (the session answers or logs it), as the SDK's reader does."""
    if isinstance(line, Exception):
        return line
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


class Router:
    """The SDK side of a stdio connection: `send` a line, and it is served in its era."""

    def __init__(self, server: Server[Any], pipes: HostPipes, unanswered: Unanswered) -> None:
        self._server = server
        self._pipes = pipes
        self._unanswered = unanswered
        self._inbound, self._inbound_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self._outbound, self._outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
        self._eras: dict[Era, MemoryObjectSendStream[SessionMessage | Exception]] = {}
        self._owners: OrderedDict[Any, Era] = OrderedDict()
        self._running: asyncio.Task[None] | None = None
        self._acknowledged: set[Any] = set()
        """Listen streams whose acknowledgement the front sent: the SDK's second one is not written."""

    async def send(self, line: bytes | Exception | SessionMessage) -> None:
        await self._inbound.send(line if isinstance(line, SessionMessage) else parse(line))

    async def replay_initialize(self, message: dict[str, Any], initialized: bool) -> None:
        """The `initialize` the front answered (and its `notifications/initialized`), for the SDK's session."""
        replayed = {**message, "id": REPLAYED_ID}
        await self.send(SessionMessage(jsonrpc_message_adapter.validate_python(replayed, by_name=False)))
        if initialized:
            notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await self.send(SessionMessage(jsonrpc_message_adapter.validate_python(notice, by_name=False)))
            opening = {"jsonrpc": "2.0", "id": OPEN_ID, "method": OPEN_METHOD}
            await self.send(SessionMessage(jsonrpc_message_adapter.validate_python(opening, by_name=False)))

    def acknowledged(self, subscription: Any) -> None:
        """The front acknowledged the listen request `subscription`: the SDK's acknowledgement is a repeat."""
        self._acknowledged.add(subscription)

    def start(self) -> None:
        self._running = tasks.spawn(self.run(), "gateway-eras")

    async def finish(self) -> None:
        """No more input: each loop ends once it has nothing left to answer, then the writer."""
        await self._inbound.aclose()
        if self._running is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._running

    async def run(self) -> None:
        """Serve until the input is closed and every loop is done; the writer ends with them."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._write)
            async with (
                self._server.lifespan(self._server) as state,
                self._outbound,
                anyio.create_task_group() as loops,
                self._inbound_receive,
            ):
                async for item in self._inbound_receive:
                    await self._route(item, loops, state)
                for stream in self._eras.values():
                    await stream.aclose()

    async def _route(self, item: SessionMessage | Exception, loops: Any, state: Any) -> None:
        era = self._era_of(item)
        stream = self._eras.get(era)
        if stream is None:
            stream, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            self._eras[era] = stream
            loops.start_soon(self._serve, receive, state)
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.send(item)

    async def _serve(self, receive: MemoryObjectReceiveStream[SessionMessage | Exception], state: Any) -> None:
        await serve_dual_era_loop(self._server, receive, self._outbound.clone(), lifespan_state=state)

    def _era_of(self, item: SessionMessage | Exception) -> Era:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, JSONRPCRequest):
            era: Era = "modern" if message.method != "initialize" and _enveloped(message.params) else "handshake"
            self._owners[message.id] = era
            if len(self._owners) > MAX_OWNERS:
                self._owners.popitem(last=False)
            return era
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            return "handshake"  # only handshake-era sessions ask the host anything
        if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            owner = self._owners.get((message.params or {}).get("requestId"))
            if owner is not None:
                return owner
        if "handshake" in self._eras or "modern" not in self._eras:
            return "handshake"
        return "modern"

    async def _write(self) -> None:
        async with self._outbound_receive:
            async for message in self._outbound_receive:
                answered = message.message
                if self._repeats_an_acknowledgement(answered):
                    continue
                if isinstance(answered, JSONRPCResponse | JSONRPCError):
                    if answered.id in PRIVATE_IDS:
                        continue
                    self._unanswered.written(answered.id)
                await self._pipes.write(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode())

    def _repeats_an_acknowledgement(self, message: Any) -> bool:
        if not isinstance(message, JSONRPCNotification) or message.method != "notifications/subscriptions/acknowledged":
            return False
        meta = (message.params or {}).get("_meta")
        subscription = meta.get(wire.SUBSCRIPTION_KEY) if isinstance(meta, dict) else None
        if subscription in self._acknowledged:
            self._acknowledged.discard(subscription)
            return True
        return False


def _enveloped(params: Any) -> bool:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and wire.VERSION_KEY in meta
