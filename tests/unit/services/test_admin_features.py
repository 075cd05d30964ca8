"""The admin-side features built from their collaborators alone: no `Sidecar`, fake connections.

Each test wires what one feature's constructor asks for (the registry, the configuration, the
catalogs, ...) the way `services/app.py` does, and drives it; the end-to-end suites run the
same features behind the editor's methods, the CLI and `/mcp` against real servers.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import mcp_sidecar
from mcp_sidecar import tasks
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.connections.registry import ServerRegistry
from mcp_sidecar.events import EventHub
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services.auth import Auth
from mcp_sidecar.services.catalogs import Catalogs
from mcp_sidecar.services.commands import Commands
from mcp_sidecar.services.configuration import Configuration
from mcp_sidecar.services.lifecycle import Lifecycle
from mcp_sidecar.services.notifier import Notifier
from mcp_sidecar.services.offers import Offers
from mcp_sidecar.services.sessions import Sessions
from mcp_sidecar.services.status import Status
from support.fake_connection import FakeConnection, FakeFactory

PACKAGE = Path(mcp_sidecar.__file__).parent
FEATURES = ("auth", "status", "lifecycle", "approvals", "offers", "commands", "config_edits", "config_imports")
TOOL = {"name": "t", "inputSchema": {"type": "object"}}
FORM = ClientOffer(elicitation_form=True)
SAMPLING = ClientOffer(sampling=True)


class Parts:
    """The collaborators `Sidecar.__init__` builds for these features, and nothing else."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Mapping[str, Any]]] = []
        self.cleared: list[tuple[str, str]] = []
        self.hub = EventHub()
        self.factory = FakeFactory()
        self.registry = ServerRegistry(self.hub, self.factory, environ={})
        self.configuration = Configuration(
            self.registry, self.hub, workspace=None, trusted=False, interactive=False, watch_files=False, grant=False
        )
        self.catalogs = Catalogs(None, asyncio.Semaphore(4), self.hub)
        self.sessions = Sessions(self.hub, self.registry)
        self.auth = Auth(self.configuration)
        self.status = Status(self.configuration, self.registry, self.catalogs, self.sessions, self.auth)
        self.notifier = Notifier(
            lambda method, params: self.sent.append((method, params)),
            self.hub,
            self.registry,
            self.status.row,
            lambda: self.configuration.pending.values(),
            lambda: pytest.fail("a first load sends no model tool definition"),
        )
        self.lifecycle = Lifecycle(
            self.configuration,
            self.registry,
            self.catalogs,
            self.notifier,
            self.status,
            lambda server, reason: self.cleared.append((server, reason)),
        )

    def fake(self, name: str) -> FakeConnection:
        return self.factory.current(name)


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Parts:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    servers = {"s": {"command": "python3"}, "off": {"command": "python3", "disabled": True}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return Parts()


async def test_status_reads_the_registry_and_the_catalogs_without_connecting(parts: Parts) -> None:
    result = parts.status.status()

    assert [(row["name"], row["state"], row["catalog"]["tools"]) for row in result["servers"]] == [
        ("s", "idle", None),
        ("off", "disabled", None),
    ]
    assert result["trustedWorkspace"] is False
    assert parts.fake("s").state == "idle"  # a status never connects


async def test_reconnect_closes_lists_again_and_the_row_counts_the_new_catalog(parts: Parts) -> None:
    parts.configuration.ensure_loaded()
    fake = parts.fake("s")
    fake.tools = [TOOL]

    conn = await parts.lifecycle.reconnect("s")

    assert conn is fake.real
    assert (fake.closed, fake.state) == (1, "connected")
    row = parts.status.row(conn)
    assert (row["catalog"]["tools"], row["catalogSource"]) == (1, "live")
    assert parts.sent[-1] == (methods.SERVER_STATUS, row)  # the notifier saw the connection's events


async def test_refresh_refuses_a_disabled_server_and_shutdown_clears_every_servers_watches(parts: Parts) -> None:
    with pytest.raises(SidecarError) as refused:
        await parts.lifecycle.refresh("off")
    assert refused.value.diagnostic.code == "server_disabled"
    parts.fake("s").tools = [TOOL]
    refreshed = await parts.lifecycle.refresh("s")
    assert (refreshed["server"], refreshed["toolsSource"], refreshed["status"]["catalog"]["tools"]) == ("s", "live", 1)

    await parts.lifecycle.shutdown()

    assert parts.cleared == [("s", "shutdown"), ("off", "shutdown")]
    assert parts.fake("s").state == "idle"


async def test_offers_reconnect_only_the_servers_offered_less(parts: Parts) -> None:
    offers = Offers(parts.registry, parts.catalogs)
    parts.configuration.ensure_loaded()
    fake = parts.fake("s")
    fake.set_state("connected")
    fake.hooks.offer = FORM

    offers.change(FORM)  # the session was offered this already: it stays
    offers.change(ClientOffer(elicitation_form=True, sampling=True))
    await asyncio.wait_for(asyncio.gather(*(t for t in tasks.running() if t.get_name() == "offer-changed")), 10)

    assert offers.current == ClientOffer(elicitation_form=True, sampling=True)
    assert fake.closed == 1


def test_the_command_table_names_the_configured_servers_and_connects_nothing(parts: Parts) -> None:
    commands = Commands(parts.configuration, parts.registry, lambda: [])

    spec = commands.command_spec("reconnect")

    assert spec["servers"] == ["off", "s"]
    assert [entry["name"] for entry in spec["commands"]] == ["reconnect"]
    assert parts.fake("s").state == "idle"
    with pytest.raises(SidecarError) as refused:
        commands.command_spec("frobnicate")
    assert refused.value.diagnostic.code == "command_invalid"


@pytest.mark.parametrize("module", FEATURES)
def test_an_admin_feature_module_never_mentions_the_container(module: str) -> None:
    source = (PACKAGE / "services" / f"{module}.py").read_text(encoding="utf-8")
    assert re.findall(r"\bSidecar\b|\bservices\.app\b", source) == []
