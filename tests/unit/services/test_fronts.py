"""`mcp/status` shows the engine (issue 33): the clients attached through its fronts, each one's kind and
workspace, which one is asking, and per server how many clients share its connection; in a process of
its own, no engine and every server used by one client."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mcp_sidecar.services.client_context import ClientContext
from mcp_sidecar.services.fronts import EngineInfo, Front, Fronts, serving
from mcp_sidecar.services.user_state import UserState
from support.fake_connection import FakeFactory

STARTED = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers = {"g": {"command": "python3"}, "alone": {"command": "python3", "shared": False}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return home


def client(user: UserState, workspace: Path) -> ClientContext:
    context = ClientContext(user, lambda method, params: None, environ={}, workspace=workspace, watch_config=False)
    context.configuration.ensure_loaded()
    return context


def shared_by(context: ClientContext) -> dict[str, int]:
    return {row["name"]: row["sharedBy"] for row in context.status.status()["servers"]}


def test_a_process_of_its_own_has_no_engine_and_one_client_per_server(home: Path, tmp_path: Path) -> None:
    user = UserState(FakeFactory(), use_disk_cache=False)
    with serving(Front("lsp", STARTED)):  # a front without an engine: nothing to show
        alone = client(user, tmp_path)

    result = alone.status.status()

    assert result["engine"] is None
    assert shared_by(alone) == {"g": 1, "alone": 1}


def test_the_engine_lists_its_fronts_clients_and_marks_the_one_asking(home: Path, tmp_path: Path) -> None:
    user = UserState(FakeFactory(), use_disk_cache=False)
    user.engine = EngineInfo(4242, "9.9.9", time.time() - 3600)
    editor_ws, host_ws = tmp_path / "editor", tmp_path / "host"
    with serving(Front("lsp", STARTED)):
        editor = client(user, editor_ws)
    with serving(Front("mcp", STARTED + 5)):
        host = client(user, host_ws)
    with serving(Front("cli", STARTED + 9)):
        run = client(user, tmp_path)

    engine = host.status.status()["engine"]

    assert engine is not None
    assert (engine["pid"], engine["version"]) == (4242, "9.9.9")
    assert engine["uptimeSeconds"] >= 3600
    assert engine["clients"] == [
        {"kind": "lsp", "workspace": str(editor_ws), "since": "2026-01-01T00:00:00Z", "thisClient": False},
        {"kind": "mcp", "workspace": str(host_ws), "since": "2026-01-01T00:00:05Z", "thisClient": True},
        {"kind": "cli", "workspace": str(tmp_path), "since": "2026-01-01T00:00:09Z", "thisClient": False},
    ]
    # Untrusted workspaces all run global servers in the config directory: one connection for the
    # three of them; a server that is not shared serves each alone.
    assert shared_by(editor) == shared_by(host) == shared_by(run) == {"g": 3, "alone": 1}

    run.close()  # the CLI run is done

    after = editor.status.status()
    assert after["engine"] is not None
    assert [(c["kind"], c["thisClient"]) for c in after["engine"]["clients"]] == [("lsp", True), ("mcp", False)]
    assert shared_by(editor) == {"g": 2, "alone": 1}


def test_a_clients_workspace_is_read_as_it_is_now(home: Path, tmp_path: Path) -> None:
    user = UserState(FakeFactory(), use_disk_cache=False)
    user.engine = EngineInfo(1, "1", STARTED)
    with serving(Front("lsp", STARTED)):
        editor = client(user, tmp_path)
    opened = tmp_path / "opened"
    editor.configuration.configure(opened, trusted=False, interactive=True)  # the editor's `initialize`

    engine = editor.status.status()["engine"]

    assert engine is not None
    assert [c["workspace"] for c in engine["clients"]] == [str(opened)]


def test_a_client_built_outside_any_front_is_not_listed() -> None:
    fronts = Fronts()
    fronts.attach("client-1", lambda: None)
    with serving(Front("lsp", STARTED)):
        fronts.attach("client-2", lambda: None)
    fronts.attach("client-3", lambda: None)  # the front's block is over

    status = fronts.status(EngineInfo(7, "1.0", STARTED), "client-2", now=STARTED + 185.9)

    assert status == {
        "pid": 7,
        "version": "1.0",
        "since": "2026-01-01T00:00:00Z",
        "uptimeSeconds": 185,
        "clients": [{"kind": "lsp", "workspace": None, "since": "2026-01-01T00:00:00Z", "thisClient": True}],
    }
