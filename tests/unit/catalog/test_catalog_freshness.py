"""2026-07-28 cache hints in the catalogs: how long a copy is used, and what may go to disk.

`fold` is checked on its own; the catalogs service against a fake connection whose lists carry
the hints a server sent, with a real disk cache in a temporary directory. The end-to-end tests
(`tests/e2e/test_cache_hints.py`) do the same with a real modern server.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog.disk_cache import TTL_SECONDS, ToolCache
from mcp_sidecar.catalog.freshness import MAX_FRESH_S, CacheHints, combine, fold, fresh_for, may_keep_on_disk
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.events import EventHub
from mcp_sidecar.services.catalogs import MEMORY_TTL_SECONDS, Catalogs, tools_need_fetch
from support.fake_connection import FakeConnection

TOOL = {"name": "t", "inputSchema": {"type": "object"}}


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ([(None, None)], None),
        ([(None, None), (None, None)], None),
        ([(60_000, "public")], CacheHints(60_000, True)),
        ([(60_000, "public"), (5_000, "public")], CacheHints(5_000, True)),
        ([(60_000, "public"), (60_000, "private")], CacheHints(60_000, False)),
        # The SDK's (and the specification's) defaults when the author set no hints: no hint.
        ([(0, "private")], None),
        ([(None, "private")], None),
        ([(60_000, "public"), (0, "private")], None),
        ([(60_000, None)], CacheHints(60_000, False)),
        ([(None, "public")], CacheHints(0, True)),
        ([(-5, "public")], CacheHints(0, True)),
    ],
)
def test_a_lists_hints_are_its_shortest_ttl_and_public_only_if_every_page_is(
    pages: list[tuple[int | None, str | None]], expected: CacheHints | None
) -> None:
    assert fold(pages) == expected


def test_a_positive_ttl_replaces_the_default_up_to_24_hours() -> None:
    assert fresh_for(None, 300) == 300
    assert fresh_for(CacheHints(0, True), 300) == 300  # 0 promises nothing: the sidecar's own rule
    assert fresh_for(CacheHints(1_500, True), 300) == 1.5
    assert fresh_for(CacheHints(3_600_000, False), 300) == 3600
    assert fresh_for(CacheHints(10**12, True), math.inf) == MAX_FRESH_S == TTL_SECONDS
    assert combine(CacheHints(9_000, True), None, CacheHints(1_000, False)) == CacheHints(1_000, False)
    assert combine(None, None) is None
    assert [may_keep_on_disk(h) for h in (None, CacheHints(0, True), CacheHints(9, False))] == [True, True, False]


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.cache = ToolCache(tmp_path / "catalogs")
        self.catalogs = Catalogs(self.cache, asyncio.Semaphore(4), EventHub())
        config = ServerConfig(name="modern", scope="global", transport="stdio", command="server")
        self.fake = FakeConnection(config, tmp_path, lambda event: None)
        self.fake.tools = [TOOL]
        self.listed = 0
        listing = self.fake.list_tools

        async def counted(operation: str) -> list[dict[str, Any]]:
            self.listed += 1
            return await listing(operation)

        self.fake.list_tools = counted  # type: ignore[method-assign]

    def files(self) -> list[dict[str, Any]]:
        directory = self.cache.directory
        return [json.loads(p.read_text(encoding="utf-8")) for p in directory.iterdir()] if directory.exists() else []

    async def tools(self) -> Any:
        return await self.catalogs.tool_catalog(self.fake.real, "discover")


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


async def test_a_private_list_is_never_written_and_no_older_copy_stays(env: Env) -> None:
    await env.tools()
    assert [f["freshS"] for f in env.files()] == [TTL_SECONDS]  # no hints (handshake era): 24 hours
    env.fake.lists.hints["tools"] = CacheHints(3_600_000, shared=False)
    env.fake.generation += 1  # reconnected (now in the modern era, say): listed again, private now
    catalog = await env.tools()
    assert env.listed == 2
    assert env.files() == []
    assert catalog.fresh_s == 3600  # in memory, for its TTL


async def test_a_public_list_goes_to_disk_for_its_ttl(env: Env) -> None:
    env.fake.lists.hints["tools"] = CacheHints(600_000, shared=True)
    catalog = await env.tools()
    [stored] = env.files()
    assert (stored["freshS"], stored["fetchedAt"]) == (600, catalog.fetched_at)


async def test_a_ttl_of_zero_keeps_the_sidecars_own_rules(env: Env) -> None:
    env.fake.lists.hints["tools"] = CacheHints(0, shared=True)
    catalog = await env.tools()
    assert catalog.fresh_s == math.inf  # kept current by change notices, as without hints
    assert [f["freshS"] for f in env.files()] == [TTL_SECONDS]
    await env.tools()
    assert env.listed == 1


async def test_a_copy_past_its_ttl_is_listed_again_on_next_use(env: Env) -> None:
    env.fake.lists.hints["tools"] = CacheHints(60_000, shared=True)
    first = await env.tools()
    assert await env.tools() is first
    assert not tools_need_fetch(first, env.fake.real, live=False)
    first.fetched_at -= 61  # as if a minute had passed
    assert tools_need_fetch(first, env.fake.real, live=False)
    second = await env.tools()
    assert (second is not first, env.listed) == (True, 2)


async def test_a_disk_copy_expires_in_memory_at_its_own_ttl(env: Env) -> None:
    env.fake.lists.hints["tools"] = CacheHints(60_000, shared=True)
    await env.tools()
    env.catalogs.drop(env.fake.real, "tools")
    env.fake.state = "idle"  # a new sidecar would start from the disk copy, unconnected
    cached = env.catalogs.cached_tools(env.fake.real)
    assert cached is not None
    assert (cached.source, cached.fresh_s) == ("cache", 60)
    cached.fetched_at -= 61
    assert env.catalogs.cached_tools(env.fake.real) is not cached  # dropped from memory, read again
    # ... and the file itself is served for 60 s only.
    key = env.catalogs.key(env.fake.real)
    assert env.cache.load(key, now=cached.fetched_at + 61 + 59) is not None
    assert env.cache.load(key, now=cached.fetched_at + 61 + 61) is None


async def test_resource_and_prompt_copies_live_for_their_ttl(env: Env) -> None:
    env.fake.lists.hints["resources"] = CacheHints(20_000, shared=False)
    env.fake.lists.hints["resource templates"] = CacheHints(30_000, shared=False)
    env.fake.lists.hints["prompts"] = CacheHints(7_200_000, shared=True)
    resources = await env.catalogs.resource_catalog(env.fake.real, "discover")
    prompts = await env.catalogs.prompt_catalog(env.fake.real, "discover")
    assert (resources.fresh_s, prompts.fresh_s) == (20, 7200)
    env.fake.lists.hints.clear()
    env.catalogs.drop(env.fake.real)
    assert (await env.catalogs.prompt_catalog(env.fake.real, "discover")).fresh_s == MEMORY_TTL_SECONDS
