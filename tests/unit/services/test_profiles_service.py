"""`mcp/profile` on one user's state: a profile is one client's (another client of the same engine keeps
searching every server), choosing one activates its tools and drops those of servers it leaves out, and
a tool it names that does not activate is a diagnostic naming it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.protocol.params import ProfileParams
from mcp_sidecar.services.client_context import ClientContext
from mcp_sidecar.services.user_state import UserState
from support.fake_connection import FakeConnection, FakeFactory

TOOLS = {
    "github": [{"name": "list_pull_requests", "inputSchema": {"type": "object"}}],
    "linear": [{"name": "search", "inputSchema": {"type": "object"}}],
    "slack": [{"name": "post", "inputSchema": {"type": "object"}}],
}
PROFILES = {
    "review": {"servers": ["github", "linear"], "activate": ["github.list_pull_requests"]},
    "chat": {"servers": ["slack"], "activate": ["slack.post", "slack.nope"]},
}


class Client:
    def __init__(self, user: UserState, workspace: Path) -> None:
        self.sent: list[tuple[str, Mapping[str, Any]]] = []
        self.context = ClientContext(
            user,
            lambda method, params: self.sent.append((method, params)),
            environ={},
            workspace=workspace,
            watch_config=False,
        )
        self.context.configuration.ensure_loaded()
        for server, tools in TOOLS.items():
            conn = self.context.connection(server, "test")
            assert isinstance(conn, FakeConnection)
            conn.tools = list(tools)

    async def choose(self, name: str | None, session: str = methods.DEFAULT_SESSION) -> Any:
        return await self.context.profiles.profile(ProfileParams(name, True, session))

    def directory(self) -> list[str]:
        return [entry["name"] for entry in self.context.model_tool.directory()]


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> UserState:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers = {name: {"command": "python3", "args": [name]} for name in TOOLS}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers, "profiles": PROFILES}), encoding="utf-8")
    return UserState(FakeFactory(), use_disk_cache=False)


async def test_choosing_a_profile_activates_its_tools_and_narrows_only_this_client(
    user: UserState, tmp_path: Path
) -> None:
    mine, theirs = Client(user, tmp_path), Client(user, tmp_path)
    done = await mine.choose("review")

    assert done["profile"]["name"] == "review"
    assert done["changed"] is True
    assert [r["status"] for r in done["activation"]["results"]] == ["loaded"]
    assert list(mine.context.sessions.active(methods.DEFAULT_SESSION)) == ["github.list_pull_requests"]
    assert mine.directory() == ["github", "linear"]
    assert mine.context.status.status()["profile"] == "review"
    assert ("mcp/modelToolChanged" in [m for m, _ in mine.sent]) is True
    # The other window of the same engine: its own profile (none), every server, nothing activated.
    assert theirs.directory() == ["github", "linear", "slack"]
    assert theirs.context.status.status()["profile"] is None
    assert dict(theirs.context.sessions.active(methods.DEFAULT_SESSION)) == {}


async def test_a_server_outside_the_profile_is_not_activated(user: UserState, tmp_path: Path) -> None:
    client = Client(user, tmp_path)
    await client.choose("review")
    done = await client.context.activation.activate(("slack.post",), methods.DEFAULT_SESSION)
    row = done["results"][0]
    assert row["status"] == "not loaded"
    assert row["reason"] == "Server 'slack' is not in profile 'review'."
    assert row["diagnostic"]["code"] == "not_in_profile"


async def test_switching_drops_tools_the_new_profile_leaves_out_and_names_a_tool_that_did_not_load(
    user: UserState, tmp_path: Path
) -> None:
    client = Client(user, tmp_path)
    await client.choose("review")
    done = await client.choose("chat")

    assert done["deactivated"] == ["github.list_pull_requests"]
    assert ("mcp/activeToolsChanged", {"session": "default", "removed": ["github.list_pull_requests"],
            "reason": "profile changed"}) in client.sent  # fmt: skip
    assert list(client.context.sessions.active(methods.DEFAULT_SESSION)) == ["slack.post"]
    missing = [d for d in done["diagnostics"] if d["code"] == "tool_not_found"]
    assert [d["message"] for d in missing] == [
        "Profile 'chat' names tool 'slack.nope', which was not activated: Server 'slack' has no tool named 'nope'."
    ]
    assert missing[0]["server"] == "slack"
    assert "! Profile 'chat' names tool 'slack.nope'" in done["text"]

    cleared = await client.choose(None)
    assert cleared["profile"] is None
    assert cleared["deactivated"] == []
    assert client.directory() == ["github", "linear", "slack"]
    assert cleared["diagnostics"] == []


async def test_an_unknown_profile_is_refused_naming_the_defined_ones(user: UserState, tmp_path: Path) -> None:
    client = Client(user, tmp_path)
    with pytest.raises(SidecarError) as refused:
        await client.choose("revew")
    assert refused.value.diagnostic.code == "profile_not_found"
    assert refused.value.diagnostic.message == "No profile named 'revew' (defined: chat, review)."
    assert client.context.configuration.profile_name is None


async def test_showing_changes_nothing_and_lists_the_profiles(user: UserState, tmp_path: Path) -> None:
    client = Client(user, tmp_path)
    shown = await client.context.profiles.profile(ProfileParams(None, False, methods.DEFAULT_SESSION))
    assert shown["profile"] is None
    assert shown["changed"] is False
    assert [p["name"] for p in shown["profiles"]] == ["chat", "review"]
    assert shown["text"].splitlines()[0] == "Profile: none (every server is searched)"
    assert "  review [global]: searches github, linear; activates github.list_pull_requests" in shown["text"]


async def test_a_reload_that_changes_the_chosen_profile_applies_at_once(user: UserState, tmp_path: Path) -> None:
    client = Client(user, tmp_path)
    await client.choose("review")
    client.sent.clear()
    home = tmp_path / "home"
    document = json.loads((home / "mcp.json").read_text(encoding="utf-8"))
    document["profiles"]["review"] = {"servers": ["linear"]}
    (home / "mcp.json").write_text(json.dumps(document), encoding="utf-8")

    summary = await client.context.configuration.reload()

    assert summary.to_json()["deactivated"] == [
        {"session": "default", "removed": ["github.list_pull_requests"], "reason": "profile changed"}
    ]
    assert client.directory() == ["linear"]
    changed = [params for method, params in client.sent if method == "mcp/modelToolChanged"]
    assert [s["name"] for s in changed[-1]["definition"]["servers"]] == ["linear"]
    # A reload that leaves it as it was tells nothing.
    client.sent.clear()
    await client.context.configuration.reload()
    assert "mcp/modelToolChanged" not in [method for method, _ in client.sent]
