"""The editing services in-process: scopes, duplicates, overrides, toggles, reload and imports.

No MCP server is started: editing never connects anything.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.protocol.errors import DiagnosticJson, SidecarError
from mcp_sidecar.services.app import Sidecar

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"


class Env:
    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project
        self.sent: list[tuple[str, Mapping[str, Any]]] = []

    @property
    def global_file(self) -> Path:
        return self.home / "mcp.json"

    @property
    def project_file(self) -> Path:
        return self.project / ".mcp.json"

    def write(self, path: Path, servers: dict[str, Any]) -> None:
        path.write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n", encoding="utf-8")

    def servers(self, path: Path) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]
        return data

    def app(self, trusted: bool = True) -> Sidecar:
        return Sidecar(
            lambda m, p: self.sent.append((m, p)),
            workspace=self.project,
            trusted=trusted,
            use_disk_cache=False,
            watch_config=False,
        )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    monkeypatch.setenv("DOCS_TOKEN", "value-never-written")
    return Env(home, project)


async def error_of(awaitable: Awaitable[object]) -> DiagnosticJson:
    with pytest.raises(SidecarError) as caught:
        await awaitable
    return caught.value.diagnostic.to_json()


async def test_add_saves_references_not_values_and_reloads(env: Env) -> None:
    app = env.app()
    definition = {"url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
    result = await app.config_edits.add("global", "docs", definition, replace=False)
    assert result == {
        "server": "docs",
        "scope": "global",
        "path": str(env.global_file),
        "action": "added",
        "overrides": None,
        "overriddenBy": None,
        "notes": [],
        "reload": {
            "applied": True,
            "added": ["docs"],
            "removed": ["demo"],
            "changed": [],
            "unchanged": [],
            "deactivated": [],
            "diagnostics": [],
        },
    }
    assert env.servers(env.global_file) == {"docs": definition}
    assert "value-never-written" not in env.global_file.read_text(encoding="utf-8")
    assert app.registry.connection("docs", "test").state == "idle"  # nothing connected


async def test_add_validates_resolved_values(env: Env) -> None:
    app = env.app()
    missing = {"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${NOT_SET_ANYWHERE}"}}
    diag = await error_of(app.config_edits.add("global", "docs", missing, replace=False))
    assert diag["code"] == "configuration_invalid"
    assert diag["message"] == (
        "Environment variable NOT_SET_ANYWHERE (used in `headers.Authorization`) is not set; define it first "
        "(the reference is saved, never its value)."
    )
    diag = await error_of(app.config_edits.add("global", "docs", {"url": "${DOCS_TOKEN}"}, replace=False))
    assert diag["message"] == "server 'docs': field `url` must resolve to an http(s) URL."
    diag = await error_of(app.config_edits.add("global", "bad.name", {"command": "x"}, replace=False))
    assert diag["code"] == "configuration_invalid"
    diag = await error_of(app.config_edits.add("global", "x", {"command": "x", "oauthScopes": ["read"]}, replace=False))
    assert diag["message"] == "server 'x': field `oauthScopes` requires an HTTP server."
    assert not env.global_file.exists()


async def test_secret_commands_are_saved_without_running(env: Env, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    app = env.app()
    definition = {"command": "server", "env": {"TOKEN": f"!touch {marker}; echo tok"}}
    result = await app.config_edits.add("global", "local", definition, replace=False)
    assert result["notes"] == []
    assert env.servers(env.global_file)["local"] == definition
    assert not marker.exists()


async def test_literal_values_are_flagged(env: Env) -> None:
    result = await env.app().config_edits.add(
        "global", "x", {"command": "x", "env": {"API_KEY": "sk-literal"}}, replace=False
    )
    assert result["notes"] == [
        "`env.API_KEY` holds a literal value; prefer a ${VAR} reference or a secret command (!command) for credentials."
    ]


async def test_duplicates_need_replace_which_replaces_whole(env: Env) -> None:
    env.write(env.global_file, {"docs": {"url": "https://old.example/mcp", "includeTools": ["a*"]}})
    app = env.app()
    diag = await error_of(app.config_edits.add("global", "docs", {"url": "https://new.example/mcp"}, replace=False))
    assert diag["code"] == "server_exists"
    assert diag["message"] == (
        "A server named 'docs' is already defined in the global configuration; pass --replace to replace it."
    )
    diag = await error_of(app.config_edits.add("project", "docs", {"url": "https://new.example/mcp"}, replace=False))
    assert diag["message"] == (
        "A server named 'docs' is already defined in the global configuration; pass --replace to replace it "
        "(or override it)."
    )
    assert not env.project_file.exists()
    result = await app.config_edits.add("global", "docs", {"url": "https://new.example/mcp"}, replace=True)
    assert result["action"] == "replaced"
    assert env.servers(env.global_file) == {"docs": {"url": "https://new.example/mcp"}}  # no field merge
    assert result["reload"]["changed"] == ["docs"]


async def test_overrides_in_either_direction_are_reported(env: Env) -> None:
    env.write(env.global_file, {"docs": {"url": "https://global.example/mcp"}})
    app = env.app()
    result = await app.config_edits.add("project", "docs", {"url": "https://project.example/mcp"}, replace=True)
    assert (result["action"], result["overrides"], result["overriddenBy"]) == ("added", "global", None)
    assert app.registry.connection("docs", "test").config.scope == "project"
    result = await app.config_edits.add("global", "docs", {"url": "https://global2.example/mcp"}, replace=True)
    assert (result["action"], result["overrides"], result["overriddenBy"]) == ("replaced", None, "project")
    assert result["notes"] == [
        "The project definition of 'docs' takes precedence; this global one applies only without it."
    ]
    assert app.registry.connection("docs", "test").config.url == "https://project.example/mcp"  # the override stays


async def test_remove_reports_the_remaining_scope_and_absent_names_change_nothing(env: Env) -> None:
    env.write(env.global_file, {"docs": {"url": "https://g.example/mcp"}, "other": {"command": "o"}})
    env.write(env.project_file, {"docs": {"url": "https://p.example/mcp"}})
    app = env.app()
    result = await app.config_edits.remove("project", "docs")
    assert (result["remaining"], result["notes"]) == (
        "global",
        ["OAuth credentials are kept; run `logout docs` to remove them."],
    )
    assert env.servers(env.project_file) == {}  # the file is kept, empty
    assert app.registry.connection("docs", "test").config.scope == "global"
    before = (env.global_file.read_bytes(), env.project_file.read_bytes())
    diag = await error_of(app.config_edits.remove("project", "docs"))
    assert diag == {
        "code": "server_not_found",
        "operation": "remove",
        "server": "docs",
        "message": f"No server named 'docs' in the project configuration ({env.project_file}); nothing was changed.",
        "hint": "Check the server name with mcp/status; names are case-sensitive.",
    }
    assert (env.global_file.read_bytes(), env.project_file.read_bytes()) == before
    result = await app.config_edits.remove("global", "other")
    assert (result["remaining"], result["notes"]) == (None, [])


async def test_toggles_prefer_the_project_file_and_repeat_without_writing(env: Env) -> None:
    env.write(env.global_file, {"docs": {"url": "https://g.example/mcp"}, "g": {"command": "g"}})
    env.write(env.project_file, {"docs": {"url": "https://p.example/mcp"}})
    app = env.app()
    result = await app.config_edits.set_enabled("docs", False)
    assert (result["scope"], result["changed"], result["path"]) == ("project", True, str(env.project_file))
    assert env.servers(env.project_file)["docs"]["disabled"] is True
    assert "disabled" not in env.servers(env.global_file)["docs"]
    assert app.registry.connection("docs", "test").state == "disabled"
    snapshot = env.project_file.read_bytes()
    again = await app.config_edits.set_enabled("docs", False)
    assert again["changed"] is False
    assert env.project_file.read_bytes() == snapshot
    result = await app.config_edits.set_enabled("g", False)
    assert result["scope"] == "global"
    diag = await error_of(app.config_edits.set_enabled("nope", True))
    assert diag["message"] == "No configuration file defines a server named 'nope'."


async def test_untrusted_projects_are_never_edited_or_read(env: Env) -> None:
    env.write(env.global_file, {"docs": {"url": "https://g.example/mcp"}})
    env.write(env.project_file, {"docs": {"url": "https://p.example/mcp"}})
    snapshot = env.project_file.read_bytes()
    app = env.app(trusted=False)
    diag = await error_of(app.config_edits.add("project", "x", {"command": "x"}, replace=False))
    assert diag["code"] == "project_untrusted"
    result = await app.config_edits.set_enabled("docs", False)
    assert result["scope"] == "global"
    diag = await error_of(app.config_imports.import_servers(".mcp.json", "global", None, False, False))
    assert diag["code"] == "project_untrusted"
    # The target scope is refused before the file to import is even read (it does not exist).
    diag = await error_of(app.config_imports.import_servers("missing.json", "project", None, False, False))
    assert diag["code"] == "project_untrusted"
    assert env.project_file.read_bytes() == snapshot


async def test_builtin_demo_is_not_in_any_file(env: Env) -> None:
    diag = await error_of(env.app().config_edits.set_enabled("demo", False))
    assert diag["message"] == "Server 'demo' is built in, not defined in a configuration file."


async def test_same_file_refuses_every_scoped_edit(env: Env) -> None:
    env.write(env.global_file, {"docs": {"url": "https://g.example/mcp"}})
    env.project_file.symlink_to(env.global_file)
    app = env.app()
    for attempt in (
        app.config_edits.add("global", "x", {"command": "x"}, replace=False),
        app.config_edits.remove("project", "docs"),
        app.config_edits.set_enabled("docs", False),
        app.config_imports.import_servers(str(SAMPLES / "vscode_settings.json"), "global", ("memory",), True, False),
    ):
        assert (await error_of(attempt))["code"] == "config_conflict"
    assert env.servers(env.global_file) == {"docs": {"url": "https://g.example/mcp"}}


async def test_invalid_configuration_keeps_the_previous_setup(env: Env) -> None:
    env.write(env.global_file, {"docs": {"url": "https://g.example/mcp"}})
    app = env.app()
    app.ensure_loaded()
    env.global_file.write_text('{"mcpServers": {"docs": {"url": 5}}}', encoding="utf-8")
    diag = await error_of(app.config_edits.reload())
    assert diag["code"] == "configuration_invalid"
    assert diag["message"].startswith("The configuration is invalid; the previous setup stays in use: ")
    assert "server 'docs': field `url` must be a non-empty string." in diag["message"]
    assert app.registry.connection("docs", "test").config.url == "https://g.example/mcp"
    env.write(env.global_file, {"docs": {"url": "https://g.example/mcp"}, "new": {"command": "n"}})
    summary = await app.config_edits.reload()
    assert (summary["added"], summary["unchanged"]) == (["new"], ["docs"])


async def test_import_preview_hides_values_and_confirm_writes_the_selection(env: Env) -> None:
    app = env.app()
    path = str(SAMPLES / "claude_desktop_config.json")
    preview = await app.config_imports.import_servers(path, "global", None, False, False)
    assert "INLINECANARY" not in json.dumps(preview)
    assert not env.global_file.exists()
    github = next(s for s in preview["servers"] if s["name"] == "github")
    assert github == {
        "name": "github",
        "transport": "stdio",
        "importable": True,
        "selected": False,
        "connection": {
            "command": "hidden",
            "args": "hidden (6 values)",
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "hidden"},
        },
        "disabled": False,
        "inlineValues": ["env.GITHUB_PERSONAL_ACCESS_TOKEN"],
        "placeholders": [],
        "problems": [],
        "notes": [],
        "alreadyDefined": [],
    }
    diag = await error_of(app.config_imports.import_servers(path, "global", None, True, False))
    assert diag["code"] == "invalid_params"
    diag = await error_of(app.config_imports.import_servers(path, "global", ("nope",), True, False))
    assert (diag["code"], diag["message"]) == ("import_invalid", "The file defines no server named 'nope'.")
    diag = await error_of(app.config_imports.import_servers(path, "global", ("price$tracker",), True, False))
    assert diag["code"] == "import_invalid"
    result = await app.config_imports.import_servers(path, "global", ("github",), True, False)
    assert (result["written"], result["imported"]) == (True, ["github"])
    assert list(env.servers(env.global_file)) == ["github"]
    assert env.servers(env.global_file)["github"]["env"] == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_INLINECANARY0123456789"
    }
    assert app.registry.connection("github", "test").state == "idle"
    diag = await error_of(app.config_imports.import_servers(path, "global", ("github", "filesystem"), True, False))
    assert diag["code"] == "server_exists"
    assert list(env.servers(env.global_file)) == ["github"]  # all or nothing
    again = await app.config_imports.import_servers(path, "project", None, False, False)
    assert next(s for s in again["servers"] if s["name"] == "github")["alreadyDefined"] == ["global"]
