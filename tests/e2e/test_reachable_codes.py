"""The troubleshooting table's `tool_error`, `busy` and `catalog_changed`, each made to happen.

Against the `codes.py` fixture: a tool answering a JSON-RPC error and one answering an
`isError` result (`tool_error` results, the connection kept), a listing held in flight while
a reconnect arrives (`busy`), and listings overtaken by their own kind's list_changed (fetched
once more, then `catalog_changed`), over stdio in both protocol eras and over HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mcp_sidecar.protocol.errors import HINTS, REQUEST_FAILED
from support.servers import fixture_stdio, http_server
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 30


def codes(*args: str, protocol: str = "legacy") -> dict[str, object]:
    return fixture_stdio("codes.py", "stdio", *args, protocol=protocol)


class Env:
    def __init__(self, sidecar: SidecarClient, held: Path) -> None:
        self.sidecar = sidecar
        self.held = held
        """The directory where the `held` server says it is listing and waits for `release`."""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    held = tmp_path_factory.mktemp("held")
    with ExitStack() as stack:
        url = stack.enter_context(http_server("codes.py"))
        write_config(
            home,
            {
                "legacy": codes(),
                "modern": codes(protocol="auto"),
                "http": {"url": url},
                "held": codes("--hold-lists", str(held)),
                "once": codes("--overtake", "tools=1", "--overtake", "resources=1"),
                "twice": codes("--overtake", "tools=2", "--overtake", "resources=2", "--overtake", "prompts=2"),
                "twice-modern": codes("--overtake", "tools=2", "--overtake-from", "2", protocol="auto"),
                "direct": codes("--overtake", "tools=2"),
            },
        )
        async with start_sidecar(home) as sidecar:
            yield Env(sidecar, held)


async def status_row(sidecar: SidecarClient, server: str) -> dict[str, Any]:
    status = await sidecar.request("mcp/status")
    row: dict[str, Any] = next(r for r in status["servers"] if r["name"] == server)
    return row


async def invoke(sidecar: SidecarClient, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request("mcp/modelTool/invoke", {"arguments": arguments})
    return result


def tool_error(server: str, message: str) -> dict[str, Any]:
    return {
        "code": "tool_error",
        "operation": "call",
        "server": server,
        "message": message,
        "hint": HINTS["tool_error"],
    }


ANSWERED = "The server answered with JSON-RPC error {} instead of a result; its message is the content."
REPORTED = "The tool reported an error; the result's content is the server's account."


# -- tool_error -------------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["legacy", "modern", "http"])
async def test_a_json_rpc_error_answer_is_a_tool_error_result(env: Env, server: str) -> None:
    sidecar = env.sidecar
    loaded = await sidecar.request("mcp/activate", {"ids": [f"{server}.refuse", f"{server}.echo"]})
    assert [r["status"] for r in loaded["results"]] == ["loaded", "loaded"]
    before = await status_row(sidecar, server)
    assert before["state"] == "connected"
    # Modern HTTP servers answer some of these with HTTP 400: the next answer must not inherit it.
    for code in (-32602, -32600, -32603, 42, -32602, -32603):
        message = f"database \x1b[31mlocked\x1b[0m\u202e ({code})\nsecond line"
        result = await sidecar.request(
            "mcp/callTool", {"id": f"{server}.refuse", "arguments": {"code": code, "message": message}}
        )
        # The server's message is the content (sanitised: no escape sequences, no bidi controls, one line).
        assert result["isError"] is True
        assert result["content"] == [{"type": "text", "text": f"database locked ({code}) second line"}]
        assert result["diagnostic"] == tool_error(server, ANSWERED.format(code))
    # The connection is the one it was: no reconnect, no failure, and it still calls.
    echoed = await sidecar.request("mcp/callTool", {"id": f"{server}.echo", "arguments": {"text": "still here"}})
    assert (echoed["isError"], echoed["content"]) == (False, [{"type": "text", "text": "still here"}])
    assert "diagnostic" not in echoed
    after = await status_row(sidecar, server)
    assert (after["state"], after["lastDiagnostic"]) == ("connected", None)
    assert "failed" not in sidecar.states(server)


@pytest.mark.parametrize("server", ["legacy", "http"])
async def test_an_is_error_result_carries_a_tool_error_diagnostic(env: Env, server: str) -> None:
    sidecar = env.sidecar
    result = await sidecar.request(
        "mcp/callTool", {"id": f"{server}.report", "arguments": {"message": "quota spent"}, "activate": True}
    )
    assert (result["isError"], result["activation"]["id"]) == (True, f"{server}.report")
    assert result["content"] == [{"type": "text", "text": "Error executing tool report: quota spent"}]
    assert result["diagnostic"] == tool_error(server, REPORTED)
    assert (await status_row(sidecar, server))["state"] == "connected"


# -- busy -------------------------------------------------------------------------------------


async def test_reconnect_while_a_discovery_lists_the_server_is_busy(env: Env) -> None:
    sidecar, held = env.sidecar, env.held
    discovery = asyncio.create_task(
        sidecar.request("mcp/discover", {"query": "echo", "server": "held", "kind": "tools"})
    )
    await sidecar.wait_for(lambda: (held / "listing-1").exists(), TIMEOUT, "the held server's first listing")
    error = await sidecar.error("mcp/server/reconnect", {"server": "held"})
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error) == {
        "code": "busy",
        "operation": "reconnect",
        "server": "held",
        "message": "A discovery is fetching this server's catalog.",
        "hint": HINTS["busy"],
    }
    assert not discovery.done()
    (held / "release").touch()
    found = await asyncio.wait_for(discovery, TIMEOUT)
    # The listing was not torn down under the discovery: it answered, whole.
    assert found["unavailable"] == []
    assert [c["id"] for c in found["candidates"]][:1] == ["held.echo"]
    # Once the listing is in, reconnect works (and lists again on the new connection).
    row = await sidecar.request("mcp/server/reconnect", {"server": "held"})
    assert (row["name"], row["state"], row["catalog"]["tools"]) == ("held", "connected", 3)


# -- catalog_changed --------------------------------------------------------------------------


def changed(server: str, kind: str, operation: str = "discover") -> dict[str, Any]:
    return {
        "code": "catalog_changed",
        "operation": operation,
        "server": server,
        "message": f"The server's {kind} list changed while it was listed, twice in a row: retry shortly.",
        "hint": HINTS["catalog_changed"],
    }


async def test_a_listing_overtaken_once_is_fetched_again(env: Env) -> None:
    sidecar = env.sidecar
    found = await sidecar.request("mcp/discover", {"query": "grown added while listing", "server": "once"})
    # The first answer predated the change it announced; the one kept is the second, with grown_1.
    assert found["unavailable"] == []
    ids = [c.get("id") or c.get("uri") for c in found["candidates"]]
    assert "once.grown_1" in ids
    assert "mem://grown/1" in ids
    assert (await status_row(sidecar, "once"))["catalog"]["tools"] == 4


async def test_a_listing_overtaken_twice_is_catalog_changed(env: Env) -> None:
    sidecar = env.sidecar
    result = await invoke(sidecar, {"query": "grown added while listing", "server": "twice"})
    details = result["details"]
    assert details["candidates"] == []
    assert details["unavailable"] == [
        {"server": "twice", "kind": kind, "diagnostic": changed("twice", kind)}
        for kind in ("prompts", "resources", "tools")
    ]
    assert result["text"].splitlines()[1:] == [
        " (no matching candidates)",
        *(
            f" ✘ twice {kind} unavailable: [catalog_changed] The server's {kind} list changed while it was listed,"
            " twice in a row: retry shortly."
            for kind in ("prompts", "resources", "tools")
        ),
    ]
    # Nothing stale was kept, the connection stays, and the retry the hint asks for finds the change.
    row = await status_row(sidecar, "twice")
    assert (row["state"], row["catalog"]["tools"]) == ("connected", None)
    again = await sidecar.request("mcp/discover", {"query": "grown added while listing", "server": "twice"})
    assert again["unavailable"] == []
    ids = {c.get("id") or c.get("uri") for c in again["candidates"]}
    assert {"twice.grown_1", "twice.grown_2", "mem://grown/2"} <= ids


async def test_a_modern_session_listing_overtaken_twice_is_catalog_changed(env: Env) -> None:
    sidecar = env.sidecar
    # The first listing opens the session (and its change stream); the refresh's is overtaken twice.
    first = await sidecar.request("mcp/server/tools", {"server": "twice-modern"})
    assert [t["name"] for t in first["tools"]] == ["echo", "refuse", "report"]
    error = await sidecar.error("mcp/server/refresh", {"server": "twice-modern"})
    assert diagnostic_of(error) == changed("twice-modern", "tools", "refresh")
    found = await sidecar.request("mcp/discover", {"query": "grown", "server": "twice-modern", "kind": "tools"})
    assert found["unavailable"] == []
    assert {c["id"] for c in found["candidates"]} >= {"twice-modern.grown_1", "twice-modern.grown_2"}
    assert (await status_row(sidecar, "twice-modern"))["protocolVersion"] == "2026-07-28"


async def test_a_direct_request_overtaken_twice_fails_with_catalog_changed(env: Env) -> None:
    sidecar = env.sidecar
    error = await sidecar.error("mcp/server/tools", {"server": "direct"})
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error) == changed("direct", "tools", "tools")
    listed = await sidecar.request("mcp/server/tools", {"server": "direct"})
    assert [t["name"] for t in listed["tools"]] == ["echo", "refuse", "report", "grown_1", "grown_2"]
    assert (await status_row(sidecar, "direct"))["state"] == "connected"
