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


def test_report_keeps_the_valid_definitions_beside_an_invalid_one(home: Path, tmp_path: Path) -> None:
    write(home / "mcp.json", {"ok": {"command": "g"}, "bad": {"command": "g", "colour": "blue"}})
    report = loader.load_report(tmp_path, trusted=False)
    assert list(report.config.servers) == ["ok"]
    assert report.problems == (
        loader.ConfigProblem(f"{home / 'mcp.json'}: server 'bad': field `colour` is not a supported field.", "bad"),
    )
    with pytest.raises(ConfigProblems) as info:
        loader.load(tmp_path, trusted=False)  # the strict form: any problem is the whole file's
    assert info.value.problems == [report.problems[0].message]


def test_report_of_a_file_that_is_not_json_keeps_the_other_files_servers(home: Path, tmp_path: Path) -> None:
    write(home / "mcp.json", {"g": {"command": "g"}})
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text("[1, 2]", encoding="utf-8")
    report = loader.load_report(project, trusted=True)
    assert list(report.config.servers) == ["g"]
    assert report.problems == (loader.ConfigProblem(f"{project / '.mcp.json'}: the top level must be a JSON object."),)


def test_an_invalid_project_definition_hides_the_global_one_it_replaces(home: Path, tmp_path: Path) -> None:
    write(home / "mcp.json", {"docs": {"command": "g"}, "other": {"command": "o"}})
    project = tmp_path / "proj"
    project.mkdir()
    write(project / ".mcp.json", {"docs": {"url": "ftp://x"}})
    report = loader.load_report(project, trusted=True)
    assert list(report.config.servers) == ["other"]
    assert report.config.shadowed == {}
    assert [p.server for p in report.problems] == ["docs"]


def test_no_demo_when_the_only_file_is_invalid(home: Path, tmp_path: Path) -> None:
    (home / "mcp.json").write_text("{", encoding="utf-8")
    report = loader.load_report(tmp_path, trusted=False)
    assert report.config.servers == {}
    assert [p.server for p in report.problems] == [None]


def test_a_relative_home_is_a_problem_and_loads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_SIDECAR_HOME", "relative")
    report = loader.load_report(tmp_path, trusted=True)
    assert (report.config.servers, report.config.files) == ({}, ())
    assert [p.message for p in report.problems] == [
        "MCP_SIDECAR_HOME must be an absolute path; a relative one is never used."
    ]
