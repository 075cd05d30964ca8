"""Profiles in the configuration files: their validation (problems naming the profile and what it names),
the merge of the global and a trusted project file, and the approval gate for a project's profiles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.config import loader
from mcp_sidecar.config.profiles import parse_profiles
from mcp_sidecar.services.configuration import Configuration
from mcp_sidecar.services.user_state import UserState
from support.fake_connection import FakeFactory

SERVERS = {"github": {"command": "gh-mcp"}, "linear": {"url": "https://linear.example/mcp"}}
REVIEW = {"servers": ["github", "linear"], "activate": ["github.list_pull_requests"]}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def write(path: Path, servers: dict[str, Any], profiles: Any = None) -> None:
    document: dict[str, Any] = {"mcpServers": servers}
    if profiles is not None:
        document["profiles"] = profiles
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_valid_profile_is_read_with_its_servers_and_tools(home: Path) -> None:
    write(home / "mcp.json", SERVERS, {"review": REVIEW, "all": {"activate": ["linear.search"]}})
    report = loader.load_report(None, trusted=False)
    assert report.profile_problems == ()
    review = report.config.profiles["review"]
    assert (review.scope, review.servers, review.activate) == (
        "global",
        ("github", "linear"),
        ("github.list_pull_requests",),
    )
    assert report.config.profiles["all"].servers is None  # no `servers`: every server
    assert review.searches("linear")
    assert not review.searches("other")


@pytest.mark.parametrize(
    ("definition", "problem"),
    [
        ({"servers": []}, "field `servers` must be a non-empty list of server names."),
        ({"servers": ["a.b"]}, "field `servers` must be a non-empty list of server names."),
        ({"servers": ["github", "github"]}, "field `servers` must not repeat a server."),
        ({"activate": ["no-dot"]}, "field `activate` must be a list of exact tool ids (server.tool)."),
        ({"activate": "github.x"}, "field `activate` must be a list of exact tool ids (server.tool)."),
        ({"description": 3}, "field `description` must be a string."),
        ({"tools": []}, "field 'tools' is not a supported field."),
        ([], "the definition must be a JSON object."),
    ],
)
def test_each_bad_field_is_a_problem_naming_the_profile_and_the_field(definition: Any, problem: str) -> None:
    read = parse_profiles({"profiles": {"review": definition}}, "global", "/x/mcp.json")
    assert read.profiles == {}
    assert read.broken == {"review"}
    assert read.problems == [f"/x/mcp.json: profile 'review': {problem}"]


def test_profiles_that_are_not_an_object_and_bad_names_are_problems() -> None:
    assert parse_profiles({"profiles": []}, "global", "f").problems == [
        "f: `profiles` must be a JSON object of named profiles."
    ]
    read = parse_profiles({"profiles": {"a b": {}}}, "global", "f")
    assert read.problems == [  # a name a file chose that is no name is described, not repeated
        "f: profile with a 3-character name (not shown): the name must be 1 to 64 letters, digits, `_` or `-` "
        "(no dots or spaces)."
    ]


def test_a_missing_server_or_tool_server_is_named_and_only_that_profile_is_left_out(home: Path) -> None:
    profiles = {
        "review": {"servers": ["github", "jira"]},
        "tools": {"activate": ["slack.post"]},
        "narrow": {"servers": ["github"], "activate": ["linear.search"]},
        "fine": {"servers": ["github"]},
    }
    write(home / "mcp.json", SERVERS, profiles)
    report = loader.load_report(None, trusted=False)
    path = home / "mcp.json"
    assert sorted(report.profile_problems) == sorted(
        [
            f"{path}: profile 'review': `servers` names server 'jira', which is not configured.",
            f"{path}: profile 'tools': `activate` names tool 'slack.post', whose server is not configured.",
            f"{path}: profile 'narrow': `activate` names tool 'linear.search', whose server 'linear' "
            "is not in `servers`.",
        ]
    )
    assert list(report.config.profiles) == ["fine"]
    assert report.problems == ()  # the servers' setup stays valid: a profile never breaks it
    assert sorted(report.config.servers) == ["github", "linear"]


def test_a_server_with_an_invalid_definition_counts_as_configured(home: Path) -> None:
    write(home / "mcp.json", {**SERVERS, "broken": {"command": 3}}, {"p": {"servers": ["broken"]}})
    report = loader.load_report(None, trusted=False)
    assert report.profile_problems == ()  # the definition's own problem says what is wrong
    assert [p.server for p in report.problems] == ["broken"]


def test_a_trusted_project_profile_replaces_the_global_one_and_an_untrusted_one_is_never_read(
    home: Path, project: Path
) -> None:
    write(home / "mcp.json", SERVERS, {"review": REVIEW, "global-only": {"servers": ["github"]}})
    write(project / ".mcp.json", {}, {"review": {"servers": ["linear"]}, "mine": {"servers": ["linear"]}})
    trusted = loader.load_report(project, trusted=True).config.profiles
    assert trusted["review"].scope == "project"
    assert trusted["review"].servers == ("linear",)
    assert trusted["review"].activate == ()  # replaced whole, no field merge
    assert sorted(trusted) == ["global-only", "mine", "review"]
    untrusted = loader.load_report(project, trusted=False).config.profiles
    assert sorted(untrusted) == ["global-only", "review"]
    assert untrusted["review"].scope == "global"


def test_an_invalid_project_profile_hides_the_global_one_of_its_name(home: Path, project: Path) -> None:
    write(home / "mcp.json", SERVERS, {"review": REVIEW})
    write(project / ".mcp.json", {}, {"review": {"servers": "github"}})
    report = loader.load_report(project, trusted=True)
    assert "review" not in report.config.profiles
    assert len(report.profile_problems) == 1


def configuration(project: Path, grant: bool = False) -> Configuration:
    user = UserState(FakeFactory(), use_disk_cache=False)
    from mcp_sidecar.connections.registry import ServerRegistry

    registry = ServerRegistry(user.hub, shared=user.registry, client=user.clients.new_id(), environ={})
    return Configuration(
        registry,
        user.hub,
        workspace=project,
        trusted=True,
        interactive=True,
        watch_files=False,
        grant=grant,
        held=user.held_approvals,
    )


def test_a_project_profile_waits_for_approval_like_a_definition(home: Path, project: Path) -> None:
    write(home / "mcp.json", SERVERS)
    write(project / ".mcp.json", {}, {"review": REVIEW})
    cfg = configuration(project)
    cfg.ensure_loaded()
    assert cfg.profiles["review"].approval_required
    pending = cfg.pending["profile:review"]
    assert (pending.change, pending.transport) == ("new", "profile")
    assert pending.summary == "profile: searches github, linear; activates github.list_pull_requests"
    cfg.profile_name = "review"
    assert cfg.profile() is None  # not usable until approved: every server is searched
    assert cfg.searches("linear")
    assert cfg.searches("github")
    assert [d.code for d in cfg.profile_diagnostics()] == ["trust_required"]


def test_a_grant_approves_the_profiles_present_and_a_later_change_waits_again(home: Path, project: Path) -> None:
    write(home / "mcp.json", SERVERS)
    write(project / ".mcp.json", {}, {"review": REVIEW})
    granted = configuration(project, grant=True)
    granted.ensure_loaded()
    assert not granted.profiles["review"].approval_required
    assert [p.server for p in granted.granted] == ["profile:review"]

    write(project / ".mcp.json", {}, {"review": {**REVIEW, "servers": ["github"], "activate": []}})
    later = configuration(project)
    later.ensure_loaded()
    assert later.profiles["review"].approval_required
    assert later.pending["profile:review"].change == "changed"
    assert later.pending["profile:review"].changed_fields == ("servers", "activate")


def test_the_chosen_profile_narrows_what_the_client_searches(home: Path, project: Path) -> None:
    write(home / "mcp.json", {**SERVERS, "slack": {"command": "s"}}, {"review": REVIEW})
    cfg = configuration(project)
    cfg.ensure_loaded()
    assert cfg.searches("slack")
    cfg.profile_name = "review"
    assert cfg.profile() is not None
    assert [cfg.searches(s) for s in ("github", "linear", "slack")] == [True, True, False]
    cfg.profile_name = "gone"
    assert cfg.searches("slack")  # never a silent empty set: a diagnostic instead
    assert [(d.code, d.message) for d in cfg.profile_diagnostics()] == [
        ("profile_not_found", "Profile 'gone' is not defined (or is invalid), so every server is searched.")
    ]
