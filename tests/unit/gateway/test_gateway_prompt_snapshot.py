"""The prompts a gateway listed at its last start: kept, read back only for the same servers, sanitised."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.gateway.hosts import Host
from mcp_sidecar.gateway.prompt_snapshot import PromptSnapshot
from mcp_sidecar.gateway.run import gateway_app
from mcp_sidecar.services.app import Sidecar
from support.sidecar import write_config

ENTRY = {
    "name": "docs__triage",
    "description": "[docs] Triage an issue.",
    "arguments": [{"name": "issue", "required": True}],
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(path))
    write_config(path, {"docs": {"command": "docs-server"}})
    return path


@pytest.fixture
def app(home: Path, tmp_path: Path) -> Sidecar:
    app = gateway_app(tmp_path, trust_project=False)
    app.ensure_loaded()
    return app


def _file(home: Path) -> Path:
    [path] = (home / "cache" / "gateway-prompts").iterdir()
    return path


def test_what_was_saved_is_listed_at_the_next_start(app: Sidecar, home: Path) -> None:
    PromptSnapshot(app).save("handshake", [ENTRY])
    again = PromptSnapshot(app)
    assert again.listed(modern=False) == [ENTRY]
    assert again.listed(modern=True) == []  # each era's form is its own
    assert _file(home).stat().st_mode & 0o777 == 0o600


def test_a_snapshot_of_other_servers_is_not_used(app: Sidecar, home: Path, tmp_path: Path) -> None:
    PromptSnapshot(app).save("handshake", [ENTRY])
    write_config(home, {"docs": {"command": "docs-server", "args": ["--other"]}})
    changed = gateway_app(tmp_path, trust_project=False)
    changed.ensure_loaded()
    assert PromptSnapshot(changed).listed(modern=False) == []


def test_a_day_old_snapshot_is_not_used(app: Sidecar, home: Path) -> None:
    PromptSnapshot(app).save("handshake", [ENTRY])
    data = json.loads(_file(home).read_text())
    data["savedAt"] = time.time() - 25 * 3600
    _file(home).write_text(json.dumps(data))
    assert PromptSnapshot(app).listed(modern=False) == []


def test_a_planted_snapshot_reaches_no_host_as_it_is(app: Sidecar, home: Path) -> None:
    PromptSnapshot(app).save("handshake", [ENTRY])
    data = json.loads(_file(home).read_text())
    hostile: list[Any] = [
        {"name": "docs__x\u202e", "description": "\x1b[2Jhi\u200b", "arguments": [{"name": "a", "title": "t\x07"}]},
        {"name": 3},
        "not an entry",
        {"name": "docs__y", "arguments": [{"no": "name"}]},
    ]
    data["lists"]["handshake"] = hostile
    _file(home).write_text(json.dumps(data))
    listed = PromptSnapshot(app).listed(modern=False)
    assert len(listed) == 1
    text = json.dumps(listed, ensure_ascii=False)
    for hidden in ("\u202e", "\x1b", "\u200b", "\x07"):
        assert hidden not in text


@pytest.mark.parametrize("content", [b"", b"not json", b"[1, 2]", b'{"v": 1, "key": 3}'])
def test_a_damaged_snapshot_means_no_prompts_yet(app: Sidecar, home: Path, content: bytes) -> None:
    PromptSnapshot(app).save("handshake", [ENTRY])
    _file(home).write_bytes(content)
    assert PromptSnapshot(app).listed(modern=False) == []


async def test_a_host_that_leaves_releases_an_activation_waiting_for_its_list() -> None:
    async def told() -> None:
        return None

    host = Host("gateway-1", told)
    waiting = asyncio.ensure_future(host.listed_since(host.listings, 60))
    await asyncio.sleep(0)
    host.gone()
    assert await asyncio.wait_for(waiting, 5) is False
    host.listed()
    assert await host.listed_since(0, 60) is True  # already listed since: no wait
