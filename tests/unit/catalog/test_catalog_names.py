"""Catalog entries outside the MCP name form are refused one by one; colliding model names activate nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog import names
from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.config.validate import parse_server
from mcp_sidecar.protocol.errors import HINTS
from mcp_sidecar.protocol.results import ActivateResult, Candidate
from mcp_sidecar.services.activation import ToolRef, tool_refs
from mcp_sidecar.services.app import Sidecar

HINT = HINTS["catalog_entry_invalid"]
RULE = "1 to 128 ASCII letters, digits, `_`, `-` or `.`"


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"Tool {name}.", "inputSchema": {"type": "object"}}


@pytest.mark.parametrize(
    "name", ["a", "echo", "list_teams", "get-user", "files.read", "a__b", "A.B-c_9", "x" * 128, "_", ".", "-"]
)
def test_names_of_the_mcp_form_are_accepted(name: str) -> None:
    assert names.problem("tool", name) is None
    assert names.problem("prompt", name) is None


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("", '""'),
        ("bad name", '"bad name"'),
        ("files/read", '"files/read"'),
        ("x" * 129, '"' + "x" * 80 + '"…'),
        ("\x1b[2Jwipe", '"\\u001b[2Jwipe"'),
        ("evil\u202etxt", '"evil\\u202etxt"'),
        ("zero\u200bwidth", '"zero\\u200bwidth"'),
        ("tag\U000e0041", '"tag\\udb40\\udc41"'),
        ("caf\u00e9", '"caf\\u00e9"'),
        ("cafe\u0301", '"cafe\\u0301"'),
        ("new\nline", '"new\\nline"'),
    ],
)
def test_other_names_are_refused_with_a_plain_message(name: str, shown: str) -> None:
    assert names.problem("tool", name) == (f"The server's tool name {shown} is not {RULE}; the tool is left out.")


def test_uris_and_templates_are_refused_only_for_control_characters() -> None:
    assert names.problem("resource", "file:///naïve café.txt") is None  # a label-like URI is the server's business
    assert names.problem("template", "schema://tables/{table}") is None
    assert names.problem("resource", "hostile://rtl\u202etxt") == (
        'The server\'s resource "hostile://rtl\\u202etxt" holds control or invisible characters; the URI is left out.'
    )
    assert names.problem("template", "hostile://bell\x07/{id}") == (
        'The server\'s URI template "hostile://bell\\u0007/{id}" holds control or invisible characters; '
        "the template is left out."
    )


def test_screen_keeps_the_order_and_reports_each_refusal() -> None:
    listed = [tool("ok"), tool("bad name"), tool("also.ok"), tool("evil\u202e")]
    accepted, refused = names.screen("s", "tool", listed)
    assert [d["name"] for d in accepted] == ["ok", "also.ok"]
    assert refused == [
        {
            "kind": "tool",
            "name": "bad name",
            "diagnostic": {
                "code": "catalog_entry_invalid",
                "operation": "catalog",
                "server": "s",
                "message": f'The server\'s tool name "bad name" is not {RULE}; the tool is left out.',
                "hint": HINT,
            },
        },
        {
            "kind": "tool",
            "name": "evil\u202e",
            "diagnostic": {
                "code": "catalog_entry_invalid",
                "operation": "catalog",
                "server": "s",
                "message": f'The server\'s tool name "evil\\u202e" is not {RULE}; the tool is left out.',
                "hint": HINT,
            },
        },
    ]


def test_a_tool_catalog_leaves_refused_tools_out_of_every_view() -> None:
    config = parse_server("s", {"command": "x", "excludeTools": ["hidden"]}, "global")
    catalog = ToolCatalog("s", [tool("echo"), tool("cafe\u0301"), tool("hidden"), tool("x" * 129)], "live", 1)
    assert list(catalog.visible(config)) == ["echo"]
    assert catalog.all_names() == ["echo", "hidden"]
    assert [r["name"] for r in catalog.refused] == ["cafe\u0301", "x" * 129]
    # Compared after NFC normalisation: the composed spelling finds the decomposed refusal.
    assert catalog.refused_entry("caf\u00e9") == catalog.refused[0]
    assert catalog.refused_entry("cafe\u0301") == catalog.refused[0]
    assert catalog.refused_entry("echo") is None


SERVERS = ["x", "x__y", "x_", "a"]


@pytest.mark.parametrize(
    ("tool_id", "refs"),
    [
        ("mcp__x__y__z", [ToolRef("x__y", "z"), ToolRef("x", "y__z")]),
        ("mcp__x___y", [ToolRef("x_", "y"), ToolRef("x", "_y")]),
        ("x.y__z", [ToolRef("x", "y__z")]),  # server names hold no dot: one reading
        ("mcp__a__b", [ToolRef("a", "b")]),
        ("mcp__b__c", []),
    ],
)
def test_every_reading_of_an_id_longest_server_first(tool_id: str, refs: list[ToolRef]) -> None:
    assert tool_refs(tool_id, SERVERS) == refs


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sidecar:
    """Servers `x` and `x__y` whose tool catalogs are in the disk cache (nothing ever runs)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers = {name: {"command": str(tmp_path / "never-run")} for name in ("x", "x__y")}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    sidecar = Sidecar(lambda method, params: None, workspace=tmp_path)
    sidecar.ensure_loaded()
    cache = sidecar.catalogs.cache
    assert cache is not None
    catalogs = {"x": [tool("y__z"), tool("y.z"), tool("bad name")], "x__y": [tool("z"), tool("w")]}
    for name, tools in catalogs.items():
        cache.store(sidecar.catalogs.key(sidecar.registry.connection(name, "test")), name, tools, time.time())
    return sidecar


def statuses(result: ActivateResult) -> list[tuple[str, str, str | None]]:
    return [(r["id"], r["status"], r.get("reason")) for r in result["results"]]


async def test_colliding_model_names_activate_neither_tool(app: Sidecar) -> None:
    collide = (
        "'x__y.z' and 'x.y__z' have the same model name 'mcp__x__y__z' (their mcp__server__tool forms collide), "
        "so neither is activated."
    )
    result = await app.activation.activate(("mcp__x__y__z", "x.y__z", "x__y.z", "x.y.z", "x__y.w"), "s")
    assert statuses(result) == [
        ("mcp__x__y__z", "not loaded", collide),
        (
            "x.y__z",
            "not loaded",
            "'x.y__z' and 'x__y.z' have the same model name 'mcp__x__y__z' (their mcp__server__tool forms "
            "collide), so neither is activated.",
        ),
        ("x__y.z", "not loaded", collide),
        ("x.y.z", "loaded", None),
        ("x__y.w", "loaded", None),
    ]
    assert [t["modelName"] for t in result["tools"]] == ["mcp__x__y.z", "mcp__x__y__w"]
    assert result["text"].splitlines()[4] == " ✔ x.y.z · loaded"


async def test_an_id_two_servers_could_own_resolves_to_the_one_that_has_the_tool(app: Sidecar) -> None:
    # mcp__x__y__w: tool `w` of `x__y`, or tool `y__w` of `x` (which does not exist).
    result = await app.activation.activate(("mcp__x__y__w", "mcp__x__y.z"), "s")
    assert statuses(result) == [("x__y.w", "loaded", None), ("x.y.z", "loaded", None)]
    assert [t["id"] for t in result["tools"]] == ["x__y.w", "x.y.z"]


async def test_a_refused_name_is_not_activated_and_says_why(app: Sidecar) -> None:
    result = await app.activation.activate(("x.bad name", "x.nope", "x.\x1b[2Jwipe"), "s")
    assert statuses(result) == [
        ("x.bad name", "not loaded", f'The server\'s tool name "bad name" is not {RULE}; the tool is left out.'),
        ("x.nope", "not loaded", "Server 'x' has no tool named 'nope'."),
        ("x.\x1b[2Jwipe", "not loaded", "Server 'x' has no tool named '\\x1b[2Jwipe'."),
    ]
    # The id echoes the request in `results`; the text shows it without the control sequence.
    assert result["text"].splitlines()[3] == " ✘ x.wipe · not loaded: Server 'x' has no tool named '\\x1b[2Jwipe'."


def test_the_name_rule_is_worded_once_and_the_hint_repeats_it() -> None:
    assert names.NAME_RULE == RULE
    assert f"({RULE})" in HINT
    assert "retrying or refreshing will not help" in HINT


def test_a_summary_says_what_was_refused_and_names_three() -> None:
    refused: list[dict[str, Any]] = [
        {"kind": "tool", "name": n} for n in ("bad name", "caf\u00e9", "\x1b[2J", "x" * 129)
    ] + [
        {"kind": "tool", "name": "y__z", "collidesWith": ["x__y.z"]},
        {"kind": "resource", "uri": "r://\u202e"},
        {"kind": "template", "uriTemplate": "t://\x07/{a}"},
        {"kind": "template", "uriTemplate": "t://\u200b/{a}"},
        {"kind": "prompt", "name": "p q"},
    ]
    assert names.summary(refused) == [
        f'4 tools whose names are not {RULE}: "bad name", "caf\\u00e9", "\\u001b[2J" and 1 more',
        '1 tool whose model name another server\'s tool has too: "y__z" (as "x__y.z")',
        '1 resource whose URI holds control or invisible characters: "r://\\u202e"',
        '2 URI templates holding control or invisible characters: "t://\\u0007/{a}", "t://\\u200b/{a}"',
        f'1 prompt whose name is not {RULE}: "p q"',
    ]
    assert names.summary([{"name": "a b"}]) == [f'1 tool whose name is not {RULE}: "a b"']  # mcp/server/tools


def tool_ids(candidates: Sequence[Candidate]) -> list[str]:
    """The candidates' ids, checking that each one is a tool."""
    ids = []
    for c in candidates:
        assert c["kind"] == "tool", c
        ids.append(c["id"])
    return ids


async def test_discovery_offers_neither_colliding_tool_and_says_why(app: Sidecar) -> None:
    found = await app.discovery.discover("z", kind="tools", limit=50)
    assert tool_ids(found["candidates"]) == ["x.y.z"]
    assert [(r["server"], r["name"], r.get("collidesWith")) for r in found["refused"]] == [
        ("x", "bad name", None),
        ("x", "y__z", ["x__y.z"]),
        ("x__y", "z", ["x.y__z"]),
    ]
    scoped = await app.discovery.discover("z", kind="tools", server="x__y", limit=50)
    assert (scoped["candidates"], [r["name"] for r in scoped["refused"]]) == ([], ["z"])
    assert scoped["refused"][0]["diagnostic"]["message"] == (
        'The server\'s tool "z" has the same model name "mcp__x__y__z" as "x.y__z" (their mcp__server__tool '
        "forms collide), so it is neither offered nor activated."
    )
