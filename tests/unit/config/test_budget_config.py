"""`sessionBudget` in the config files: its fields, a trusted project's over the global's, and a sentence
per invalid field (naming the file and the field, never the value) with that limit off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.config import budget, loader
from mcp_sidecar.config.budget import Budget


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(path))
    return path


def write(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "s"}}, **document}), encoding="utf-8")


def test_absent_is_off() -> None:
    read = budget.parse_budget({"mcpServers": {}}, "f.json")
    assert read.budget.off
    assert read.problems == ()


def test_both_fields_and_null() -> None:
    read = budget.parse_budget({"sessionBudget": {"maxTools": 12, "maxTokens": None}}, "f.json")
    assert read.budget == Budget(12, None)
    assert read.problems == ()


@pytest.mark.parametrize("value", [0, -3, 1001, 2.5, "7", True])
def test_a_bad_tool_count_is_named_and_off(value: Any) -> None:
    read = budget.parse_budget({"sessionBudget": {"maxTools": value, "maxTokens": 800}}, "f.json")
    assert read.budget == Budget(None, 800)
    assert read.problems == (
        "f.json: `sessionBudget.maxTools` must be a whole number from 1 to 1,000 (or null: no limit); "
        "that limit is off.",
    )


def test_not_an_object_and_unknown_fields() -> None:
    assert budget.parse_budget({"sessionBudget": 5}, "f.json").problems == (
        "f.json: `sessionBudget` must be a JSON object (`maxTools`, `maxTokens`).",
    )
    read = budget.parse_budget({"sessionBudget": {"maxTool": 5, "maxTokens": 90}}, "f.json")
    assert read.budget == Budget(None, 90)
    assert read.problems == ("f.json: `sessionBudget` has an unsupported field (it takes `maxTools` and `maxTokens`).",)


def test_a_trusted_project_s_fields_over_the_global_s(home: Path, tmp_path: Path) -> None:
    write(home / "mcp.json", {"sessionBudget": {"maxTools": 10, "maxTokens": 5000}})
    project = tmp_path / "proj"
    project.mkdir()
    write(project / ".mcp.json", {"sessionBudget": {"maxTools": 4}})
    assert loader.load(project, trusted=True).budget == Budget(4, 5000)
    assert loader.load(project, trusted=False).budget == Budget(10, 5000)  # an untrusted file is never read


def test_a_bad_field_leaves_the_servers_valid(home: Path, tmp_path: Path) -> None:
    write(home / "mcp.json", {"sessionBudget": {"maxTokens": "lots"}})
    report = loader.load_report(tmp_path, trusted=False)
    assert report.problems == ()
    assert list(report.config.servers) == ["s"]
    assert report.config.budget.off
    assert report.budget_problems == (
        f"{home / 'mcp.json'}: `sessionBudget.maxTokens` must be a whole number from 1 to 10,000,000 "
        "(or null: no limit); that limit is off.",
    )
