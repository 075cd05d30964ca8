"""pygls' private API, as mcp_sidecar.pygls_shim uses it, on a real pygls server.

A pygls release that renames or changes `_send_data`, `_shutdown` or `_request_futures`
fails here, before it fails as a hung request or a silent stdout.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from importlib.metadata import version

from pygls.client import JsonRPCClient
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol

from mcp_sidecar import pygls_shim
from mcp_sidecar.server import create_server


class Captured:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.chunks.append(data)

    def close(self) -> None:
        pass

    def messages(self) -> list[object]:
        return [json.loads(chunk) for chunk in self.chunks]


def protocol_with_writer() -> tuple[JsonRPCProtocol, Captured]:
    protocol = LanguageServer("shim-test", "0").protocol
    captured = Captured()
    protocol.set_writer(captured, include_headers=False)
    return protocol, captured


def test_the_pinned_minor_version_is_installed() -> None:
    # pyproject.toml pins pygls to 2.1.x; moving the pin means re-reading the shim.
    assert version("pygls").startswith("2.1.")


def test_the_private_members_exist_with_the_expected_shapes() -> None:
    params = list(inspect.signature(JsonRPCProtocol._send_data).parameters)
    assert params == ["self", "data"]
    protocol = LanguageServer("shim-test", "0").protocol
    assert protocol._shutdown is False
    assert protocol._request_futures == {}
    assert isinstance(protocol._request_futures, dict)
    assert JsonRPCClient()._server is None


def test_the_sidecars_own_server_has_them_too() -> None:
    server, _app = create_server()
    assert pygls_shim.is_shutting_down(server.protocol) is False
    assert list(pygls_shim.pending_requests(server.protocol)) == []


def test_send_data_writes_the_message_as_it_is() -> None:
    protocol, captured = protocol_with_writer()
    message = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "Invalid request."}}
    pygls_shim.send_data(protocol, message)
    assert captured.messages() == [message]


async def test_shutdown_is_seen_after_the_shutdown_request() -> None:
    protocol, captured = protocol_with_writer()
    request = {"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": None}
    protocol.handle_message(protocol.structure_message(request))
    assert pygls_shim.is_shutting_down(protocol) is True
    assert captured.messages() == [{"jsonrpc": "2.0", "id": 1, "result": None}]


async def test_a_tracked_request_is_pending_then_cancelled_by_cancel_request() -> None:
    protocol, _captured = protocol_with_writer()
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.Event().wait()

    task = asyncio.get_running_loop().create_task(slow())
    pygls_shim.track_request(protocol, "slow-1", task)
    await asyncio.wait_for(started.wait(), 5)
    assert pygls_shim.is_tracked(protocol, "slow-1")
    assert list(pygls_shim.pending_requests(protocol)) == [task]

    cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "slow-1"}}
    protocol.handle_message(protocol.structure_message(cancel))
    await asyncio.wait([task], timeout=5)
    assert task.cancelled()
    assert not pygls_shim.is_tracked(protocol, "slow-1")


async def test_untrack_forgets_only_its_own_task() -> None:
    protocol, _captured = protocol_with_writer()

    async def quick() -> int:
        return 1

    first = asyncio.get_running_loop().create_task(quick())
    second = asyncio.get_running_loop().create_task(quick())
    pygls_shim.track_request(protocol, 1, first)
    pygls_shim.track_request(protocol, 1, second)
    pygls_shim.untrack_request(protocol, 1, first)
    assert pygls_shim.is_tracked(protocol, 1)
    pygls_shim.untrack_request(protocol, 1, second)
    assert not pygls_shim.is_tracked(protocol, 1)
    await asyncio.wait([first, second], timeout=5)


def test_a_client_that_started_nothing_has_no_process() -> None:
    assert pygls_shim.client_process(JsonRPCClient()) is None
