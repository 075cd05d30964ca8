"""Token estimates end to end (issue 34, point 1): what each tool, server, session and `mcp_tools`
costs a model's context, checked against an independent count (`support.tokens`: the `tokenizers`
library with the same Llama 2 file) of the definitions real fixture servers list.

One sidecar serves the module; each test works in its own session. The warm start has a home of
its own: the second sidecar finds the figures beside the disk copy, without the server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mcp_sidecar.protocol import methods
from support.cli import cli
from support.servers import basic_stdio
from support.sidecar import SidecarClient, restart_engine, start_sidecar, write_config
from support.tokens import definition_tokens

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def sidecar(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SidecarClient]:
    home = tmp_path_factory.mktemp("home")
    write_config(
        home,
        {
            "basic": basic_stdio(),
            "filtered": basic_stdio(includeTools=["echo", "add"]),
            "off": basic_stdio(disabled=True),
        },
    )
    async with start_sidecar(home) as client:
        yield client


async def tools_of(sidecar: SidecarClient, server: str) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request("mcp/server/tools", {"server": server})
    return result


async def counted_row(sidecar: SidecarClient, server: str, within: float = 30) -> dict[str, Any]:
    """The server's status row once its catalog's figures are counted (a background count)."""
    deadline = time.monotonic() + within
    while True:
        status = await sidecar.request("mcp/status")
        row: dict[str, Any] = next(r for r in status["servers"] if r["name"] == server)
        if row["tokens"] is not None:
            return row
        assert time.monotonic() < deadline, f"timed out waiting for {server}'s row to get its token estimate"
        await asyncio.sleep(0.05)


async def test_each_tool_and_the_list_match_an_independent_count(sidecar: SidecarClient) -> None:
    listed = await tools_of(sidecar, "basic")

    expected = {tool["name"]: definition_tokens(tool) for tool in listed["tools"]}
    assert {tool["name"]: tool["tokens"] for tool in listed["tools"]} == expected
    assert listed["tokens"] == sum(expected.values())
    assert all(n > 10 for n in expected.values())  # a name and a schema at the least


async def test_a_row_counts_the_tools_its_filters_expose_and_the_summary_adds_the_rows(sidecar: SidecarClient) -> None:
    basic = await tools_of(sidecar, "basic")
    filtered = await tools_of(sidecar, "filtered")
    assert [t["name"] for t in filtered["tools"]] == ["echo", "add"]
    exposed = sum(definition_tokens(tool) for tool in filtered["tools"])

    assert (await counted_row(sidecar, "filtered"))["tokens"] == exposed
    assert (await counted_row(sidecar, "basic"))["tokens"] == basic["tokens"]
    # The row was sent again once counted: an editor's list updates without asking.
    await sidecar.wait_for(
        lambda: any(
            r["name"] == "filtered" and r.get("tokens") == exposed for r in sidecar.notifications[methods.SERVER_STATUS]
        ),
        what="a filtered row with its estimate",
    )
    status = await sidecar.request("mcp/status")
    definition = await sidecar.request("mcp/modelTool/definition")
    own = definition_tokens({k: definition[k] for k in ("name", "description", "inputSchema")})
    assert definition["tokens"] == own
    off = next(row for row in status["servers"] if row["name"] == "off")
    assert off["tokens"] is None  # disabled: never fetched, never counted
    assert status["tokens"] == {
        "tokenizer": "llama-2-bpe",
        "allTools": basic["tokens"] + exposed,
        "counted": 2,
        "enabled": 2,
        "modelTool": own,
    }


async def test_activation_says_what_it_added_and_what_the_session_holds(sidecar: SidecarClient) -> None:
    listed = {tool["id"]: definition_tokens(tool) for tool in (await tools_of(sidecar, "basic"))["tools"]}
    session = "costs"

    first = await sidecar.request("mcp/activate", {"ids": ["basic.echo", "basic.add"], "session": session})
    added = listed["basic.echo"] + listed["basic.add"]
    assert first["tokens"] == {"added": added, "session": added}
    assert [t["tokens"] for t in first["tools"]] == [listed["basic.echo"], listed["basic.add"]]
    assert first["text"].splitlines()[-1] == f"+{added} tokens; session now {added} (estimated)"

    # Already loaded adds nothing; a new tool adds its own.
    again = await sidecar.request("mcp/activate", {"ids": ["basic.echo", "basic.cwd"], "session": session})
    total = added + listed["basic.cwd"]
    assert again["tokens"] == {"added": listed["basic.cwd"], "session": total}
    assert again["text"].splitlines()[-1] == f"+{listed['basic.cwd']} tokens; session now {total} (estimated)"

    active = await sidecar.request("mcp/activeTools", {"session": session})
    assert active["tokens"] == total
    assert {t["id"]: t["tokens"] for t in active["tools"]} == {
        i: listed[i] for i in ("basic.echo", "basic.add", "basic.cwd")
    }
    assert (await sidecar.request("mcp/activeTools", {"session": "empty"}))["tokens"] == 0

    # Nothing loaded: no figure in the text, zero added.
    missed = await sidecar.request("mcp/activate", {"ids": ["basic.nope"], "session": session})
    assert missed["tokens"] == {"added": 0, "session": total}
    assert "tokens" not in missed["text"]


async def test_discovery_candidates_say_what_activating_would_add(sidecar: SidecarClient) -> None:
    listed = {tool["id"]: definition_tokens(tool) for tool in (await tools_of(sidecar, "basic"))["tools"]}
    found = await sidecar.request("mcp/discover", {"query": "echo text", "server": "basic", "kind": "tools"})

    tools = [c for c in found["candidates"] if c["kind"] == "tool"]
    assert tools, found["text"]
    assert {c["id"]: c["tokens"] for c in tools} == {c["id"]: listed[c["id"]] for c in tools}


async def test_the_cli_prints_the_figures(tmp_path: Path) -> None:
    write_config(tmp_path, {"demo": basic_stdio(includeTools=["echo", "add"])})
    listed = await cli(tmp_path, "--json", "tools", "demo")
    tools = listed.json()["tools"]
    each = [definition_tokens(tool) for tool in tools]

    text = await cli(tmp_path, "tools", "demo")
    rows = [
        f"  demo.{t['name']}({', '.join(t['inputSchema'].get('required', []))}) · {n} tokens"
        + (f"  {t['description'].splitlines()[0]}" if t.get("description") else "")
        for t, n in zip(tools, each, strict=True)
    ]
    assert text.stdout.splitlines() == [f"demo · 2 tools (live) · {sum(each)} tokens (estimated)", *rows]
    status = await cli(tmp_path, "status")
    assert f"Tool definitions: {sum(each)} tokens (1 of 1 enabled servers counted)" in status.stdout


def kept_figures(home: Path) -> list[Path]:
    return list(home.rglob("tokens-*.json"))


async def test_a_warm_start_reads_the_figures_kept_beside_the_disk_copy(tmp_path: Path) -> None:
    write_config(tmp_path, {"basic": basic_stdio()})
    async with start_sidecar(tmp_path) as first:
        listed = await tools_of(first, "basic")
        await counted_row(first, "basic")
    assert len(kept_figures(tmp_path)) == 1

    await restart_engine(tmp_path)  # the next sidecar starts from the disk
    async with start_sidecar(tmp_path) as again:
        # The first answer already has it: read from the file, not counted (a count is in the background).
        status = await again.request("mcp/status")
        [row] = status["servers"]
        assert (row["state"], row["catalogSource"], row["tokens"]) == ("idle", "cache", listed["tokens"])
