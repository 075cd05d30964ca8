"""Tools whose input schemas nest 150, 900 or 5,000 levels (issue 31, item 13).

The SDK's parser stops near 200 levels, so such an answer used to be dropped unread and
`mcp/server/tools` waited for its time limit (`timeout`, "not loaded" on activation). Now the
message is read with its deepest values left out, each deep tool is refused on its own with
`catalog_entry_invalid` saying why, and the ordinary tool beside them works. The server's time
limit is set short, so an answer that waited for it fails the test instead of passing late.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from support.servers import fixture_stdio, http_server
from support.sidecar import SidecarClient, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

LEVELS = (150, 900, 5000)
WHY = (
    'The server\'s tool "deep_{}" nests objects and arrays more than 64 levels deep (its schema or metadata); '
    "the tool is left out."
)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def sidecar(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SidecarClient]:
    home = tmp_path_factory.mktemp("home")
    server = fixture_stdio("deep_schema.py", protocol="legacy", timeoutMs=4000)
    write_config(home, {"deep": server})
    async with start_sidecar(home) as client:
        yield client


async def test_the_deep_tools_are_refused_one_by_one_and_the_rest_is_kept(sidecar: SidecarClient) -> None:
    listed = await sidecar.request("mcp/server/tools", {"server": "deep"})
    assert [t["name"] for t in listed["tools"]] == ["plain"]
    refused = {r["name"]: r["diagnostic"] for r in listed["refused"]}
    assert list(refused) == [f"deep_{n}" for n in LEVELS]
    for n in LEVELS:
        assert refused[f"deep_{n}"]["code"] == "catalog_entry_invalid"
        assert refused[f"deep_{n}"]["message"] == WHY.format(n)


async def test_activation_says_why_and_the_ordinary_tool_runs(sidecar: SidecarClient) -> None:
    activated = await sidecar.request("mcp/activate", {"ids": ["deep.deep_900", "deep.plain"]})
    results = {r["id"]: r for r in activated["results"]}
    assert results["deep.plain"]["status"] == "loaded"
    assert results["deep.deep_900"]["status"] == "not loaded"
    assert results["deep.deep_900"]["diagnostic"]["message"] == WHY.format(900)
    called = await sidecar.request("mcp/callTool", {"id": "deep.plain", "arguments": {}})
    assert called["isError"] is False


async def test_discovery_names_the_refusals_in_its_text(sidecar: SidecarClient) -> None:
    found = await sidecar.request("mcp/discover", {"query": "tool", "server": "deep"})
    assert [c["id"] for c in found["candidates"] if c["kind"] == "tool"] == ["deep.plain"]
    assert '3 tools nested more than 64 levels deep: "deep_150", "deep_900", "deep_5000"' in found["text"]


@pytest.mark.parametrize("sse", [False, True], ids=["json", "events"])
async def test_over_http_too_only_the_deep_tools_are_refused(
    tmp_path_factory: pytest.TempPathFactory, sse: bool
) -> None:
    """A JSON body, or a server-sent event whose data spans lines: read with its deepest values left out."""
    home = tmp_path_factory.mktemp("home-http")
    with http_server("deep_schema.py", *(["--sse"] if sse else [])) as url:
        write_config(home, {"deep": {"url": url, "protocol": "legacy", "timeoutMs": 4000}})
        async with start_sidecar(home) as client:
            listed = await client.request("mcp/server/tools", {"server": "deep"})
            assert [t["name"] for t in listed["tools"]] == ["plain"]
            refused = {r["name"]: r["diagnostic"]["message"] for r in listed["refused"]}
            assert refused == {f"deep_{n}": WHY.format(n) for n in LEVELS}
            called = await client.request("mcp/callTool", {"id": "deep.plain", "arguments": {}, "activate": True})
            assert called["isError"] is False
