"""The kinds' records (catalog/kinds.py) against what they describe: the installed SDK's lists and
change notices, the wire's discovery kinds, and the per-layer tables keyed by a record's name.

End to end, every kind is listed, changed, searched and rendered by tests/e2e/test_discovery*.py,
test_resources.py and test_prompts.py against real servers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.shared import subscriptions

from mcp_sidecar.catalog import kinds, names
from mcp_sidecar.catalog.candidates import Scored, tool_candidate
from mcp_sidecar.catalog.documents import canonical
from mcp_sidecar.catalog.kinds import KINDS, Kind
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.events import EventHub
from mcp_sidecar.output import discovery_text
from mcp_sidecar.protocol.params import DISCOVER_KINDS
from mcp_sidecar.services.catalogs import Catalogs
from support.fake_connection import FakeConnection

RESULTS: dict[str, type[Any]] = {
    "tools": mcp_types.ListToolsResult,
    "resources": mcp_types.ListResourcesResult,
    "resource templates": mcp_types.ListResourceTemplatesResult,
    "prompts": mcp_types.ListPromptsResult,
}
DESCRIPTORS: dict[str, dict[str, Any]] = {
    "tool": {"name": "add", "inputSchema": {"type": "object", "required": ["a", "b"]}},
    "resource": {"uri": "file:///notes.txt", "name": "notes"},
    "template": {"uriTemplate": "notes://{day}/{+path}", "name": "by day"},
    "prompt": {"name": "review", "arguments": [{"name": "code", "required": True}, {"name": "style"}]},
}
SCORED: Scored = {"score": 1.0}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_each_kind_is_listed_by_the_installed_sdk_as_its_record_says(kind: Kind) -> None:
    assert callable(getattr(Client, kind.client_call))
    assert kind.page_field in RESULTS[kind.listed_as].model_fields
    assert kind.capability in mcp_types.ServerCapabilities.model_fields
    assert kind.capability == kind.group  # the capability that offers a list is its group's


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_each_kinds_change_names_are_the_sdks_notices_of_its_group(kind: Kind) -> None:
    assert isinstance(getattr(subscriptions, kind.modern_change), type)
    legacy = getattr(mcp_types, kind.legacy_change)
    assert legacy.model_fields["method"].default == f"notifications/{kind.group}/list_changed"
    assert kinds.MODERN_CHANGES[kind.modern_change] == kinds.LEGACY_CHANGES[kind.legacy_change] == kind.group


def test_the_groups_are_discoverys_kinds_and_each_holds_its_kinds_in_listing_order() -> None:
    assert tuple(kinds.SEARCHED) == DISCOVER_KINDS
    assert kinds.SEARCHED["all"] == kinds.GROUPS == ("tools", "resources", "prompts")
    assert [[k.name for k in kinds.in_group(g)] for g in kinds.GROUPS] == [
        ["tool"],
        ["resource", "template"],
        ["prompt"],
    ]
    assert [kinds.order(k.name) for k in KINDS] == [0, 1, 2, 3]
    assert [kinds.listed(k.listed_as) for k in KINDS] == list(KINDS)


def test_every_kind_has_a_text_row_and_no_other_name_has_one() -> None:
    assert set(discovery_text.ROWS) == {k.name for k in KINDS}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_refusal_names_the_entry_by_its_kinds_key(kind: Kind) -> None:
    refusal = names.refusal("s", kind.name, "x", "why")
    assert (refusal["kind"], refusal[kind.key]) == (kind.name, "x")


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_candidate_is_of_its_kind_and_offers_its_kinds_next_call(kind: Kind) -> None:
    descriptor = DESCRIPTORS[kind.name]
    doc = kind.document("s", descriptor, 0)
    assert (doc.kind, doc.key) == (kind.name, descriptor[kind.key])
    candidate: dict[str, Any] = dict(kind.candidate(doc, {}, SCORED))
    assert candidate["kind"] == kind.name
    assert candidate["next"] == kind.next_call(doc, False)
    assert list(candidate)[-2:] == ["next", "score"]


class Held:
    def __init__(self, descriptor: dict[str, Any]) -> None:
        self.canonical = canonical(descriptor)


def test_only_a_loaded_tool_is_called_next() -> None:
    doc = kinds.TOOL.document("s", DESCRIPTORS["tool"], 0)
    assert kinds.TOOL.candidate is tool_candidate
    loaded = tool_candidate(doc, {"s.add": Held(DESCRIPTORS["tool"])}, SCORED)
    changed = tool_candidate(doc, {"s.add": Held({"name": "add"})}, SCORED)
    assert (
        loaded["next"]
        == kinds.TOOL.next_call(doc, True)
        == {
            "method": "mcp/callTool",
            "params": {"id": "s.add", "arguments": {}},
        }
    )
    assert (
        changed["next"] == kinds.TOOL.next_call(doc, False) == {"method": "mcp/activate", "params": {"ids": ["s.add"]}}
    )
    assert [loaded["loaded"], changed["loaded"], changed.get("changed")] == [True, False, True]


async def test_each_group_is_fetched_indexed_and_dropped_on_its_own(tmp_path: Path) -> None:
    catalogs = Catalogs(None, asyncio.Semaphore(4), EventHub())
    fake = FakeConnection(ServerConfig(name="s", scope="global", transport="stdio", command="x"), tmp_path, print)
    fake.tools, fake.prompts = [DESCRIPTORS["tool"]], [DESCRIPTORS["prompt"]]

    async def resources(operation: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return [DESCRIPTORS["resource"]], [DESCRIPTORS["template"], {"uriTemplate": "bad\x07{x}"}]

    fake.list_resources = resources  # type: ignore[method-assign]
    conn = fake.real
    found = {g: await catalogs.catalog(conn, g, "test") for g in kinds.GROUPS}
    indexed = {g: await catalogs.index(conn, g, found[g]) for g in kinds.GROUPS}
    assert {g: [(d.kind, d.position) for d in ix.documents] for g, ix in indexed.items()} == {
        "tools": [("tool", 0)],
        "resources": [("resource", 0), ("template", 1)],
        "prompts": [("prompt", 0)],
    }
    assert [r["kind"] for r in found["resources"].refused] == ["template"]
    assert [catalogs.at_hand(conn, g) for g in kinds.GROUPS] == [True, True, True]
    catalogs.drop(conn, "resources")
    assert [catalogs.at_hand(conn, g) for g in kinds.GROUPS] == [True, False, True]
    assert (catalogs.tools["s"], catalogs.prompts["s"]) == (found["tools"], found["prompts"])
    assert "s" not in catalogs.resources
