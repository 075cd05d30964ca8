"""The service functions the gateway's face calls, without a process: a durable session's restore,
dropping tools whose definition changed, and every enabled server's prompts and resources.

The end-to-end tests (`tests/e2e/test_gateway.py`) drive the same paths through a real host and
real servers; here each rule is checked on its own against fake connections.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog.documents import canonical
from mcp_sidecar.events import ToolsDeactivated
from mcp_sidecar.protocol.errors import SidecarError, fail
from mcp_sidecar.services.app import Sidecar
from support.fake_connection import FakeFactory

ECHO = {"name": "echo", "description": "Echo the text.", "inputSchema": {"type": "object"}}
ADD = {"name": "add", "description": "Add two numbers.", "inputSchema": {"type": "object"}}
OTHER = {"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}


@pytest.fixture
def factory() -> FakeFactory:
    return FakeFactory()


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: FakeFactory) -> Sidecar:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    servers = {
        "a": {"command": "python3"},
        "b": {"command": "python3"},
        "off": {"command": "python3", "disabled": True},
    }
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    sidecar = Sidecar(lambda m, p: None, use_disk_cache=False, watch_config=False, connection_factory=factory)
    sidecar.ensure_loaded()
    factory.current("a").tools = [dict(ECHO), dict(ADD)]
    factory.current("b").tools = [dict(OTHER)]
    return sidecar


def dropped(app: Sidecar) -> list[ToolsDeactivated]:
    seen: list[ToolsDeactivated] = []
    app.hub.subscribe(ToolsDeactivated, seen.append)
    return seen


def changed_on_the_server(factory: FakeFactory, name: str, tools: list[dict[str, Any]]) -> None:
    """The server now lists `tools`, and its change notice came (the next live need lists again)."""
    fake = factory.current(name)
    fake.tools = tools
    fake.tools_stale = True


async def test_a_restore_activates_the_saved_tools_but_not_those_changed_gone_or_unknown(app: Sidecar) -> None:
    saved = {
        "a.echo": canonical(ECHO),
        "a.add": canonical({**ADD, "description": "What it was when saved."}),
        "a.gone": "whatever",
        "nowhere.tool": "whatever",
    }
    events = dropped(app)
    lost = await app.activation.restore("durable", saved, lambda text: text, "gateway")
    assert list(app.sessions.active("durable")) == ["a.echo"]
    assert lost == ["a.gone", "nowhere.tool", "a.add"]  # not loaded first, then changed since
    assert [(e.session, e.removed, e.reason) for e in events] == [("durable", ("a.add",), "tool changed")]


async def test_a_restore_of_nothing_changed_keeps_every_tool(app: Sidecar) -> None:
    saved = {"a.echo": canonical(ECHO), "b.ping": canonical(OTHER)}
    assert await app.activation.restore("durable", saved, lambda text: text, "gateway") == []
    assert sorted(app.sessions.active("durable")) == ["a.echo", "b.ping"]


async def test_a_changed_catalog_drops_its_changed_and_removed_tools_from_each_session(
    app: Sidecar, factory: FakeFactory
) -> None:
    for session in ("one", "two", "three"):
        await app.activation.activate(("a.echo", "a.add", "b.ping"), session)
    changed_on_the_server(factory, "a", [{**ADD, "description": "Adds, differently."}])
    conn = app.registry.connection("a", "test")
    await app.activation.deactivate_changed(conn, ["one", "two"], "gateway")
    assert list(app.sessions.active("one")) == list(app.sessions.active("two")) == ["b.ping"]
    assert list(app.sessions.active("three")) == ["a.echo", "a.add", "b.ping"]  # not asked about


async def test_a_server_that_cannot_list_now_drops_nothing(
    app: Sidecar, factory: FakeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    await app.activation.activate(("a.echo",), "one")
    fake = factory.current("a")
    fake.tools_stale = True

    async def down(operation: str) -> list[dict[str, Any]]:
        raise fail("connection_failed", operation, "The server is down.", "a")

    monkeypatch.setattr(fake, "list_tools", down)
    await app.activation.deactivate_changed(app.registry.connection("a", "test"), ["one"], "gateway")
    assert list(app.sessions.active("one")) == ["a.echo"]  # a call re-validates it


async def test_a_listed_tools_call_refused_as_changed_leaves_the_session(app: Sidecar, factory: FakeFactory) -> None:
    for session in ("editor", "host"):
        await app.activation.activate(("a.add",), session)
    changed_on_the_server(factory, "a", [{**ADD, "description": "Adds, differently."}])
    with pytest.raises(SidecarError) as editor:
        await app.activation.call_tool("a.add", {}, "editor")
    changed_on_the_server(factory, "a", [{**ADD, "description": "Adds, differently."}])
    with pytest.raises(SidecarError) as host:
        await app.activation.call_listed_tool("a.add", {}, "host")
    assert editor.value.diagnostic.code == host.value.diagnostic.code == "tool_changed"
    assert list(app.sessions.active("editor")) == ["a.add"]  # an editor's discovery marks it changed
    assert list(app.sessions.active("host")) == []


async def test_every_enabled_servers_prompts_are_listed_and_one_that_cannot_list_has_none(
    app: Sidecar, factory: FakeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    factory.current("a").prompts = [{"name": "review", "arguments": [{"name": "file", "required": True}]}]
    factory.current("off").prompts = [{"name": "hidden"}]

    async def down(operation: str) -> list[dict[str, Any]]:
        raise fail("connection_failed", operation, "The server is down.", "b")

    monkeypatch.setattr(factory.current("b"), "list_prompts", down)
    listed = await app.prompts.enabled_prompts("gateway")
    assert listed == [("a", [{"name": "review", "arguments": [{"name": "file", "required": True}]}]), ("b", [])]


async def test_every_enabled_servers_resource_catalog_is_listed_and_one_that_cannot_list_is_left_out(
    app: Sidecar, factory: FakeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def listed(operation: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return [{"uri": "file:///notes.txt", "name": "notes"}], [{"uriTemplate": "file:///{name}", "name": "any"}]

    async def down(operation: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        raise fail("connection_failed", operation, "The server is down.", "b")

    monkeypatch.setattr(factory.current("a"), "list_resources", listed)
    monkeypatch.setattr(factory.current("b"), "list_resources", down)
    catalogs = await app.reading.enabled_resource_catalogs("gateway")
    assert [(server, catalog.items, catalog.templates) for server, catalog in catalogs] == [
        ("a", [{"uri": "file:///notes.txt", "name": "notes"}], [{"uriTemplate": "file:///{name}", "name": "any"}])
    ]
