"""The one module that touches pygls' private API.

rpc_io's message loop answers malformed input itself, runs the sidecar's own methods
without pygls' structuring, and still lets pygls' `$/cancelRequest` and `shutdown` see
those requests; pygls has no public API for that. The tests' own uses (a pygls client's subprocess,
whether a request is in flight) are here too, so one module says what a pygls upgrade must
keep. Everything else imports these functions,
pyproject.toml pins pygls to one minor version, and tests/unit/test_pygls_shim.py fails
when a pygls release changes what is used here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any, cast

from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCProtocol

MsgId = int | str


def send_data(protocol: JsonRPCProtocol, data: dict[str, Any]) -> None:
    """Write one JSON-RPC message (a response or an error) as it is, unstructured."""
    protocol._send_data(data)


def is_shutting_down(protocol: JsonRPCProtocol) -> bool:
    """True once the client sent `shutdown`."""
    return bool(protocol._shutdown)


def _futures(protocol: JsonRPCProtocol) -> dict[MsgId, Future[Any]]:
    return protocol._request_futures


def track_request(protocol: JsonRPCProtocol, msg_id: MsgId, task: asyncio.Task[Any]) -> None:
    """Register a request run outside pygls so that `$/cancelRequest` and `shutdown` cancel it.

    pygls types the map with concurrent futures; it only calls `cancel()` and `done()` on
    them, which an asyncio task has too.
    """
    _futures(protocol)[msg_id] = cast("Future[Any]", task)


def untrack_request(protocol: JsonRPCProtocol, msg_id: MsgId, task: asyncio.Task[Any]) -> None:
    """Forget a request registered with `track_request`, unless pygls already replaced it."""
    futures = _futures(protocol)
    if futures.get(msg_id) is cast("Future[Any]", task):
        del futures[msg_id]


def is_tracked(protocol: JsonRPCProtocol, msg_id: MsgId) -> bool:
    """Whether a request with this id is in flight (sent by a client, or received by a server)."""
    return msg_id in _futures(protocol)


def pending_requests(protocol: JsonRPCProtocol) -> Iterator[asyncio.Future[Any]]:
    """The requests in flight that have not finished, as awaitables."""
    for future in list(_futures(protocol).values()):
        if not future.done():
            yield cast("asyncio.Future[Any]", future)


def client_process(client: JsonRPCClient) -> asyncio.subprocess.Process | None:
    """The subprocess a pygls client started with `start_io` (tests read its pid)."""
    return client._server
