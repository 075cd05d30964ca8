"""Tool calls end to end: active tools only, live re-validation, errors as results, no retries.

One sidecar serves the module (starting processes dominates the cost). Each test uses
server entries no other test touches, so a test that changes a server's tools, crashes it
or counts its starts sees only its own effects.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from mcp_sidecar.pygls_shim import is_tracked
from support.servers import basic_stdio, http_server, started_pids
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

REQUEST_FAILED = -32000
BASIC_TOOLS = ["echo", "add", "get_env", "fail", "slow", "crash", "cwd", "redefine"]
HANDSHAKE_ERA = "2025-11-25"
MODERN_ERA = "2026-07-28"
TOOL_CHANGED_HINT = (
    "Check the server's tool filters and activate the exact tool again for its current schema; "
    "reload if the connection configuration changed."
)
HTTP_SERVERS = ("http-auto", "http-legacy", "timeout")


class Env:
    def __init__(self, sidecar: SidecarClient, counters: Path) -> None:
        self.sidecar = sidecar
        self.counters = counters

    def starts(self, server: str) -> int:
        """How many times the server's process started (it records its pid on every start)."""
        return len(started_pids(self.counters / server))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    counters = tmp_path_factory.mktemp("counters")
    with ExitStack() as stack, ThreadPoolExecutor(len(HTTP_SERVERS)) as pool:
        urls = dict(
            zip(
                HTTP_SERVERS,
                pool.map(lambda _: stack.enter_context(http_server("basic.py")), HTTP_SERVERS),
                strict=True,
            )
        )
        write_config(
            home,
            {
                "refuse": basic_stdio(),
                "errors": basic_stdio(),
                "stdio-auto": basic_stdio(protocol="auto"),
                "stdio-legacy": basic_stdio(protocol="legacy"),
                "http-auto": {"url": urls["http-auto"], "protocol": "auto"},
                "http-legacy": {"url": urls["http-legacy"], "protocol": "legacy"},
                "paged": basic_stdio("--paginate", "2", "--tools-count", "7"),
                "cancel": basic_stdio("--counter-file", str(counters / "cancel")),
                "timeout": {"url": urls["timeout"], "timeoutMs": 1000},
                "crash": basic_stdio("--counter-file", str(counters / "crash")),
            },
        )
        async with start_sidecar(home) as sidecar:
            yield Env(sidecar, counters)


def expected(code: str, message: str, hint: str, server: str | None) -> dict[str, Any]:
    diag: dict[str, Any] = {"code": code, "operation": "call"}
    if server is not None:
        diag["server"] = server
    return {**diag, "message": message, "hint": hint}


async def call(sidecar: SidecarClient, tool_id: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request("mcp/callTool", {"id": tool_id, "arguments": arguments, **extra})
    return result


async def activate(sidecar: SidecarClient, *ids: str, session: str | None = None) -> list[tuple[str, str]]:
    params: dict[str, Any] = {"ids": list(ids)}
    if session is not None:
        params["session"] = session
    result = await sidecar.request("mcp/activate", params)
    return [(r["id"], r["status"]) for r in result["results"]]


async def status_row(sidecar: SidecarClient, server: str) -> dict[str, Any]:
    status = await sidecar.request("mcp/status")
    row: dict[str, Any] = next(r for r in status["servers"] if r["name"] == server)
    return row


def text_of(result: dict[str, Any]) -> str:
    assert [block["type"] for block in result["content"]] == ["text"], result
    return str(result["content"][0]["text"])


async def test_only_active_tools_are_called(env: Env) -> None:
    sidecar = env.sidecar
    error = await sidecar.error("mcp/callTool", {"id": "refuse.add", "arguments": {"a": 1, "b": 2}})
    assert error.code == REQUEST_FAILED
    hint = "Activate the tool in this session with mcp/activate before calling it."
    message = "Tool 'refuse.add' is not active in session 'default'."
    assert diagnostic_of(error) == expected("tool_not_active", message, hint, "refuse")
    assert error.message == f"refuse: [tool_not_active] {message} {hint}"
    # A refused call connects nothing.
    assert (await status_row(sidecar, "refuse"))["state"] == "idle"

    assert await activate(sidecar, "refuse.add", session="other") == [("refuse.add", "loaded")]
    error = await sidecar.error("mcp/callTool", {"id": "mcp__refuse__add", "arguments": {"a": 1, "b": 2}})
    assert diagnostic_of(error)["message"] == message
    result = await call(sidecar, "mcp__refuse__add", {"a": 1, "b": 2}, session="other")
    assert (result["id"], result["server"], result["tool"], result["isError"]) == ("refuse.add", "refuse", "add", False)
    assert text_of(result) == "3"
    assert result["structuredContent"] == {"result": 3}

    error = await sidecar.error("mcp/callTool", {"id": "nosuch.add", "arguments": {}})
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error) == expected(
        "tool_not_found",
        "'nosuch.add' does not name a configured server's tool.",
        "Use an exact tool id from discovery or mcp/server/tools.",
        None,
    )
    error = await sidecar.error("mcp/callTool", {"id": "refuse.add", "arguments": [1, 2], "session": "other"})
    assert error.code == -32602
    assert diagnostic_of(error)["message"] == "`arguments` must be a JSON object."


async def test_tool_error_is_a_result(env: Env) -> None:
    sidecar = env.sidecar
    assert await activate(sidecar, "errors.fail", "errors.add") == [("errors.fail", "loaded"), ("errors.add", "loaded")]
    result = await call(sidecar, "errors.fail", {"message": "boom"})
    assert (result["id"], result["isError"]) == ("errors.fail", True)
    assert text_of(result) == "Error executing tool fail: boom"
    # Arguments are the server's to judge: a rejection is a result too, not a JSON-RPC error.
    result = await call(sidecar, "errors.add", {"a": "two", "b": 3})
    assert result["isError"] is True
    assert text_of(result).startswith("Error executing tool add:")
    assert text_of(await call(sidecar, "errors.add", {"a": 2, "b": 3})) == "5"
    assert (await status_row(sidecar, "errors"))["state"] == "connected"


@pytest.mark.parametrize(
    ("server", "era"),
    [
        ("stdio-auto", MODERN_ERA),
        ("stdio-legacy", HANDSHAKE_ERA),
        ("http-auto", MODERN_ERA),
        ("http-legacy", HANDSHAKE_ERA),
    ],
)
async def test_changed_or_removed_tool_is_refused_until_reactivated(env: Env, server: str, era: str) -> None:
    sidecar = env.sidecar
    echo, add, redefine = f"{server}.echo", f"{server}.add", f"{server}.redefine"
    assert await activate(sidecar, echo, add, redefine) == [(echo, "loaded"), (add, "loaded"), (redefine, "loaded")]
    assert (await status_row(sidecar, server))["protocolVersion"] == era
    assert text_of(await call(sidecar, echo, {"text": "hi"})) == "hi"

    assert text_of(await call(sidecar, redefine, {"mode": "change"})).startswith("redefined change; sent ")
    error = await sidecar.error("mcp/callTool", {"id": echo, "arguments": {"text": "hi"}})
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error) == expected(
        "tool_changed", f"Tool '{echo}' changed since activation.", TOOL_CHANGED_HINT, server
    )

    assert text_of(await call(sidecar, redefine, {"mode": "remove"})).startswith("redefined remove; sent ")
    error = await sidecar.error("mcp/callTool", {"id": add, "arguments": {"a": 1, "b": 2}})
    assert diagnostic_of(error) == expected(
        "tool_changed", f"Tool '{add}' was removed or filtered out since activation.", TOOL_CHANGED_HINT, server
    )
    # Arguments that fit the new schema do not help: the session holds the old definition.
    error = await sidecar.error("mcp/callTool", {"id": echo, "arguments": {"text": "hi", "prefix": "> "}})
    assert diagnostic_of(error)["code"] == "tool_changed"

    again = await sidecar.request("mcp/activate", {"ids": [echo, add, redefine]})
    assert [(r["id"], r["status"]) for r in again["results"]] == [
        (echo, "loaded"),
        (add, "not loaded"),
        (redefine, "already loaded"),
    ]
    assert again["results"][1]["reason"] == f"Server '{server}' has no tool named 'add'."
    new_echo = again["tools"][0]
    assert new_echo["description"] == "Echo the given text back, prefixed with prefix."
    assert sorted(new_echo["inputSchema"]["required"]) == ["prefix", "text"]
    active = await sidecar.request("mcp/activeTools")
    mine = [t for t in active["tools"] if t["server"] == server]
    assert [t["id"] for t in mine] == [echo, add, redefine]
    assert mine[0] == new_echo
    assert text_of(await call(sidecar, echo, {"text": "hi", "prefix": "> "})) == "> hi"


async def test_paginated_catalog_is_complete(env: Env) -> None:
    sidecar = env.sidecar
    catalog = await sidecar.request("mcp/server/tools", {"server": "paged"})
    names = BASIC_TOOLS + [f"synthetic_{i:04d}" for i in range(7)]
    assert [t["name"] for t in catalog["tools"]] == names
    assert (catalog["source"], catalog["hiddenByFilters"]) == ("live", 0)
    # With pages of two, synthetic_0006 is alone on the eighth and last page.
    assert await activate(sidecar, "paged.synthetic_0006") == [("paged.synthetic_0006", "loaded")]
    result = await call(sidecar, "paged.synthetic_0006", {"query": "q"})
    assert (result["isError"], text_of(result)) == (False, "synthetic_0006:q")
    assert (await status_row(sidecar, "paged"))["catalog"]["tools"] == 15


async def test_cancelled_call_leaves_the_sidecar_serving(env: Env) -> None:
    sidecar = env.sidecar
    assert await activate(sidecar, "cancel.slow", "cancel.add") == [("cancel.slow", "loaded"), ("cancel.add", "loaded")]
    began = time.monotonic()
    pending = asyncio.create_task(
        sidecar.lsp.protocol.send_request_async(
            "mcp/callTool", {"id": "cancel.slow", "arguments": {"seconds": 60}}, msg_id="slow-1"
        )
    )
    # The request is on the wire once the client tracks its answer.
    await sidecar.wait_for(lambda: is_tracked(sidecar.lsp.protocol, "slow-1"), 10, "the slow call to be sent")
    sidecar.lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(pending, 10)
    assert time.monotonic() - began < 10
    assert text_of(await call(sidecar, "cancel.add", {"a": 20, "b": 22})) == "42"
    assert (await status_row(sidecar, "cancel"))["state"] == "connected"
    assert env.starts("cancel") == 1


async def test_timeout_ms_bounds_a_call(env: Env) -> None:
    sidecar = env.sidecar
    assert await activate(sidecar, "timeout.slow", "timeout.add") == [
        ("timeout.slow", "loaded"),
        ("timeout.add", "loaded"),
    ]
    began = time.monotonic()
    error = await sidecar.error("mcp/callTool", {"id": "timeout.slow", "arguments": {"seconds": 30}})
    assert 1 <= time.monotonic() - began < 10
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error) == expected(
        "timeout",
        "The server did not answer within the time limit.",
        "Check the server's responsiveness and the applicable time limit (timeoutMs).",
        "timeout",
    )
    assert text_of(await call(sidecar, "timeout.add", {"a": 1, "b": 1})) == "2"


async def test_a_call_is_never_retried(env: Env) -> None:
    sidecar = env.sidecar
    assert await activate(sidecar, "crash.crash", "crash.add") == [("crash.crash", "loaded"), ("crash.add", "loaded")]
    assert env.starts("crash") == 1
    error = await sidecar.error("mcp/callTool", {"id": "crash.crash", "arguments": {}})
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error) == expected(
        "connection_failed",
        "The server closed the connection.",
        "Check the server executable, working directory, endpoint, network and TLS configuration; "
        "the server log (mcp/server/logs) may say more.",
        "crash",
    )
    # The crash was answered without starting the server again to replay the call.
    assert env.starts("crash") == 1
    row = await status_row(sidecar, "crash")
    assert (row["state"], row["lastDiagnostic"]["code"]) == ("failed", "connection_failed")
    logs = await sidecar.request("mcp/server/logs", {"server": "crash"})
    assert "basic: crash tool called, exiting with code 3" in [line["text"] for line in logs["lines"]]
    assert env.starts("crash") == 1
    # The next request reconnects, and the session's active tools still work.
    assert text_of(await call(sidecar, "crash.add", {"a": 2, "b": 3})) == "5"
    assert env.starts("crash") == 2
