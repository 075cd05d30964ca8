"""The start-up front answers exactly what the SDK's server answers, and nothing it cannot.

The front (`gateway/front.py`) answers a host's opening requests before the SDK is imported; the
same requests, sent to the gateway's SDK server through the era router (`gateway/eras.py`), are
answered by the SDK. Both, in one process, for both eras: the answers must be equal.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types
import mcp_types.version as versions
import pytest

from mcp_sidecar.gateway import front, stdio, wire
from mcp_sidecar.gateway.eras import Router
from mcp_sidecar.gateway.face import Gateway
from mcp_sidecar.gateway.prompt_snapshot import PromptSnapshot
from mcp_sidecar.gateway.run import gateway_app
from mcp_sidecar.services.app import Sidecar
from support.rawhost import initialize_params, modern
from support.sidecar import write_config


class Captured:
    """What a host would read on its stdin: every message written, as JSON."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    async def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data))
        self.arrived.set()

    async def write_json(self, message: dict[str, Any]) -> None:
        await self.write(json.dumps(message).encode())

    async def answer(self, request_id: Any) -> dict[str, Any]:
        async with asyncio.timeout(30):
            while True:
                for message in self.messages:
                    if message.get("id") == request_id:
                        return message
                self.arrived.clear()
                await self.arrived.wait()


@pytest.fixture
async def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Sidecar]:
    home = tmp_path / "home"
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    # A server that is never started (the lists under test start none); its description is the directory.
    write_config(home, {"docs": {"command": str(tmp_path / "absent"), "description": "Product documentation"}})
    app = gateway_app(tmp_path, trust_project=False)
    app.ensure_loaded()
    yield app
    await app.shutdown(quick=True)


def _line(request_id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


async def _front_answers(app: Sidecar, mode: Any, lines: list[bytes]) -> tuple[front.Front, Captured]:
    pipes = Captured()
    face = front.Front(app, mode, pipes, prompts=PromptSnapshot(app))  # type: ignore[arg-type]
    for line in lines:
        await face.take(line)
    return face, pipes


async def _sdk_answers(app: Sidecar, mode: Any, lines: list[bytes]) -> Captured:
    pipes = Captured()
    router = Router(Gateway(app, mode).server, pipes, stdio.Unanswered())  # type: ignore[arg-type]
    router.start()
    try:
        for line in lines:
            await router.send(line)
            request = json.loads(line)
            if "id" in request:
                await pipes.answer(request["id"])
    finally:
        await router.finish()
    return pipes


HANDSHAKE_OPENING = [
    _line(1, "initialize", initialize_params("2025-11-25")),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
    _line(2, "ping"),
    _line(3, "tools/list"),
    _line(4, "resources/list"),
    _line(5, "resources/templates/list"),
    _line(6, "prompts/list"),
]
MODERN_OPENING = [
    _line(1, "server/discover", modern()),
    _line(3, "tools/list", modern()),
    _line(4, "resources/list", modern()),
    _line(5, "resources/templates/list", modern()),
    _line(6, "prompts/list", modern()),
]


@pytest.mark.parametrize("mode", ["native", "proxy"])
@pytest.mark.parametrize("opening", [HANDSHAKE_OPENING, MODERN_OPENING], ids=["handshake", "2026-07-28"])
async def test_the_front_answers_the_opening_requests_as_the_sdk_does(
    app: Sidecar, mode: str, opening: list[bytes]
) -> None:
    face, answered = await _front_answers(app, mode, opening)
    sdk = await _sdk_answers(app, mode, opening)
    requests = [json.loads(line) for line in opening if b'"id"' in line]
    assert face.answered == len(requests)  # the front answered every one itself
    for request in requests:
        assert await answered.answer(request["id"]) == await sdk.answer(request["id"]), request["method"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2099-01-01"])
async def test_initialize_negotiates_the_version_as_the_sdk_does(app: Sidecar, version: str) -> None:
    opening = [_line(1, "initialize", initialize_params(version))]
    _, answered = await _front_answers(app, "native", opening)
    sdk = await _sdk_answers(app, "native", opening)
    assert await answered.answer(1) == await sdk.answer(1)


async def test_the_directory_is_in_the_instructions(app: Sidecar) -> None:
    _, answered = await _front_answers(app, "native", [_line(1, "server/discover", modern())])
    instructions = (await answered.answer(1))["result"]["instructions"]
    assert "- docs: Product documentation" in instructions
    assert instructions.startswith("The user's MCP servers, on demand: call mcp_tools with `query`")


@pytest.mark.parametrize(
    "line",
    [
        _line(1, "tools/list"),  # before `initialize`
        _line(1, "tools/list", {"_meta": {wire.VERSION_KEY: "2026-07-28"}}),  # an incomplete envelope
        _line(1, "tools/list", {**modern(), "cursor": "x"}),
        _line(1, "tools/call", {**modern(), "name": "mcp_tools", "arguments": {"query": "x"}}),
        _line(1, "initialize", {"protocolVersion": "2025-11-25"}),  # no capabilities, no clientInfo
        _line(1, "ping", modern()),  # no 2026-07-28 method
        b"not json",
    ],
)
async def test_anything_else_waits_for_the_sdk(app: Sidecar, line: bytes) -> None:
    face, answered = await _front_answers(app, "native", [line])
    assert face.answered == 0
    assert answered.messages == []


async def test_once_one_request_waits_every_later_one_does(app: Sidecar) -> None:
    lines = [
        HANDSHAKE_OPENING[0],
        _line(2, "tools/call", {"name": "mcp_tools", "arguments": {}}),
        _line(3, "tools/list"),
    ]
    _, answered = await _front_answers(app, "native", lines)
    assert [m["id"] for m in answered.messages] == [1]  # tools/list is not answered before the call


def test_the_fronts_wire_is_the_sdks() -> None:
    assert wire.HANDSHAKE_VERSIONS == versions.HANDSHAKE_PROTOCOL_VERSIONS
    assert wire.LATEST_HANDSHAKE == versions.LATEST_HANDSHAKE_VERSION
    assert wire.MODERN_VERSIONS == versions.MODERN_PROTOCOL_VERSIONS
    assert wire.VERSION_KEY == mcp_types.PROTOCOL_VERSION_META_KEY
    assert wire.CLIENT_INFO_KEY == mcp_types.CLIENT_INFO_META_KEY
    assert wire.CAPABILITIES_KEY == mcp_types.CLIENT_CAPABILITIES_META_KEY
    assert wire.SERVER_INFO_KEY == mcp_types.SERVER_INFO_META_KEY


@pytest.mark.parametrize(
    "notifications",
    [
        {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True},
        {"toolsListChanged": True, "promptsListChanged": False},
        {"resourceSubscriptions": ["mcp-sidecar://docs/a"]},
        {},
    ],
)
async def test_a_listen_stream_is_acknowledged_as_the_sdk_does(app: Sidecar, notifications: dict[str, Any]) -> None:
    """Claude Code sends nothing else until its listen stream is acknowledged."""
    line = _line("listen:0", "subscriptions/listen", modern({"notifications": notifications}))
    _, answered = await _front_answers(app, "native", [line])
    pipes = Captured()
    router = Router(Gateway(app, "native").server, pipes, stdio.Unanswered())  # type: ignore[arg-type]
    router.start()
    try:
        await router.send(line)
        async with asyncio.timeout(30):
            while not pipes.messages:
                pipes.arrived.clear()
                await pipes.arrived.wait()
    finally:
        await router.finish()
    assert answered.messages == pipes.messages[:1]  # the SDK's stream ends when the router does
    assert answered.messages[0]["method"] == "notifications/subscriptions/acknowledged"


async def test_an_odd_listen_filter_waits_for_the_sdk(app: Sidecar) -> None:
    line = _line("listen:0", "subscriptions/listen", modern({"notifications": {"toolsListChanged": "yes"}}))
    _, answered = await _front_answers(app, "native", [line])
    assert answered.messages == []
