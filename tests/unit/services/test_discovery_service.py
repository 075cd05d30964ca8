"""Discovery's pure parts, and tool catalog caching, without a subprocess."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog.candidates import DESCRIPTION_CHARS, short
from mcp_sidecar.catalog.disk_cache import TTL_SECONDS
from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.output.discovery_text import NOTHING_MATCHES, Scope, nothing_matches, render
from mcp_sidecar.protocol.errors import diagnostic
from mcp_sidecar.protocol.results import Unavailable
from mcp_sidecar.services.app import Sidecar

TOOLS: list[dict[str, Any]] = [{"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}]


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sidecar:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers = {"s": {"command": str(tmp_path / "never-run")}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    sidecar = Sidecar(lambda method, params: None, workspace=tmp_path)
    sidecar.ensure_loaded()
    return sidecar


def test_a_disk_copy_is_served_from_memory_then_expires_there_too(app: Sidecar) -> None:
    conn = app.registry.connection("s", "test")
    assert app.catalogs.cache is not None
    fetched = time.time() - TTL_SECONDS + 60
    app.catalogs.cache.store(app.catalogs.key(conn), "s", TOOLS, fetched)
    catalog = app.catalogs.cached_tools(conn)
    assert catalog is not None
    assert (catalog.source, catalog.descriptors, catalog.fetched_at) == ("cache", TOOLS, fetched)
    assert app.catalogs.cached_tools(conn) is catalog  # memory now
    # The sidecar ran past the 24 hours: memory and disk copies are both too old now.
    expired = time.time() - TTL_SECONDS - 1
    catalog.fetched_at = expired
    app.catalogs.cache.store(app.catalogs.key(conn), "s", TOOLS, expired)
    assert app.catalogs.cached_tools(conn) is None
    assert app.registry.key("s") not in app.catalogs.tools


def test_a_live_copy_is_not_subject_to_the_disk_expiry(app: Sidecar) -> None:
    conn = app.registry.connection("s", "test")
    live = ToolCatalog("s", TOOLS, source="live", generation=1, fetched_at=time.time() - 2 * TTL_SECONDS)
    app.catalogs.tools[app.registry.key("s")] = live
    assert app.catalogs.cached_tools(conn) is live


def test_no_disk_cache_means_memory_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "x"}}}), encoding="utf-8")
    sidecar = Sidecar(lambda method, params: None, use_disk_cache=False)
    sidecar.ensure_loaded()
    assert sidecar.catalogs.cached_tools(sidecar.registry.connection("s", "test")) is None
    assert not (tmp_path / "cache").exists()


def test_status_counts_are_null_until_fetched(app: Sidecar) -> None:
    row = app.status.row(app.registry.connection("s", "test"))
    assert (row["catalog"], row["catalogSource"]) == (
        {"tools": None, "resources": None, "templates": None, "prompts": None},
        None,
    )
    app.catalogs.tools[app.registry.key("s")] = ToolCatalog("s", TOOLS, source="cache", generation=0)
    row = app.status.row(app.registry.connection("s", "test"))
    assert (row["catalog"]["tools"], row["catalogSource"]) == (1, "cache")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, ""),
        ("", ""),
        ("  One line.  ", "One line."),
        ("First paragraph\nwraps here.\n\nSecond paragraph.", "First paragraph wraps here."),
        ("word " * 100, ("word " * 31).strip() + "…"),
    ],
    ids=["none", "empty", "strip", "first-paragraph", "cut-at-a-word"],
)
def test_short_descriptions(text: str | None, expected: str) -> None:
    assert short(text) == expected
    assert len(short(text)) <= DESCRIPTION_CHARS


def test_render_lists_unavailable_servers_after_candidates() -> None:
    unavailable: list[Unavailable] = [
        {
            "server": "jira",
            "kind": "tools",
            "diagnostic": diagnostic("timeout", "mcp/discover", "The server did not answer in time.", "jira").to_json(),
        }
    ]
    assert render("q", [], unavailable) == "\n".join(
        [
            'mcp discover "q"',
            " (no matching candidates)",
            " ✘ jira tools unavailable: [timeout] The server did not answer in time.",
        ]
    )


def test_render_quotes_the_query_as_json() -> None:
    assert render('say "hi"', [], []).splitlines()[0] == 'mcp discover "say \\"hi\\""'


async def test_no_model_name_is_parsed_when_no_server_names_meet_at_double_underscore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collision check costs nothing unless two server names meet at `__` (`a` and `a__b`)."""
    from mcp_sidecar.services import discovery

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    never = str(tmp_path / "never-run")
    servers = {"alpha": {"command": never}, "alpha_b": {"command": never}, "beta__x": {"command": never}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    app = Sidecar(lambda method, params: None, workspace=tmp_path, use_disk_cache=False)
    app.ensure_loaded()
    for name in servers:
        app.catalogs.tools[app.registry.key(name)] = ToolCatalog(name, TOOLS, source="cache", generation=0)

    def parsed(*_: Any) -> Any:
        raise AssertionError("a model name was parsed")

    monkeypatch.setattr(discovery, "tool_refs", parsed)
    found = await app.discovery.discover("echo", "tools", limit=10)
    assert sorted(c["server"] for c in found["candidates"]) == sorted(servers)
    assert found["refused"] == []


def test_the_next_step_when_nothing_fits_widens_a_narrowed_search_first() -> None:
    assert nothing_matches(Scope()) == NOTHING_MATCHES
    assert "use your other tools, or tell the user" in NOTHING_MATCHES
    assert nothing_matches(Scope(server="git", kind="tools")) == (
        "Nothing in git fits: query again without `server` to search every server."
    )
    assert nothing_matches(Scope(kind="resources")) == (
        'Nothing among the resources fits: query again with `kind: "all"`, or in other words.'
    )
    # A server name is shown on one line, whatever it holds.
    assert "\n" not in nothing_matches(Scope(server="a\nb"))


TWIN_TOOLS: list[dict[str, Any]] = [
    {"name": "create_issue", "description": "Open a new issue in the tracker.", "inputSchema": {"type": "object"}},
    {"name": "add_comment", "description": "Add a comment to an existing issue.", "inputSchema": {"type": "object"}},
    {"name": "list_labels", "description": "List the labels an issue can carry.", "inputSchema": {"type": "object"}},
]


@pytest.mark.parametrize(("setting", "rewritten"), [(None, False), ("0", False), ("1", True)])
async def test_discovery_rewrites_a_request_only_when_the_environment_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, rewritten: bool
) -> None:
    """The query rewrite (issue 34) is opt-in: `MCP_SIDECAR_REWRITE=1`, read at each discovery."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    if setting is None:
        monkeypatch.delenv("MCP_SIDECAR_REWRITE", raising=False)
    else:
        monkeypatch.setenv("MCP_SIDECAR_REWRITE", setting)
    never = str(tmp_path / "never-run")
    servers = {"alpha": {"command": never}, "beta": {"command": never}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    app = Sidecar(lambda method, params: None, workspace=tmp_path, use_disk_cache=False)
    app.ensure_loaded()
    for name in servers:
        app.catalogs.tools[app.registry.key(name)] = ToolCatalog(name, TWIN_TOOLS, source="cache", generation=0)
    request = "in beta, open a new issue about the crash and then add a comment to it for the team"
    found = await app.discovery.discover(request, "tools", limit=2)
    chosen = {(c["server"], c["name"]) for c in found["candidates"]}
    # Twins tie without the rewrite and alpha comes first; naming beta ranks its tools within it.
    assert (chosen == {("beta", "create_issue"), ("beta", "add_comment")}) is rewritten
