"""The session budget (issue 34): which tools go, least recently used first, never those just asked for;
an activation that goes over it deactivates them and names them; a call of one is told why; off by default.

The choice itself (`services/budget.py`) is tested alone; then one client's activation on fake
connections, with the budget from the config file and from the client's own setting."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.config.budget import Budget
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.protocol.params import ProfileParams
from mcp_sidecar.services import budget
from mcp_sidecar.services.budget import Use
from mcp_sidecar.services.client_context import ClientContext
from mcp_sidecar.services.sessions import BUDGET
from mcp_sidecar.services.user_state import UserState
from support.fake_connection import FakeConnection, FakeFactory

SESSION = "chat"


def use(tool_id: str, last_used: int, tokens: int | None = 100) -> Use:
    return Use(tool_id, last_used, tokens)


# -- the choice ---------------------------------------------------------------------------------


def test_the_least_recently_used_go_first_until_the_count_fits() -> None:
    active = [use("a.one", 5), use("a.two", 1), use("a.three", 3), use("a.four", 9)]
    assert budget.evictions(Budget(max_tools=2), active, keep={"a.four"}) == ["a.two", "a.three"]
    assert budget.evictions(Budget(max_tools=3), active, keep={"a.four"}) == ["a.two"]
    assert budget.evictions(Budget(max_tools=4), active, keep={"a.four"}) == []


def test_tokens_count_each_tool_s_estimate() -> None:
    active = [use("a.big", 1, 900), use("a.small", 2, 50), use("a.new", 3, 200)]
    # 1,150 over 300: the oldest goes first even though the next alone would not have been enough.
    assert budget.evictions(Budget(max_tokens=300), active, keep={"a.new"}) == ["a.big"]
    assert budget.evictions(Budget(max_tokens=240), active, keep={"a.new"}) == ["a.big", "a.small"]
    # Both limits: whichever is exceeded.
    assert budget.evictions(Budget(max_tools=1, max_tokens=10_000), active, keep={"a.new"}) == ["a.big", "a.small"]


def test_the_tools_asked_for_are_never_chosen_even_when_they_alone_do_not_fit() -> None:
    active = [use("a.old", 1), use("a.x", 2), use("a.y", 3), use("a.z", 4)]
    keep = {"a.x", "a.y", "a.z"}
    assert budget.evictions(Budget(max_tools=2), active, keep) == ["a.old"]
    assert not budget.fits(Budget(max_tools=2), 3, None)


def test_unknown_estimates_hold_only_the_tool_count() -> None:
    active = [use("a.one", 1, None), use("a.two", 2, 100), use("a.three", 3, 100)]
    assert budget.evictions(Budget(max_tokens=1), active, keep={"a.three"}) == []
    assert budget.evictions(Budget(max_tools=2, max_tokens=1), active, keep={"a.three"}) == ["a.one"]


def test_off_chooses_nothing_and_reports_null() -> None:
    active = [use(f"a.t{i}", i) for i in range(60)]
    assert budget.evictions(Budget(), active, keep=set()) == []
    assert budget.to_json(Budget()) is None
    assert budget.to_json(Budget(max_tools=3)) == {"maxTools": 3, "maxTokens": None}


def test_a_client_s_own_setting_wins_field_by_field_and_zero_turns_a_limit_off() -> None:
    files = Budget(max_tools=5, max_tokens=4000)
    assert Budget().over(files) == files
    assert Budget(max_tools=8).over(files) == Budget(8, 4000)
    assert Budget(max_tools=0).over(files) == Budget(None, 4000)
    assert Budget(0, 0).over(files).off


# -- one client's sessions ------------------------------------------------------------------------


TOOLS = [{"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}} for name in "abcdef"]


class Client:
    def __init__(self, user: UserState, workspace: Path) -> None:
        self.sent: list[tuple[str, Mapping[str, Any]]] = []
        self.context = ClientContext(
            user,
            lambda method, params: self.sent.append((method, dict(params))),
            environ={},
            workspace=workspace,
            watch_config=False,
        )
        self.context.configuration.ensure_loaded()
        conn = self.context.connection("srv", "test")
        assert isinstance(conn, FakeConnection)
        conn.tools = list(TOOLS)

    async def activate(self, *names: str) -> Any:
        return await self.context.activation.activate(tuple(f"srv.{n}" for n in names), SESSION)

    def active(self) -> list[str]:
        return list(self.context.sessions.active(SESSION))

    def changes(self) -> list[Mapping[str, Any]]:
        return [params for method, params in self.sent if method == "mcp/activeToolsChanged"]


def user_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, document: dict[str, Any]) -> UserState:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers = {"srv": {"command": "python3", "args": ["srv"]}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers, **document}), encoding="utf-8")
    return UserState(FakeFactory(), use_disk_cache=False)


async def test_an_activation_over_the_budget_deactivates_the_least_recently_used_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Client(user_with(tmp_path, monkeypatch, {"sessionBudget": {"maxTools": 3}}), tmp_path)
    await client.activate("a", "b", "c")
    await client.activate("a")  # asked for again: used now
    client.context.sessions.touch(SESSION, "srv.c")  # as a call does

    done = await client.activate("d", "e")

    assert done["evicted"] == ["srv.b", "srv.a"]
    assert client.active() == ["srv.c", "srv.d", "srv.e"]  # the listed order is kept
    assert done["budget"] == {"maxTools": 3, "maxTokens": None}
    assert done["overBudget"] is False
    assert (
        "Session budget (at most 3 tools): deactivated the least recently used: srv.b, srv.a. "
        'To use one again, activate it again by its id (activate ["srv.b"]).'
    ) in done["text"].splitlines()
    assert client.changes()[-1] == {"session": SESSION, "removed": ["srv.b", "srv.a"], "reason": BUDGET}
    active = client.context.activation.active_tools(SESSION)
    assert active["budget"] == {"maxTools": 3, "maxTokens": None}
    assert client.context.status.status()["budget"] == {"maxTools": 3, "maxTokens": None}

    with pytest.raises(SidecarError) as refused:
        await client.context.activation.call_tool("srv.a", {}, SESSION)
    assert refused.value.diagnostic.code == "tool_not_active"
    assert refused.value.diagnostic.message == (
        "Tool 'srv.a' was deactivated by the session budget (least recently used): activate it again."
    )

    again = await client.activate("a")  # back, in place of the least recently used (c, touched before d and e)
    assert again["evicted"] == ["srv.c"]
    assert client.active() == ["srv.d", "srv.e", "srv.a"]
    assert not client.context.sessions.evicted(SESSION, "srv.a")


async def test_the_tools_asked_for_stay_when_they_alone_exceed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Client(user_with(tmp_path, monkeypatch, {"sessionBudget": {"maxTools": 2}}), tmp_path)
    await client.activate("a")

    done = await client.activate("b", "c", "d")

    assert done["evicted"] == ["srv.a"]
    assert client.active() == ["srv.b", "srv.c", "srv.d"]
    assert done["overBudget"] is True
    assert done["text"].splitlines()[-1] == (
        "The tools of this activation alone exceed the session budget (at most 2 tools): they are active all "
        "the same, and every other tool was deactivated."
    )


async def test_a_token_budget_counts_the_estimates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = Client(user_with(tmp_path, monkeypatch, {}), tmp_path)
    first = await client.activate("a", "b")
    each = first["tools"][0]["tokens"]
    assert isinstance(each, int)
    assert [t["tokens"] for t in first["tools"]] == [each, each]  # the same shape, the same cost
    client.context.configuration.budget_setting = Budget(max_tokens=2 * each)

    done = await client.activate("c")

    assert done["evicted"] == ["srv.a"]
    assert done["tokens"] == {"added": each, "session": 2 * each}
    assert f"Session budget (at most {2 * each:,} tokens)" in done["text"]


async def test_off_by_default_nothing_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = Client(user_with(tmp_path, monkeypatch, {}), tmp_path)
    for name in "abcdef":
        done = await client.activate(name)
        assert done["evicted"] == []
        assert done["budget"] is None
        assert "budget" not in done["text"]
    assert client.active() == [f"srv.{n}" for n in "abcdef"]
    assert client.changes() == []
    assert client.context.activation.active_tools(SESSION)["budget"] is None
    assert client.context.status.status()["budget"] is None


async def test_the_client_s_own_zero_turns_the_files_budget_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Client(user_with(tmp_path, monkeypatch, {"sessionBudget": {"maxTools": 1}}), tmp_path)
    client.context.configuration.budget_setting = Budget(max_tools=0)
    done = await client.activate("a", "b", "c")
    await client.activate("d")
    assert done["budget"] is None
    assert client.active() == ["srv.a", "srv.b", "srv.c", "srv.d"]


async def test_an_invalid_budget_is_a_diagnostic_and_that_limit_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = {"sessionBudget": {"maxTools": "many", "maxTokens": 500}}
    client = Client(user_with(tmp_path, monkeypatch, document), tmp_path)
    status = client.context.status.status()
    assert status["budget"] == {"maxTools": None, "maxTokens": 500}
    messages = [d["message"] for d in status["diagnostics"] if d["code"] == "configuration_invalid"]
    path = tmp_path / "home" / "mcp.json"
    assert messages == [
        f"{path}: `sessionBudget.maxTools` must be a whole number from 1 to 1,000 (or null: no limit); "
        "that limit is off."
    ]
    assert [row["name"] for row in status["servers"]] == ["srv"]  # the servers stay valid


async def test_a_profile_s_tools_make_room_as_an_activation_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = {"sessionBudget": {"maxTools": 2}, "profiles": {"p": {"activate": ["srv.d", "srv.e"]}}}
    client = Client(user_with(tmp_path, monkeypatch, document), tmp_path)
    await client.activate("a", "b")

    chosen = await client.context.profiles.profile(ProfileParams("p", True, SESSION))

    assert chosen["activation"] is not None
    assert chosen["activation"]["evicted"] == ["srv.a", "srv.b"]
    assert client.active() == ["srv.d", "srv.e"]
    assert client.changes()[-1] == {"session": SESSION, "removed": ["srv.a", "srv.b"], "reason": BUDGET}
