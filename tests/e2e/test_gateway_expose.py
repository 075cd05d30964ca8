"""`mcp-sidecar mcp --expose auto|search|all` (issue 34): real gateways and fixture servers.

Below the budget every tool of the enabled servers is in the host's first `tools/list`, callable without
an activation; a reload that adds a server past the budget, or a server whose catalog grows past it, sends
`tools/list_changed` and leaves the tools to the search (one log line says why); back below, the same the
other way. The gateway's total is checked against the tests' own count of what the host listed, with the
same tokenizer loaded here.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from mcp_sidecar.catalog import token_count
from support.gateway import Changes, gateway, text_of, tool_names
from support.servers import fixture_path
from support.sidecar import write_config

BASIC_TOOLS = ["add", "crash", "cwd", "echo", "fail", "get_env", "redefine", "slow"]
OPENING = ["mcp_call", "mcp_tools"]
MEASURED = re.compile(
    r"gateway --expose (\w+): (?:.* tokens \(.*\): )?(\d+) tools of (\d+) servers cost ([\d,]+) tokens"
)


def stdio(script: str, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(fixture_path(script)), "stdio", *args]}


BASIC = {"basic": stdio("basic.py")}
WITH_BIG = {**BASIC, "big": stdio("basic.py", "--tools-count", "60")}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    write_config(path, BASIC)
    return path


@pytest.fixture(scope="module")
def counter() -> token_count.TokenCounter:
    loaded = token_count.load_counter()
    assert loaded is not None, "the tokenizer (wordllama) is a dependency of the test environment"
    return loaded


async def independent_count(counter: token_count.TokenCounter, *servers: dict[str, Any]) -> int:
    """What the servers' tools cost, counted here: each server asked for its list directly (no gateway), each
    definition counted with the tokenizer loaded in this process."""
    total = 0
    for definition in servers:
        params = StdioServerParameters(command=definition["command"], args=definition["args"])
        async with Client(params) as server:
            for tool in (await server.list_tools()).tools:
                total += counter.tool(tool.model_dump(by_alias=True, exclude_none=True))
    return total


def measures(home: Path) -> list[tuple[str, int, int, int]]:
    """(mode, tools, servers, tokens) of each measure the gateway logged (the first, and each crossing)."""
    text = (home / "gateway.log").read_text(encoding="utf-8")
    return [(m[1], int(m[2]), int(m[3]), int(m[4].replace(",", ""))) for m in MEASURED.finditer(text)]


async def listed_until(host: Client, changes: Changes, wanted: list[str], what: str) -> list[Any]:
    """The host's tools once their sorted names are `wanted`, listing again on each `list_changed`."""
    while True:
        since = changes.count
        tools = list((await host.list_tools(cache_mode="bypass")).tools)
        if sorted(t.name for t in tools) == wanted:
            return tools
        try:
            await changes.next(since)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}: listed {sorted(t.name for t in tools)}") from None


@pytest.mark.parametrize("legacy", [True, False], ids=["handshake", "2026-07-28"])
async def test_a_small_catalog_is_listed_whole_from_the_first_list(
    home: Path, counter: token_count.TokenCounter, legacy: bool
) -> None:
    async with gateway(home, "--expose", "auto", legacy=legacy) as (host, _):
        listed = list((await host.list_tools()).tools)  # the very first list
        assert sorted(t.name for t in listed) == sorted([*OPENING, *(f"basic__{n}" for n in BASIC_TOOLS)])
        echo = next(t for t in listed if t.name == "basic__echo")
        assert echo.input_schema["required"] == ["text"]
        description = next(t for t in listed if t.name == "mcp_tools").description or ""
        assert "Every tool of the servers below is already among your own tools" in description
        called = await host.call_tool("basic__echo", {"text": "no activation"})  # no mcp_tools activate first
        assert not called.is_error
        assert text_of(called) == "no activation"
        by_id = await host.call_tool("mcp_call", {"id": "basic.add", "arguments": {"a": 2, "b": 3}})
        assert text_of(by_id) == "5"
        found = text_of(await host.call_tool("mcp_tools", {"query": "add two integers"}))
        assert "basic.add" in found  # the search still works
    assert measures(home)[0] == ("auto", len(BASIC_TOOLS), 1, await independent_count(counter, BASIC["basic"]))


async def test_a_server_added_past_the_budget_and_removed_again(home: Path, counter: token_count.TokenCounter) -> None:
    async with gateway(home, "--expose", "auto", "--expose-budget", "2500") as (host, changes):
        small = await listed_until(host, changes, sorted([*OPENING, *(f"basic__{n}" for n in BASIC_TOOLS)]), "basic")
        basic = await independent_count(counter, BASIC["basic"])
        assert basic <= 2500 < basic + await independent_count(counter, WITH_BIG["big"])
        write_config(home, WITH_BIG)
        await listed_until(host, changes, OPENING, "the search, past the budget")
        log = (home / "gateway.log").read_text(encoding="utf-8")
        assert f"big added ({len(BASIC_TOOLS) + 60} tools" in log
        assert "over the budget of 2,500: tools found with mcp_tools query" in log
        found = text_of(await host.call_tool("mcp_tools", {"query": "weather forecast", "server": "big"}))
        assert "big.synthetic_" in found
        refused = await host.call_tool("basic__echo", {"text": "x"})  # listed no more: activate it first
        assert refused.is_error
        write_config(home, BASIC)
        back = await listed_until(host, changes, sorted(t.name for t in small), "every tool again, within the budget")
        assert "big gone" in (home / "gateway.log").read_text(encoding="utf-8")
        assert sorted(t.name for t in back) == sorted(t.name for t in small)
    first, over, within = measures(home)[:3]
    assert first == ("auto", len(BASIC_TOOLS), 1, basic)
    assert over == ("auto", 2 * len(BASIC_TOOLS) + 60, 2, await independent_count(counter, *WITH_BIG.values()))
    assert within == first


async def test_a_catalog_that_grows_past_the_budget(home: Path, counter: token_count.TokenCounter) -> None:
    exact = await independent_count(counter, BASIC["basic"])
    # A budget of exactly what the tools cost: they are listed; one tool more, and they are searched.
    async with gateway(home, "--expose", "auto", "--expose-budget", str(exact)) as (host, changes):
        everything = sorted([*OPENING, *(f"basic__{n}" for n in BASIC_TOOLS)])
        assert sorted(await tool_names(host)) == everything
        grown = await host.call_tool("basic__redefine", {"mode": "add"})
        assert not grown.is_error
        # What the model called stays: it was activated as it was called.
        await listed_until(host, changes, sorted([*OPENING, "basic__redefine"]), "the search, after the catalog grew")
    log = (home / "gateway.log").read_text(encoding="utf-8")
    assert f"within the budget of {exact:,}: every tool listed natively" in log
    assert "basic now 9 tools (+" in log
    assert f"over the budget of {exact:,}" in log


@pytest.mark.parametrize("mode", ["search", "all"])
async def test_a_forced_mode_ignores_the_budget(home: Path, mode: str) -> None:
    async with gateway(home, "--expose", mode, "--expose-budget", "0") as (host, _):
        names = sorted(await tool_names(host))
    if mode == "search":
        assert names == OPENING
        assert not measures(home)  # nothing measured: nothing started for it
    else:
        assert names == sorted([*OPENING, *(f"basic__{n}" for n in BASIC_TOOLS)])
        assert measures(home)[0][0] == "all"


async def test_proxy_mode_lists_its_two_tools_whatever_the_rule(home: Path) -> None:
    async with gateway(home, "--tools", "proxy", "--expose", "all") as (host, _):
        assert sorted(await tool_names(host)) == OPENING
        called = await host.call_tool("mcp_call", {"id": "basic.echo", "arguments": {"text": "x"}})
        assert called.is_error  # proxy mode: activate first, as ever


async def test_a_listed_tool_that_changed_before_its_call_is_refused(home: Path) -> None:
    # A host that does not list again when told: its list still has echo as it was.
    async with gateway(home, "--expose", "all", relists=False) as (host, changes):
        listed = {t.name: t for t in (await host.list_tools()).tools}
        assert listed["basic__echo"].input_schema["required"] == ["text"]
        since = changes.count
        changed = await host.call_tool("basic__redefine", {"mode": "change"})  # echo now takes `prefix` too
        assert not changed.is_error
        await changes.next(since)  # the gateway measured the new catalog and told the host
        refused = await host.call_tool("basic__echo", {"text": "old schema"})
        assert refused.is_error
        assert text_of(refused).startswith("basic: [tool_changed] basic__echo was removed: its server changed it.")
        relisted = {t.name: t for t in (await host.list_tools()).tools}
        assert sorted(relisted["basic__echo"].input_schema["required"]) == ["prefix", "text"]
        called = await host.call_tool("basic__echo", {"text": "new", "prefix": "> "})
        assert not called.is_error, text_of(called)


async def test_a_profile_lists_and_counts_its_servers_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    other = stdio("basic.py", "--tools-count", "60")  # alone past the budget: outside the profile, it counts nothing
    document = {"mcpServers": {**BASIC, "other": other}, "profiles": {"review": {"servers": ["basic"]}}}
    (home / "mcp.json").write_text(json.dumps(document), encoding="utf-8")
    async with gateway(home, "--profile", "review", "--expose", "auto") as (host, _):
        names = sorted(await tool_names(host))
    assert names == sorted([*OPENING, *(f"basic__{n}" for n in BASIC_TOOLS)])
    assert measures(home)[0][1:3] == (len(BASIC_TOOLS), 1)
