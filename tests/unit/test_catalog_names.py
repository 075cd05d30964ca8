"""Catalog entries outside the MCP name form are refused one by one; colliding model names activate nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog import names
from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.config.validate import parse_server
from mcp_sidecar.services import activation
from mcp_sidecar.services.activation import ToolRef, tool_refs
from mcp_sidecar.services.app import Sidecar

HINT = "Check the server's MCP compatibility and the `protocol` setting (auto or legacy)."


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
    assert names.problem("tool", name) == (
        f"The server's tool name {shown} is not 1 to 128 letters, digits, '_', '-' or '.'; the tool is left out."
    )


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
                "code": "protocol_error",
                "operation": "catalog",
                "server": "s",
                "message": (
                    "The server's tool name \"bad name\" is not 1 to 128 letters, digits, '_', '-' or '.'; "
                    "the tool is left out."
                ),
                "hint": HINT,
            },
        },
        {
            "kind": "tool",
            "name": "evil\u202e",
            "diagnostic": {
                "code": "protocol_error",
                "operation": "catalog",
                "server": "s",
                "message": (
                    "The server's tool name \"evil\\u202e\" is not 1 to 128 letters, digits, '_', '-' or '.'; "
                    "the tool is left out."
                ),
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
    assert catalog.refused_name("caf\u00e9") == "cafe\u0301"
    assert catalog.refused_name("cafe\u0301") == "cafe\u0301"
    assert catalog.refused_name("echo") is None


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
        cache.store(sidecar.catalogs.key(sidecar.connections[name]), name, tools, time.time())
    return sidecar


def statuses(result: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(r["id"], r["status"], r.get("reason")) for r in result["results"]]


async def test_colliding_model_names_activate_neither_tool(app: Sidecar) -> None:
    collide = (
        "'x__y.z' and 'x.y__z' have the same model name 'mcp__x__y__z' (their mcp__server__tool forms collide), "
        "so neither is activated."
    )
    result = await activation.activate(app, ("mcp__x__y__z", "x.y__z", "x__y.z", "x.y.z", "x__y.w"), "s")
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
    result = await activation.activate(app, ("mcp__x__y__w", "mcp__x__y.z"), "s")
    assert statuses(result) == [("x__y.w", "loaded", None), ("x.y.z", "loaded", None)]
    assert [t["id"] for t in result["tools"]] == ["x__y.w", "x.y.z"]


async def test_a_refused_name_is_not_activated_and_says_why(app: Sidecar) -> None:
    result = await activation.activate(app, ("x.bad name", "x.nope", "x.\x1b[2Jwipe"), "s")
    assert statuses(result) == [
        (
            "x.bad name",
            "not loaded",
            "Tool 'bad name' was refused: its name is not 1 to 128 letters, digits, '_', '-' or '.' (MCP tool names).",
        ),
        ("x.nope", "not loaded", "Server 'x' has no tool named 'nope'."),
        ("x.\x1b[2Jwipe", "not loaded", "Server 'x' has no tool named '\\x1b[2Jwipe'."),
    ]
    # The id echoes the request in `results`; the text shows it without the control sequence.
    assert result["text"].splitlines()[3] == " ✘ x.wipe · not loaded: Server 'x' has no tool named '\\x1b[2Jwipe'."
