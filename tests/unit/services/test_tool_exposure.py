"""`services/exposure.py`: what every tool of a client's searched servers costs (the profile's only, enabled
only), counted by the tokenizer or, without it, by characters / 4; the rule and the reason a total moved."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mcp_sidecar.catalog import token_count
from mcp_sidecar.protocol.errors import SidecarError, diagnostic
from mcp_sidecar.protocol.params import ProfileParams
from mcp_sidecar.services.client_context import ClientContext
from mcp_sidecar.services.exposure import FALLBACK, Measure, ServerCost, fallback_tokens, lists_all, what_changed
from mcp_sidecar.services.user_state import UserState
from support.fake_connection import FakeConnection, FakeFactory

TOOLS = {
    "github": [
        {"name": "list_pull_requests", "description": "List pull requests.", "inputSchema": {"type": "object"}},
        {"name": "merge", "description": "Merge one pull request.", "inputSchema": {"type": "object"}},
    ],
    "linear": [{"name": "search", "description": "Search issues.", "inputSchema": {"type": "object"}}],
    "off": [{"name": "never", "description": "A disabled server's tool.", "inputSchema": {"type": "object"}}],
}


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ClientContext:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers: dict[str, dict[str, object]] = {name: {"command": "python3", "args": [name]} for name in TOOLS}
    servers["off"]["disabled"] = True
    servers["github"]["excludeTools"] = ["merge"]
    profiles = {"linear-only": {"servers": ["linear"]}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers, "profiles": profiles}), encoding="utf-8")
    context = ClientContext(
        UserState(FakeFactory(), use_disk_cache=False), lambda m, p: None, environ={}, workspace=tmp_path
    )
    context.configuration.ensure_loaded()
    for server, tools in TOOLS.items():
        conn = context.registry.get(server)
        assert isinstance(conn, FakeConnection)
        conn.tools = list(tools)
    return context


async def test_every_enabled_servers_visible_tools_count_by_the_tokenizer(client: ClientContext) -> None:
    counter = token_count.load_counter()
    assert counter is not None
    measured = await client.exposure.measure()
    assert [(c.server, c.tools) for c in measured.servers] == [("github", 1), ("linear", 1)]  # filters, disabled
    assert measured.tokens == counter.tool(TOOLS["github"][0]) + counter.tool(TOOLS["linear"][0])
    assert measured.counted_by == token_count.TOKENIZER
    assert [(server, d["name"]) for server, d, _ in client.exposure.tools()] == [
        ("github", "list_pull_requests"),
        ("linear", "search"),
    ]


async def test_a_profile_counts_its_servers_only(client: ClientContext) -> None:
    await client.profiles.profile(ProfileParams("linear-only", True, "s"))
    measured = await client.exposure.measure()
    assert [c.server for c in measured.servers] == ["linear"]


async def test_without_the_tokenizer_a_definition_counts_its_characters_over_four(
    client: ClientContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_tokenizer(*args: object) -> None:
        return None

    monkeypatch.setattr(client.user.catalogs, "tool_tokens", no_tokenizer)
    measured = await client.exposure.measure()
    assert measured.counted_by == FALLBACK
    expected = sum(math.ceil(len(token_count.definition_text(d)) / 4) for d in (TOOLS["github"][0], TOOLS["linear"][0]))
    assert measured.tokens == expected
    assert fallback_tokens({"name": "abcd"}) == math.ceil(len('{"name":"abcd"}') / 4)


async def test_a_server_whose_catalog_cannot_be_had_counts_nothing_and_is_named(
    client: ClientContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = client.registry.get("linear")
    assert isinstance(conn, FakeConnection)

    async def refused(operation: str) -> list[dict[str, object]]:
        raise SidecarError(diagnostic("connection_failed", operation, "The server could not be started.", "linear"))

    monkeypatch.setattr(conn, "list_tools", refused)
    measured = await client.exposure.measure()
    assert [c.server for c in measured.servers] == ["github"]
    assert measured.unavailable == ("linear",)


def test_the_rule_and_the_reason() -> None:
    assert lists_all("auto", 4000, 4000)
    assert not lists_all("auto", 4001, 4000)
    assert lists_all("all", 10**6, 0)
    assert not lists_all("search", 0, 4000)
    before = Measure((ServerCost("a", 2, 100), ServerCost("b", 1, 50)), (), token_count.TOKENIZER)
    after = Measure((ServerCost("a", 3, 160), ServerCost("c", 60, 5000)), (), token_count.TOKENIZER)
    assert what_changed(before, after) == "a now 3 tools (+60 tokens); c added (60 tools, 5,000 tokens); b gone"
    assert what_changed(before, before) == "no server changed"
