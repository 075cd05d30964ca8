"""`ServerConnection` (connections/protocol.py): the real connection and the tests' fake both are one.

mypy checks the two assignments below (no cast anywhere); the test checks that neither lacks a
member at run time, where a Protocol is not enforced.
"""

from __future__ import annotations

from pathlib import Path

from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections.connection import Connection
from mcp_sidecar.connections.protocol import ServerConnection
from support.fake_connection import FakeConnection


def test_a_connection_and_the_fake_have_every_member_of_server_connection(tmp_path: Path) -> None:
    config = ServerConfig(name="s", scope="global", transport="stdio", command="x")
    real: ServerConnection = Connection(config, tmp_path, lambda event: None, environ={})  # mypy checks this assignment
    fake: ServerConnection = FakeConnection(config, tmp_path, lambda event: None)
    members = [name for name in vars(ServerConnection) if not name.startswith("_")]

    assert len(members) >= 20
    assert [m for m in members if not hasattr(real, m)] == []
    assert [m for m in members if not hasattr(fake, m)] == []
