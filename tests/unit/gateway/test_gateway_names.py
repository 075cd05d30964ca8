"""Native names and durable session files."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from mcp_sidecar.gateway import native
from mcp_sidecar.gateway.durable import DurableSession, digest, valid_name
from mcp_sidecar.gateway.hosts import Host

HOST_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_plain_names_stay_plain() -> None:
    assert native.native_name("linear", "list_teams", set()) == "linear__list_teams"
    assert native.native_name("my-server", "get-item", set()) == "my-server__get-item"


@pytest.mark.parametrize(
    ("server", "tool"),
    [("docs", "get.page"), ("docs", "x" * 80), ("d" * 70, "t"), ("é", "t"), ("a", "b c"), ("srv", "naïve")],
)
def test_names_a_host_refuses_get_a_hash_and_always_fit(server: str, tool: str) -> None:
    name = native.native_name(server, tool, set())
    assert HOST_NAME.match(name)
    assert name == native.hashed(server, tool)
    assert name == native.native_name(server, tool, {"unrelated"})  # stable


def test_a_taken_name_goes_to_the_hash_and_different_ids_never_share_one() -> None:
    assert native.native_name("a", "b__c", {"a__b__c"}) == native.hashed("a", "b__c")
    assert native.hashed("a", "b__c") != native.hashed("a__b", "c")
    assert native.hashed("docs", "get.page") != native.hashed("docs", "get_page")


def test_a_tool_named_like_another_tools_hash_never_gets_its_name() -> None:
    """A server names its own tools: `get_page_<hash>` is what `get.page` hashes to (review finding)."""

    async def tell() -> None:
        return None

    host = Host("s", tell)
    evil = native.hashed("docs", "get.page")[len("docs__") :]
    first = host.native_name("docs", evil)
    second = host.native_name("docs", "get.page")
    assert first != second
    assert HOST_NAME.match(second)
    assert host.tool_id(first) == f"docs.{evil}"
    assert host.tool_id(second) == "docs.get.page"
    assert not native.ALLOWED.match("a__b\n")


def test_a_host_keeps_each_tools_name_for_its_life() -> None:
    async def tell() -> None:
        return None

    host = Host("s", tell)
    first = host.native_name("docs", "get_page")
    assert first == "docs__get_page"
    assert host.native_name("docs", "get.page") == native.hashed("docs", "get.page")
    assert host.native_name("docs", "get_page") == first
    assert host.tool_id(first) == "docs.get_page"
    assert host.tool_id("nothing") is None


def test_durable_sessions_round_trip_privately(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    session = DurableSession("work", directory)
    assert session.load() == {}
    session.save({"b.two": digest("two"), "a.one": digest("one")})
    path = directory / "work.json"
    assert json.loads(path.read_text()) == {"tools": {"a.one": digest("one"), "b.two": digest("two")}}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert DurableSession("work", directory).load() == {"a.one": digest("one"), "b.two": digest("two")}


@pytest.mark.parametrize("content", ['{"tools": "a.one"}', "[1, 2]", "not json", '{"tools": {"a.one": 1}}'])
def test_a_file_that_is_not_ours_starts_empty(tmp_path: Path, content: str) -> None:
    directory = tmp_path / "sessions"
    DurableSession("work", directory).save({"a.one": digest("one")})
    (directory / "work.json").write_text(content)
    assert DurableSession("work", directory).load() == {}


def test_a_symlinked_session_directory_is_not_used(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "sessions").symlink_to(elsewhere)
    session = DurableSession("work", tmp_path / "sessions")
    session.save({"a.one": digest("one")})
    assert list(elsewhere.iterdir()) == []
    assert session.load() == {}


@pytest.mark.parametrize("name", ["", "../x", ".hidden", "a/b", "x" * 65, "trailing.", "sp ace", "work\n"])
def test_session_names_are_plain_file_names(name: str) -> None:
    assert not valid_name(name)
    with pytest.raises(ValueError, match="session name"):
        DurableSession(name)
