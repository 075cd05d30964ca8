"""Query rewrite: the actions of a long request, and the servers it names."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from mcp_sidecar.catalog.rewrite import MAX_CLAUSES, clauses, enabled_by_environment, named_servers


@dataclass(frozen=True)
class Server:
    server: str


def test_a_long_request_is_split_into_its_actions_with_their_verbs_and_objects() -> None:
    request = "find the open bug about login timeouts in our repo and post a two-line summary of it to #eng"
    assert clauses(request) == ["find open bug about login timeouts repo", "post two-line summary #eng"]


def test_sentences_dashes_commas_and_then_separate_actions() -> None:
    request = "Stop the old api container, delete it - then remove the api:v1 image. Thanks!"
    assert clauses(request) == ["Stop old api container", "remove api:v1 image"]
    assert clauses("make key session:8812 expire in an hour, then show me every field stored in that hash") == [
        "key session:8812 expire hour",
        "every field stored hash",
    ]


def test_a_short_request_or_a_single_action_is_not_split() -> None:
    assert clauses("list issues and pull requests") == []  # fewer words than a request worth splitting
    assert clauses("please show me every open issue assigned to me in the tracker") == []  # one action


def test_a_pasted_message_yields_at_most_a_few_clauses() -> None:
    message = ". ".join(f"step {n} does thing {n}" for n in range(20))
    found = clauses(message)
    assert len(found) == MAX_CLAUSES
    assert found[0] == "step 0 thing 0"  # "does" is filler


def test_servers_are_named_by_their_name_with_or_without_separators_or_its_start() -> None:
    pool = [Server("github"), Server("google-maps"), Server("mongodb"), Server("git"), Server("slack")]
    assert named_servers(pool, "post it on Slack") == [pool[4]]
    assert named_servers(pool, "open google-maps") == [pool[1]]
    assert named_servers(pool, "ask googlemaps for the route") == [pool[1]]
    assert named_servers(pool, "count orders in mongo") == [pool[2]]
    assert named_servers(pool, "git status please") == [pool[3]]  # "git" names git, not github (too short a start)
    assert named_servers(pool, "what's new on GitHub?") == [pool[0]]


def test_no_server_is_named_by_a_word_that_only_contains_its_name() -> None:
    pool = [Server("time"), Server("fetch"), Server("slack")]
    assert named_servers(pool, "timezone of the slackers") == []
    assert named_servers(pool, "") == []


@pytest.mark.parametrize(("setting", "on"), [(None, False), ("0", False), ("", False), ("1", True), ("on", True)])
def test_the_rewrite_is_off_unless_the_environment_turns_it_on(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, on: bool
) -> None:
    if setting is None:
        monkeypatch.delenv("MCP_SIDECAR_REWRITE", raising=False)
    else:
        monkeypatch.setenv("MCP_SIDECAR_REWRITE", setting)
    assert enabled_by_environment() is on
