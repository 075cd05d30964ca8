"""The discovery-side features built from their own dependencies, without a `Sidecar`.

Each feature's constructor names what it uses; here they are wired by hand over one registry of
fake connections (`support/fake_connection.py`), as `services/app.py` wires them for real, and
each does its job: activation and discovery share the catalogs and the sessions, a prompt is
previewed and handed over once, a watch reports an update once.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import mcp_sidecar
from mcp_sidecar.connections.registry import ServerRegistry
from mcp_sidecar.events import EventHub, ResourceUpdated
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services.activation import Activation
from mcp_sidecar.services.catalogs import Catalogs
from mcp_sidecar.services.configuration import Configuration
from mcp_sidecar.services.discovery import Discovery
from mcp_sidecar.services.prompts import Prompts
from mcp_sidecar.services.sessions import Sessions
from mcp_sidecar.services.watches import Watches
from support.fake_connection import FakeFactory

ECHO = {"name": "echo", "description": "Echo the text back.", "inputSchema": {"type": "object"}}
GREET = {"name": "greet", "description": "A greeting.", "arguments": [{"name": "who", "required": True}]}


@dataclass
class Parts:
    """What app.py builds first: the features' dependencies."""

    hub: EventHub
    factory: FakeFactory
    registry: ServerRegistry
    configuration: Configuration
    catalogs: Catalogs
    sessions: Sessions


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Parts:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    servers = {"a": {"command": "python3"}, "b": {"command": "python3"}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    hub = EventHub()
    factory = FakeFactory()
    registry = ServerRegistry(hub, factory, environ={})
    configuration = Configuration(
        registry, hub, workspace=None, trusted=False, interactive=True, watch_files=False, grant=False
    )
    configuration.ensure_loaded()
    factory.current("a").tools = [dict(ECHO)]
    factory.current("b").prompts = [dict(GREET)]
    catalogs = Catalogs(None, asyncio.Semaphore(4), hub)
    return Parts(hub, factory, registry, configuration, catalogs, Sessions(hub, registry))


def activation_of(p: Parts) -> Activation:
    return Activation(p.configuration, p.registry, p.catalogs, p.sessions)


async def test_activation_loads_a_tool_into_one_session_only(parts: Parts) -> None:
    activation = activation_of(parts)
    result = await activation.activate(("a.echo", "a.nope"), "one")
    assert [(r["id"], r["status"]) for r in result["results"]] == [("a.echo", "loaded"), ("a.nope", "not loaded")]
    assert [t["id"] for t in activation.active_tools("one")["tools"]] == ["a.echo"]
    assert activation.active_tools("two")["tools"] == []


async def test_discovery_ranks_the_tool_and_marks_it_loaded_in_the_session_that_activated_it(parts: Parts) -> None:
    activation = activation_of(parts)
    discovery = Discovery(parts.configuration, parts.registry, parts.catalogs, parts.sessions, activation)
    await activation.activate(("a.echo",), "one")
    for session, loaded in (("one", True), ("two", False)):
        found = await discovery.discover("echo text", "tools", session_id=session)
        assert [(c["server"], c["name"], c.get("loaded")) for c in found["candidates"]] == [("a", "echo", loaded)]


async def test_a_prompt_preview_is_handed_over_once(parts: Parts) -> None:
    prompts = Prompts(parts.configuration, parts.registry, parts.catalogs, parts.hub)
    with pytest.raises(SidecarError) as missing:
        await prompts.preview("b", "greet", {})
    assert missing.value.diagnostic.code == "prompt_invalid"
    previewed = await prompts.preview("b", "greet", {"who": "you"})
    assert len(prompts) == 1
    used = prompts.use(previewed["previewId"])
    assert used["accepted"] is True
    assert [m["content"]["text"] for m in used["messages"]] == ["hi"]
    assert len(prompts) == 0
    with pytest.raises(SidecarError) as again:
        prompts.use(previewed["previewId"])
    assert again.value.diagnostic.code == "preview_not_found"


async def test_a_watch_reports_the_first_update_and_coalesces_the_rest(parts: Parts) -> None:
    sent: list[tuple[str, Any]] = []
    watches = Watches(
        lambda method, params: sent.append((method, params)), parts.hub, parts.configuration, parts.registry
    )
    created = await watches.subscribe("a", "file:///x")
    assert created["created"] is True
    fake = parts.factory.current("a")
    assert fake.subscribed == ["file:///x"]
    for _ in range(2):
        fake.announce(ResourceUpdated(fake.real, "file:///x"))
    assert sent == [(methods.RESOURCE_UPDATED, {"server": "a", "uri": "file:///x", "changed": True})]
    assert watches.list()["watches"][0]["updates"] == 2


async def test_watches_refuse_a_client_that_is_not_interactive(parts: Parts) -> None:
    parts.configuration.interactive = False
    watches = Watches(lambda method, params: None, parts.hub, parts.configuration, parts.registry)
    with pytest.raises(SidecarError) as refused:
        await watches.subscribe("a", "file:///x")
    assert refused.value.diagnostic.code == "interactive_required"
    assert parts.factory.current("a").subscribed == []


FEATURE_MODULES = ("activation", "completion", "discovery", "model_tool", "prompts", "reading", "watches")


@pytest.mark.parametrize("module", FEATURE_MODULES)
def test_a_feature_module_never_names_the_container(module: str) -> None:
    """Its constructor names what it uses: not `Sidecar`, not even for types."""
    source = (Path(mcp_sidecar.__file__).parent / "services" / f"{module}.py").read_text(encoding="utf-8")
    assert re.findall(r"\bSidecar\b|\bservices\.app\b|\bapp: ", source) == []
