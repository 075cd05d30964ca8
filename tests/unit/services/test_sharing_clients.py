"""Clients with different configurations on one user's state (issue 33's sharing rule): each sees
only its own servers, and one client's reload, trust or events never reach another's sessions,
previews or notifications."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services.client_context import ClientContext
from mcp_sidecar.services.sessions import ActiveTool
from mcp_sidecar.services.user_state import UserState
from support.fake_connection import FakeConnection, FakeFactory

PROMPT = {"name": "greet", "arguments": []}
TOOL = {"name": "echo", "inputSchema": {"type": "object"}}


class Client:
    def __init__(self, user: UserState, workspace: Path, trusted: bool) -> None:
        self.sent: list[tuple[str, Mapping[str, Any]]] = []
        self.context = ClientContext(
            user,
            lambda method, params: self.sent.append((method, params)),
            environ={},
            workspace=workspace,
            trusted=trusted,
            interactive=True,
            watch_config=False,
            approve_project=trusted,
        )
        self.context.configuration.ensure_loaded()

    def conn(self, name: str) -> FakeConnection:
        conn = self.context.connection(name, "test")
        assert isinstance(conn, FakeConnection)
        return conn

    def methods(self) -> list[str]:
        return [method for method, _ in self.sent]


class Setup:
    def __init__(self, home: Path, workspace: Path) -> None:
        self.home = home
        self.factory = FakeFactory()
        self.user = UserState(self.factory, use_disk_cache=False)
        self.trusted = Client(self.user, workspace, trusted=True)
        self.untrusted = Client(self.user, workspace, trusted=False)

    def write_global(self, servers: dict[str, Any]) -> None:
        (self.home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    home, workspace = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    workspace.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers = {"g": {"command": "python3"}, "h": {"command": "python3", "args": ["h"]}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    project = {"mcpServers": {"proj": {"command": "python3", "args": ["proj.py"]}}}
    (workspace / ".mcp.json").write_text(json.dumps(project), encoding="utf-8")
    return Setup(home, workspace)


def test_an_untrusted_client_never_reaches_the_trusted_clients_project_server(setup: Setup) -> None:
    proj = setup.trusted.conn("proj")
    assert proj.config.scope == "project"

    with pytest.raises(SidecarError) as refused:
        setup.untrusted.context.connection("proj", "get")
    assert refused.value.diagnostic.code == "server_not_found"
    untrusted = setup.untrusted.context
    assert proj not in list(untrusted.registry)
    assert "proj" not in untrusted.registry.names()
    assert [row["name"] for row in untrusted.status.status()["servers"]] == ["g", "h"]
    proj.set_state("connected")
    assert methods.SERVER_STATUS not in setup.untrusted.methods()  # nor hears of it


def test_a_trusted_workspace_and_an_untrusted_one_run_global_servers_apart(setup: Setup) -> None:
    # A trusted workspace runs global servers in the workspace; an untrusted one in the config directory.
    assert setup.trusted.conn("g") is not setup.untrusted.conn("g")
    assert setup.trusted.conn("g").workspace != setup.untrusted.conn("g").workspace


def test_clients_of_equal_configuration_share_and_hear_only_their_connections(setup: Setup) -> None:
    other = Client(setup.user, setup.untrusted.context.configuration.workspace or Path(), trusted=False)
    assert other.conn("g") is setup.untrusted.conn("g")
    setup.trusted.sent.clear()
    setup.untrusted.sent.clear()

    other.conn("g").set_state("connected")

    assert other.methods() == setup.untrusted.methods() == [methods.SERVER_STATUS]
    assert setup.trusted.methods() == []


def test_a_server_not_shared_serves_one_client(setup: Setup) -> None:
    setup.write_global({"g": {"command": "python3", "shared": False}, "h": {"command": "python3", "args": ["h"]}})
    workspace = setup.untrusted.context.configuration.workspace or Path()
    one, two = (Client(setup.user, workspace, trusted=False) for _ in range(2))

    assert one.conn("g") is not two.conn("g")
    assert one.conn("h") is two.conn("h")


async def test_one_clients_reload_leaves_the_others_previews_and_active_tools(setup: Setup) -> None:
    workspace = setup.untrusted.context.configuration.workspace or Path()
    mine, theirs = setup.untrusted, Client(setup.user, workspace, trusted=False)
    shared = theirs.conn("g")
    assert mine.conn("g") is shared
    shared.prompts = [PROMPT]
    preview = await theirs.context.prompts.preview("g", "greet", {})
    tool = ActiveTool("g", "echo", dict(TOOL), "{}", shared.config.fingerprint())
    theirs.context.sessions.activate("default", "g.echo", tool)
    theirs.sent.clear()

    setup.write_global({"g": {"command": "python3", "args": ["changed"]}, "h": {"command": "python3", "args": ["h"]}})
    summary = await mine.context.configuration.reload(close_all=True)

    assert summary.changed == ["g"]
    assert mine.conn("g") is not shared
    assert theirs.conn("g") is shared
    assert shared.closed == 0
    assert list(theirs.context.sessions.active("default")) == ["g.echo"]
    assert theirs.context.prompts.use(preview["previewId"])["accepted"] is True
    # No tools deactivated and no state change for this client: only its row's sharers, now itself.
    assert [(m, p["name"], p["sharedBy"]) for m, p in theirs.sent] == [(methods.SERVER_STATUS, "g", 1)]


async def test_a_client_leaving_closes_only_what_nobody_else_uses(setup: Setup) -> None:
    workspace = setup.untrusted.context.configuration.workspace or Path()
    extra = Client(setup.user, workspace, trusted=False)
    shared, own = extra.conn("g"), setup.trusted.conn("proj")

    closing = setup.trusted.context.close()

    assert own in closing
    assert shared not in closing
    assert setup.untrusted.conn("g") is shared
