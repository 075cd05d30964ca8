"""The gateway's forwarding and `--resources` mappings, without a process: offers, roots, URIs, reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

from mcp_sidecar import tasks
from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.gateway.forwarding import host_roots, model_tool_servers
from mcp_sidecar.gateway.resources import listed_resource, listed_template, namespaced, read_contents, split
from mcp_sidecar.protocol.results import ReadResult
from mcp_sidecar.services.app import Sidecar
from mcp_sidecar.services.offers import covers, declared, union
from support.fake_connection import FakeFactory

FORM = ClientOffer(elicitation_form=True)
URL = ClientOffer(elicitation_url=True)
SAMPLING = ClientOffer(sampling=True)


def test_the_offer_is_what_any_host_can_answer() -> None:
    assert union([]) == ClientOffer()
    assert union([FORM, SAMPLING]) == ClientOffer(elicitation_form=True, sampling=True)
    assert union([FORM, FORM]) == FORM
    assert covers(union([FORM, URL, SAMPLING]), SAMPLING)
    assert covers(FORM, ClientOffer())
    assert not covers(FORM, union([FORM, SAMPLING]))  # a server offered less must reconnect for it
    assert not covers(ClientOffer(), URL)


@pytest.mark.parametrize(
    ("capabilities", "offer"),
    [
        ({}, ClientOffer()),
        ({"roots": {"listChanged": True}}, ClientOffer()),
        ({"elicitation": {}}, FORM),  # MCP: an elicitation capability without modes is form
        ({"elicitation": {"url": {}}}, URL),
        ({"elicitation": {"form": {}, "url": {}}, "sampling": {}}, ClientOffer(True, True, True)),
    ],
)
def test_a_hosts_declared_capabilities_become_its_offer(capabilities: dict[str, Any], offer: ClientOffer) -> None:
    assert declared(capabilities) == offer


async def test_a_new_offer_reconnects_only_the_connected_servers_offered_less(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    servers = {name: {"command": "python3"} for name in ("less", "more", "idle")}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    factory = FakeFactory()
    app = Sidecar(lambda m, p: None, use_disk_cache=False, watch_config=False, connection_factory=factory)
    app.ensure_loaded()
    less, more, idle = (factory.current(name) for name in ("less", "more", "idle"))
    for fake, offered in ((less, FORM), (more, union([FORM, SAMPLING]))):
        fake.set_state("connected")
        fake.hooks.offer = offered
    app.catalogs.tools[app.registry.key("more")] = ToolCatalog("more", [], source="live", generation=1)
    app.offers.change(union([FORM, SAMPLING]))
    assert app.offers.current == union([FORM, SAMPLING])
    assert app.registry.key("more") not in app.catalogs.tools  # listed under the old offer: fetched again
    await reconnections()
    assert (less.closed, more.closed, idle.closed) == (1, 0, 0)  # idle connects with the new offer anyway
    app.offers.change(FORM)  # less than before: nobody needs to reconnect
    await reconnections()
    assert (less.closed, more.closed) == (1, 0)


async def reconnections() -> None:
    await asyncio.wait_for(asyncio.gather(*(t for t in tasks.running() if t.get_name() == "offer-changed")), 10)


def test_a_hosts_roots_keep_file_uris_with_a_name_on_one_line() -> None:
    listed = [
        {"uri": "file:///work/app", "name": "App"},
        {"uri": "file:///work/second%20folder/"},
        {"uri": "file:///work/evil", "name": "evil\u202e\nname\x1b[31m"},
        {"uri": "https://example.org/not-a-folder", "name": "web"},
        {"uri": "file:///", "name": "  "},
        "nonsense",
    ]
    assert host_roots(listed) == [
        ("file:///work/app", "App"),
        ("file:///work/second%20folder/", "second folder"),
        ("file:///work/evil", "evil name"),
        ("file:///", "file:///"),
    ]


def test_the_servers_an_mcp_tools_call_may_hear_from() -> None:
    assert model_tool_servers({"query": "teams"}) == set()
    assert model_tool_servers({"read": {"server": "docs", "uri": "x:y"}}) == {"docs"}
    assert model_tool_servers({"complete": {"server": "db", "template": "t"}}) == {"db"}
    assert model_tool_servers({"read": "docs"}) == set()


async def test_supplied_roots_replace_the_workspace_until_withdrawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    app = Sidecar(lambda method, params: None, workspace=project, trusted=False, use_disk_cache=False)
    app.ensure_loaded()
    assert app.roots.current() == []  # an untrusted workspace discloses nothing
    app.roots.supply([("file:///a", "a"), ("file:///b", "b"), ("file:///a", "a")])
    assert app.roots.current() == [("file:///a", "a"), ("file:///b", "b")]  # the host chose them
    app.roots.supply([])
    assert app.roots.current() == []
    app.roots.supply(None)
    assert app.roots.current() == []


# -- --resources ------------------------------------------------------------------------------

SERVERS = ["docs", "Docs2", "api", "API"]


@pytest.mark.parametrize(
    "uri",
    ["file:///a/b c", "demo://resource/static/document/a%20b.md", "data://files{/path*}", "https://x.test/q?a=1#f"],
)
def test_a_namespaced_uri_gives_back_the_servers_own_uri_exactly(uri: str) -> None:
    assert namespaced("docs", uri) == f"mcp-sidecar://docs/{uri}"
    assert split(namespaced("docs", uri), SERVERS) == ("docs", uri)


@pytest.mark.parametrize(
    ("uri", "found"),
    [
        ("mcp-sidecar://docs2/x:y", ("Docs2", "x:y")),  # a lower-cased host name still finds its server
        ("mcp-sidecar://Api/x:y", None),  # two servers differ only in case: no guess
        ("mcp-sidecar://nobody/x:y", None),
        ("mcp-sidecar://docs/", None),
        ("mcp-sidecar://docs", None),
        ("file:///docs/x", None),
    ],
)
def test_a_uri_that_names_no_server_exactly_is_not_read(uri: str, found: tuple[str, str] | None) -> None:
    assert split(uri, SERVERS) == found


def test_listed_resources_and_templates_are_namespaced_and_sanitised() -> None:
    resource = {
        "uri": "data://a.txt",
        "name": "a\x1b[2Jtxt",
        "title": "Title\nline",
        "description": "Desc \u202etext",
        "mimeType": "text/plain",
        "size": 12,
        "_meta": {"x": 1},
    }
    assert listed_resource("docs", resource) == {
        "uri": "mcp-sidecar://docs/data://a.txt",
        "name": "docs/atxt",
        "title": "Title line",
        "description": "[docs] Desc text",
        "mimeType": "text/plain",
        "size": 12,
    }
    template = {"uriTemplate": "data://items/{id}", "name": "items"}
    assert listed_template("docs", template) == {
        "uriTemplate": "mcp-sidecar://docs/data://items/{id}",
        "name": "docs/items",
    }


def test_read_contents_keep_the_gateways_uris_and_say_where_a_cut_result_is() -> None:
    notice = "[Output truncated to the limits (2,000 lines or 50 KiB). The full result (9 bytes) is in the file /x]"
    result = cast(
        "ReadResult",
        {
            "contents": [
                {"uri": "data://a", "mimeType": "text/plain", "text": "red \x1b[31mtext"},
                {"uri": "data://b", "blob": "AAAA", "mimeType": "application/octet-stream"},
                {"mimeType": "text/plain", "text": "no uri"},
                {"uri": "data://c"},
            ],
            "truncated": True,
            "text": f"mcp read\n--- data://a\nred text\n{notice}",
        },
    )
    asked = "mcp-sidecar://docs/data://a"
    assert read_contents("docs", asked, result) == [
        {"uri": "mcp-sidecar://docs/data://a", "mimeType": "text/plain", "text": "red text"},
        {"uri": "mcp-sidecar://docs/data://b", "mimeType": "application/octet-stream", "blob": "AAAA"},
        {"uri": asked, "mimeType": "text/plain", "text": "no uri"},
        {"uri": asked, "mimeType": "text/plain", "text": notice},
    ]
