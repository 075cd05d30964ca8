"""Activation end to end: exact ids into sessions, with real MCP servers behind one sidecar.

One sidecar serves the whole module (starting MCP servers dominates the cost); each test
works in its own session, and a server that one test inspects before it connects is used
by no other test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from mcp_sidecar.output.activation_text import CALL_HINT, tokens_line
from support.servers import basic_stdio, fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

BASIC_TOOLS = ["echo", "add", "get_env", "fail", "slow", "crash", "cwd", "redefine"]
INVALID_PARAMS = -32602
HINT = "Check the request against docs/protocol.md."


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def sidecar(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SidecarClient]:
    home = tmp_path_factory.mktemp("home")
    project = tmp_path_factory.mktemp("project")
    write_config(
        home,
        {
            "basic": basic_stdio(),
            "many": basic_stdio("--tools-count", "42"),
            "filtered": basic_stdio(excludeTools=["fail"], includeTools=["e*", "add"]),
            "fresh": basic_stdio(),
            "my-server": basic_stdio(includeTools=["echo"]),
            "a": basic_stdio(includeTools=["echo"]),
            "a_b": basic_stdio(includeTools=["add"]),
            "crashing": fixture_stdio("crash_on_start.py"),
            "off": basic_stdio(disabled=True),
        },
    )
    async with start_sidecar(home, project=project, trusted=True) as client:
        yield client


def statuses(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["id"], r["status"]) for r in result["results"]]


async def active_ids(sidecar: SidecarClient, session: str | None = None) -> list[str]:
    params = {"session": session} if session else {}
    result = await sidecar.request("mcp/activeTools", params)
    return [tool["id"] for tool in result["tools"]]


async def test_fifty_ids_activate_in_one_request(sidecar: SidecarClient) -> None:
    names = BASIC_TOOLS + [f"synthetic_{i:04d}" for i in range(42)]
    ids = [f"many.{name}" for name in names]
    assert len(ids) == 50
    result = await sidecar.request("mcp/activate", {"ids": ids, "session": "fifty"})
    assert statuses(result) == [(i, "loaded") for i in ids]
    assert [tool["id"] for tool in result["tools"]] == ids
    assert await active_ids(sidecar, "fifty") == ids


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([], "`ids` must be a list of 1 to 50 tool ids."),
        ([f"basic.tool_{i}" for i in range(51)], "`ids` accepts at most 50 tool ids."),
        ("basic.echo", "`ids` must be a list of 1 to 50 tool ids."),
        (["basic.echo", ""], "Every entry of `ids` must be a non-empty string."),
    ],
    ids=["none", "fifty-one", "not-a-list", "empty-id"],
)
async def test_invalid_id_lists_are_invalid_params(sidecar: SidecarClient, ids: Any, message: str) -> None:
    error = await sidecar.error("mcp/activate", {"ids": ids, "session": "invalid"})
    assert error.code == INVALID_PARAMS
    assert diagnostic_of(error) == {"code": "invalid_params", "operation": "activate", "message": message, "hint": HINT}
    assert error.message == f"[invalid_params] {message} {HINT}"
    assert await active_ids(sidecar, "invalid") == []


async def test_duplicates_and_both_spellings_load_once(sidecar: SidecarClient) -> None:
    ids = ["basic.echo", "basic.echo", "mcp__basic__echo", "mcp__basic__add", "basic.add"]
    result = await sidecar.request("mcp/activate", {"ids": ids, "session": "dupes"})
    assert statuses(result) == [("basic.echo", "loaded"), ("basic.add", "loaded")]
    assert [(t["id"], t["modelName"]) for t in result["tools"]] == [
        ("basic.echo", "mcp__basic__echo"),
        ("basic.add", "mcp__basic__add"),
    ]
    assert await active_ids(sidecar, "dupes") == ["basic.echo", "basic.add"]


async def test_repeat_is_already_loaded_in_either_spelling(sidecar: SidecarClient) -> None:
    first = await sidecar.request("mcp/activate", {"ids": ["mcp__basic__cwd"], "session": "repeat"})
    assert statuses(first) == [("basic.cwd", "loaded")]
    again = await sidecar.request("mcp/activate", {"ids": ["basic.cwd", "mcp__basic__cwd"], "session": "repeat"})
    assert statuses(again) == [("basic.cwd", "already loaded")]
    assert [t["id"] for t in again["tools"]] == ["basic.cwd"]
    assert again["text"].splitlines() == [
        "mcp activate",
        " ✔ basic.cwd · already loaded",
        "   basic.cwd() — Return the server process's working directory.",
        CALL_HINT,
        tokens_line(again["tokens"]),
    ]
    assert again["tokens"] == {"added": 0, "session": first["tokens"]["session"]}  # nothing new
    assert await active_ids(sidecar, "repeat") == ["basic.cwd"]


async def test_typo_is_not_loaded_with_nearby_and_never_fuzzy(sidecar: SidecarClient) -> None:
    result = await sidecar.request("mcp/activate", {"ids": ["basic.ech", "mcp__basic__ad"], "session": "typo"})
    assert result["results"] == [
        {
            "id": "basic.ech",
            "status": "not loaded",
            "reason": "Server 'basic' has no tool named 'ech'.",
            "nearby": ["basic.echo", "basic.crash"],
        },
        {
            "id": "basic.ad",
            "status": "not loaded",
            "reason": "Server 'basic' has no tool named 'ad'.",
            "nearby": ["basic.add"],
        },
    ]
    assert result["tools"] == []
    assert result["text"] == (
        "mcp activate\n"
        " ✘ basic.ech · not loaded: Server 'basic' has no tool named 'ech'. Nearby: basic.echo, basic.crash\n"
        " ✘ basic.ad · not loaded: Server 'basic' has no tool named 'ad'. Nearby: basic.add"
    )
    assert await active_ids(sidecar, "typo") == []
    error = await sidecar.error("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "x"}, "session": "typo"})
    assert diagnostic_of(error)["code"] == "tool_not_active"


async def test_unknown_server_is_not_loaded(sidecar: SidecarClient) -> None:
    result = await sidecar.request("mcp/activate", {"ids": ["basc.echo", "nosuch.echo"], "session": "unknown"})
    reason = "The id does not start with a configured server name."
    assert [(r["id"], r["status"], r["reason"]) for r in result["results"]] == [
        ("basc.echo", "not loaded", reason),
        ("nosuch.echo", "not loaded", reason),
    ]
    # Nearby: exact ids of the fetched tools named like the id's tool part (basic's is fetched above).
    for row in result["results"]:
        assert "basic.echo" in row["nearby"], row
        assert all(i.endswith(".echo") for i in row["nearby"]), row
    assert await active_ids(sidecar, "unknown") == []


async def test_a_bare_or_miscased_id_gets_exact_ids_of_fetched_tools(sidecar: SidecarClient) -> None:
    await sidecar.request("mcp/activate", {"ids": ["basic.echo"], "session": "bare"})  # basic's catalog is fetched
    result = await sidecar.request("mcp/activate", {"ids": ["echo", "Basic.echo", "basic"], "session": "bare"})
    for row in result["results"][:2]:
        assert row["status"] == "not loaded"
        assert "basic.echo" in row["nearby"], row
        assert all(i.endswith(".echo") for i in row["nearby"]), row  # exact ids, never a server prefix
    assert result["results"][2]["nearby"] == ["basic."]  # no tool is like "basic": the server is


async def test_filtered_tools_report_the_filter(sidecar: SidecarClient) -> None:
    ids = ["filtered.fail", "filtered.get_env", "filtered.echo", "filtered.add", "filtered.nope"]
    result = await sidecar.request("mcp/activate", {"ids": ids, "session": "filters"})
    by_id = {r["id"]: r for r in result["results"]}
    assert statuses(result) == [
        ("filtered.fail", "not loaded"),
        ("filtered.get_env", "not loaded"),
        ("filtered.echo", "loaded"),
        ("filtered.add", "loaded"),
        ("filtered.nope", "not loaded"),
    ]
    assert by_id["filtered.fail"]["reason"] == "Tool 'fail' is excluded by the server's tool filters."
    assert by_id["filtered.get_env"]["reason"] == "Tool 'get_env' is excluded by the server's tool filters."
    assert by_id["filtered.nope"]["reason"] == "Server 'filtered' has no tool named 'nope'."
    # Nearby names come from the filtered catalog only.
    assert by_id["filtered.fail"]["nearby"] == []
    tools = await sidecar.request("mcp/server/tools", {"server": "filtered"})
    assert [t["id"] for t in tools["tools"]] == ["filtered.echo", "filtered.add"]
    assert tools["hiddenByFilters"] == 6


async def test_partial_success_keeps_what_loaded(sidecar: SidecarClient) -> None:
    ids = ["basic.get_env", "crashing.echo", "basic.nope", "off.echo", "basic.fail"]
    result = await sidecar.request("mcp/activate", {"ids": ids, "session": "partial"})
    assert statuses(result) == [
        ("basic.get_env", "loaded"),
        ("crashing.echo", "not loaded"),
        ("basic.nope", "not loaded"),
        ("off.echo", "not loaded"),
        ("basic.fail", "loaded"),
    ]
    crashed = result["results"][1]
    assert crashed["reason"] == "The server's tool catalog is unavailable."
    assert crashed["nearby"] == []
    diag = crashed["diagnostic"]
    assert (diag["code"], diag["operation"], diag["server"]) == ("connection_failed", "activate", "crashing")
    assert "fatal: startup failed" not in str(result)  # the server's stderr stays in its log
    assert result["results"][3]["reason"] == "Server 'off' is disabled."
    assert [t["id"] for t in result["tools"]] == ["basic.get_env", "basic.fail"]
    assert await active_ids(sidecar, "partial") == ["basic.get_env", "basic.fail"]
    status = await sidecar.request("mcp/status")
    row = next(r for r in status["servers"] if r["name"] == "crashing")
    assert row["state"] == "failed"
    assert row["lastDiagnostic"]["code"] == "connection_failed"
    # The activation text names the failure for a model that reads only the text.
    assert (
        " ✘ crashing.echo · not loaded: The server's tool catalog is unavailable. [connection_failed]"
        in (result["text"])
    )


async def test_sessions_are_separate(sidecar: SidecarClient) -> None:
    first = await sidecar.request("mcp/activate", {"ids": ["basic.slow"], "session": "a"})
    assert statuses(first) == [("basic.slow", "loaded")]
    assert first["session"] == "a"
    assert "basic.slow" not in await active_ids(sidecar)
    assert await active_ids(sidecar, "a") == ["basic.slow"]
    error = await sidecar.error("mcp/callTool", {"id": "basic.slow", "arguments": {"seconds": 0}})
    assert diagnostic_of(error) == {
        "code": "tool_not_active",
        "operation": "call",
        "server": "basic",
        "message": "Tool 'basic.slow' is not active in session 'default'.",
        "hint": "Activate the tool in this session with mcp/activate before calling it.",
    }
    default = await sidecar.request("mcp/activate", {"ids": ["basic.slow"]})
    assert default["session"] == "default"
    assert statuses(default) == [("basic.slow", "loaded")]
    again = await sidecar.request("mcp/activate", {"ids": ["basic.slow"], "session": "a"})
    assert statuses(again) == [("basic.slow", "already loaded")]


async def test_active_tools_carry_full_schemas(sidecar: SidecarClient) -> None:
    await sidecar.request("mcp/activate", {"ids": ["basic.add", "basic.echo"], "session": "schemas"})
    active = await sidecar.request("mcp/activeTools", {"session": "schemas"})
    assert active["session"] == "schemas"
    add, echo = active["tools"]
    assert {k: add[k] for k in ("id", "modelName", "server", "name", "description")} == {
        "id": "basic.add",
        "modelName": "mcp__basic__add",
        "server": "basic",
        "name": "add",
        "description": "Add two integers.",
    }
    schema = add["inputSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["a", "b"]
    assert {name: prop["type"] for name, prop in schema["properties"].items()} == {"a": "integer", "b": "integer"}
    assert echo["inputSchema"]["required"] == ["text"]
    assert echo["inputSchema"]["properties"]["text"]["type"] == "string"
    # Exactly what the server's catalog says: nothing trimmed.
    catalog = await sidecar.request("mcp/server/tools", {"server": "basic"})
    by_id = {t["id"]: t for t in catalog["tools"]}
    assert add == by_id["basic.add"]
    assert echo == by_id["basic.echo"]


async def test_server_names_with_dash_underscore_and_shared_prefix(sidecar: SidecarClient) -> None:
    ids = [
        "my-server.echo",
        "a.echo",
        "a_b.add",
        "mcp__a_b__add",
        "mcp__a__echo",
        "mcp__my-server__echo",
        "a.add",
        "a_b.echo",
    ]
    result = await sidecar.request("mcp/activate", {"ids": ids, "session": "names"})
    assert statuses(result) == [
        ("my-server.echo", "loaded"),
        ("a.echo", "loaded"),
        ("a_b.add", "loaded"),
        ("a.add", "not loaded"),
        ("a_b.echo", "not loaded"),
    ]
    reasons = {r["id"]: r.get("reason") for r in result["results"]}
    assert reasons["a.add"] == "Tool 'add' is excluded by the server's tool filters."
    assert reasons["a_b.echo"] == "Tool 'echo' is excluded by the server's tool filters."
    assert [(t["server"], t["name"], t["modelName"]) for t in result["tools"]] == [
        ("my-server", "echo", "mcp__my-server__echo"),
        ("a", "echo", "mcp__a__echo"),
        ("a_b", "add", "mcp__a_b__add"),
    ]
    call = await sidecar.request(
        "mcp/callTool", {"id": "mcp__a_b__add", "arguments": {"a": 1, "b": 2}, "session": "names"}
    )
    assert (call["server"], call["tool"], call["content"][0]["text"]) == ("a_b", "add", "3")


async def test_activation_needs_no_prior_discovery(sidecar: SidecarClient) -> None:
    status = await sidecar.request("mcp/status")
    row = next(r for r in status["servers"] if r["name"] == "fresh")
    assert (row["state"], row["catalog"]["tools"], row["catalogSource"]) == ("idle", None, None)
    result = await sidecar.request("mcp/activate", {"ids": ["fresh.add"], "session": "fresh"})
    assert statuses(result) == [("fresh.add", "loaded")]
    status = await sidecar.request("mcp/status")
    row = next(r for r in status["servers"] if r["name"] == "fresh")
    assert (row["state"], row["catalog"]["tools"], row["catalogSource"], row["loaded"]) == (
        "connected",
        8,
        "live",
        1,
    )
    call = await sidecar.request("mcp/callTool", {"id": "fresh.add", "arguments": {"a": 2, "b": 2}, "session": "fresh"})
    assert call["content"] == [{"type": "text", "text": "4"}]
