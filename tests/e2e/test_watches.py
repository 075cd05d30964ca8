"""Resource watches end to end: both protocol eras, coalescing, limits and clearing.

One interactive sidecar serves the module. `legacy` (basic.py over stdio, handshake era)
uses resources/subscribe; `modern` (basic.py over HTTP, auto → 2026-07-28) uses filtered
subscriptions/listen streams; both get updates from the fixture's `touch` tool.
`everything` is server-everything, whose `toggle-subscriber-updates` sends periodic updates.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from support.servers import SERVER_EVERYTHING_JS, basic_stdio, http_server
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

UPDATED = "mcp/resourceUpdated"
CLEARED = "mcp/watchesCleared"


@dataclass(frozen=True, slots=True)
class Env:
    sidecar: SidecarClient

    async def subscribe(self, server: str, uri: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.sidecar.request("mcp/resource/subscribe", {"server": server, "uri": uri})
        return result

    async def unsubscribe(self, server: str, uri: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.sidecar.request("mcp/resource/unsubscribe", {"server": server, "uri": uri})
        return result

    async def watches(self, server: str) -> dict[str, dict[str, Any]]:
        listed = await self.sidecar.request("mcp/resource/subscriptions")
        return {w["uri"]: w for w in listed["watches"] if w["server"] == server}

    def updates(self, server: str, uri: str) -> int:
        return sum(1 for n in self.sidecar.notifications[UPDATED] if (n["server"], n["uri"]) == (server, uri))

    async def call(self, tool_id: str, arguments: dict[str, Any]) -> None:
        await self.sidecar.request("mcp/activate", {"ids": [tool_id], "session": "watch"})
        result = await self.sidecar.request("mcp/callTool", {"id": tool_id, "arguments": arguments, "session": "watch"})
        assert result["isError"] is False, result

    async def touched(self, server: str, uri: str, count: int, times: int = 1) -> None:
        """Touch `uri` and wait until the watch counted `count` updates."""
        await self.call(f"{server}.touch", {"uri": uri, "times": times})

        deadline = time.monotonic() + 30
        while (await self.watches(server)).get(uri, {}).get("updates") != count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{uri} never counted {count} updates")
            await asyncio.sleep(0.02)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    with http_server("basic.py", "--resources", "--watchable") as url:
        servers: dict[str, Any] = {
            "legacy": basic_stdio("--resources", "--watchable", protocol="legacy"),
            "modern": {"url": url},
            "many": basic_stdio("--resources", "--watchable", protocol="legacy"),
            "unwatchable": basic_stdio("--resources", protocol="legacy"),
        }
        if SERVER_EVERYTHING_JS.is_file():
            servers["everything"] = {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}
        write_config(home, servers)
        async with start_sidecar(home, interactive=True) as sidecar:
            yield Env(sidecar)


@pytest.mark.parametrize(("server", "era"), [("legacy", "2025-11-25"), ("modern", "2026-07-28")])
async def test_updates_mark_the_watch_once_and_coalesce(env: Env, server: str, era: str) -> None:
    uri, other = "notes://readme", "notes://changelog"
    first = await env.subscribe(server, uri)
    assert (first["created"], first["watch"]["changed"], first["watch"]["updates"]) == (True, False, 0)
    status = await env.sidecar.request("mcp/server/get", {"server": server})
    assert status["protocol"]["negotiated"] == era
    again = await env.subscribe(server, uri)
    assert again["created"] is False  # idempotent
    assert (await env.subscribe(server, other))["created"] is True  # a second URI: a new filter on modern

    await env.touched(server, uri, count=3, times=3)
    watch = (await env.watches(server))[uri]
    assert (watch["changed"], watch["updates"]) == (True, 3)
    assert env.updates(server, uri) == 1  # one notification; the rest coalesced into the marker
    assert next(n for n in env.sidecar.notifications[UPDATED] if n["server"] == server) == {
        "server": server,
        "uri": uri,
        "changed": True,
    }

    # Unsubscribe stops the marker; subscribing again resets it.
    assert await env.unsubscribe(server, uri) == {"server": server, "uri": uri, "removed": True}
    assert await env.unsubscribe(server, uri) == {"server": server, "uri": uri, "removed": False}
    await env.touched(server, other, count=1)  # `other` still updates after the filter changed
    assert (await env.watches(server))[other]["changed"] is True
    assert uri not in await env.watches(server)
    reset = await env.subscribe(server, uri)
    assert (reset["created"], reset["watch"]["changed"]) == (True, False)
    await env.touched(server, uri, count=1)
    assert env.updates(server, uri) == 2


async def test_watch_errors(env: Env) -> None:
    diag = diagnostic_of(
        await env.sidecar.error("mcp/resource/subscribe", {"server": "unwatchable", "uri": "notes://readme"})
    )
    assert (diag["code"], diag["message"]) == (
        "subscriptions_unsupported",
        "The server does not offer resource subscriptions.",
    )
    diag = diagnostic_of(await env.sidecar.error("mcp/resource/subscribe", {"server": "legacy", "uri": "readme"}))
    assert diag["code"] == "resource_invalid"
    diag = diagnostic_of(await env.sidecar.error("mcp/resource/subscribe", {"server": "nosuch", "uri": "a:b"}))
    assert diag["code"] == "server_not_found"


async def test_the_51st_watch_is_refused(env: Env) -> None:
    for i in range(50):
        await env.subscribe("many", f"notes://w/{i}")
    diag = diagnostic_of(await env.sidecar.error("mcp/resource/subscribe", {"server": "many", "uri": "notes://w/50"}))
    assert (diag["code"], diag["message"]) == (
        "subscription_limit",
        "The server already has 50 watches on this connection.",
    )
    assert (await env.subscribe("many", "notes://w/0"))["created"] is False  # existing ones still idempotent
    listed = (await env.sidecar.request("mcp/resource/subscriptions"))["watches"]
    command = await env.sidecar.request("mcp/command", {"line": "subscriptions"})
    lines = command["text"].splitlines()
    assert lines[0] == f"{len(listed)} resource watch(es):"
    assert " · many · notes://w/0" in lines


@pytest.mark.skipif(not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci`")
async def test_server_everything_periodic_updates(env: Env) -> None:
    uri = "demo://resource/static/document/architecture.md"
    found = await env.sidecar.request(
        "mcp/discover", {"query": "", "kind": "resources", "server": "everything", "limit": 50}
    )
    uris = [c["uri"] for c in found["candidates"] if c["kind"] == "resource"]
    uri = uri if uri in uris else uris[0]
    assert (await env.subscribe("everything", uri))["created"] is True
    await env.call("everything.toggle-subscriber-updates", {})
    try:
        await env.sidecar.wait_for(lambda: env.updates("everything", uri) == 1, timeout=20, what="periodic update")
    finally:
        await env.call("everything.toggle-subscriber-updates", {})
    assert (await env.watches("everything"))[uri]["changed"] is True


async def test_reconnect_and_reload_clear_watches_for_good(env: Env) -> None:
    for i in range(50):  # idempotent: the same 50 as the limit test, so this test also runs alone
        await env.subscribe("many", f"notes://w/{i}")
    await env.subscribe("legacy", "notes://settings-watch")
    await env.sidecar.request("mcp/server/reconnect", {"server": "legacy"})
    await env.sidecar.wait_for(
        lambda: any(
            n["server"] == "legacy" and n["reason"] == "disconnected" for n in env.sidecar.notifications[CLEARED]
        ),
        what="watches cleared on reconnect",
    )
    assert await env.watches("legacy") == {}  # never restored
    assert await env.watches("many")
    await env.sidecar.request("mcp/config/reload")
    cleared = {n["server"]: n for n in env.sidecar.notifications[CLEARED] if n["reason"] == "configuration reload"}
    assert len(cleared["many"]["uris"]) == 50
    assert (await env.sidecar.request("mcp/resource/subscriptions"))["watches"] == []
