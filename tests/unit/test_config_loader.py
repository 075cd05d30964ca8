from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_sidecar.config import loader
from mcp_sidecar.config.validate import ConfigProblems


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(path))
    return path


def write(path: Path, servers: dict[str, object]) -> None:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def test_demo_server_when_no_configuration_exists(home: Path, tmp_path: Path) -> None:
    config = loader.load(tmp_path, trusted=True)
    assert list(config.servers) == ["demo"]
    assert config.servers["demo"].scope == "builtin"


def test_an_empty_global_file_means_no_servers_and_no_demo(home: Path, tmp_path: Path) -> None:
    (home / "mcp.json").write_text("", encoding="utf-8")
    assert loader.load(tmp_path, trusted=False).servers == {}


def test_project_replaces_same_named_global_definition_whole(home: Path, tmp_path: Path) -> None:
    write(home / "mcp.json", {"docs": {"command": "g", "includeTools": ["a*"]}, "other": {"command": "o"}})
    project = tmp_path / "proj"
    project.mkdir()
    write(project / ".mcp.json", {"docs": {"url": "https://example.test/mcp"}})
    config = loader.load(project, trusted=True)
    assert config.servers["docs"].scope == "project"
    assert config.servers["docs"].transport == "http"
    assert config.servers["docs"].include_tools is None  # no field merge
    assert config.servers["other"].scope == "global"
    assert list(config.shadowed) == ["docs"]


def test_untrusted_project_file_is_never_read(home: Path, tmp_path: Path) -> None:
    write(home / "mcp.json", {"g": {"command": "g"}})
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text("{ this is not json", encoding="utf-8")
    config = loader.load(project, trusted=False)
    assert list(config.servers) == ["g"]
    project_file = next(f for f in config.files if f.scope == "project")
    assert (project_file.exists, project_file.read) == (True, False)


def test_invalid_json_names_file_and_position(home: Path, tmp_path: Path) -> None:
    (home / "mcp.json").write_text('{"mcpServers": {', encoding="utf-8")
    with pytest.raises(ConfigProblems) as info:
        loader.load(tmp_path, trusted=False)
    [problem] = info.value.problems
    assert str(home / "mcp.json") in problem
    assert "invalid JSON at line 1" in problem


def test_trusted_invalid_project_file_is_reported(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    write(project / ".mcp.json", {"x": {"type": "sse", "url": "https://e.test"}})
    with pytest.raises(ConfigProblems) as info:
        loader.load(project, trusted=True)
    assert "field `type`" in info.value.problems[0]
