"""`mcp_tools` without a subprocess: a real `Sidecar` whose tool catalog is already in memory.

The configured server's command does not exist, so a test that made the sidecar connect
would see `unavailable`/`not loaded` instead of the expected candidates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog.tools import ToolCatalog
from mcp_sidecar.output import activation_text, directory_text
from mcp_sidecar.output.discovery_text import Scope, nothing_matches
from mcp_sidecar.output.model_text import MODEL_HINTS
from mcp_sidecar.protocol.errors import HINTS, DiagnosticCode
from mcp_sidecar.services import model_tool
from mcp_sidecar.services.app import Sidecar
from support.tokens import definition_tokens

TOOLS: list[dict[str, Any]] = [
    {
        "name": "list_tables",
        "description": "List the tables of a schema.\n\nLonger details nobody needs in a list.",
        "inputSchema": {
            "type": "object",
            "properties": {"schema": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["schema"],
        },
    },
    {"name": "run_query", "description": "Run a SQL query.", "inputSchema": {"type": "object"}},
]
ONE_OF = "Pass exactly one of `query`, `activate`, `read`, `complete` or `result`."
QUERY_ONLY = "`kind`, `server` and `limit` apply to `query` only."


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sidecar:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    servers = {
        "warehouse": {"command": str(tmp_path / "never-run")},
        "off": {"command": str(tmp_path / "never-run"), "disabled": True},
    }
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    sidecar = Sidecar(lambda method, params: None, workspace=tmp_path, use_disk_cache=False)
    sidecar.ensure_loaded()
    sidecar.catalogs.tools[sidecar.registry.key("warehouse")] = ToolCatalog(
        "warehouse", TOOLS, source="cache", generation=0
    )
    return sidecar


def invalid(message: str) -> dict[str, Any]:
    hint = MODEL_HINTS["invalid_params"]
    return {
        "text": f"[invalid_params] {message} {hint}",
        "isError": True,
        "details": {
            "diagnostic": {"code": "invalid_params", "operation": "mcp_tools", "message": message, "hint": hint}
        },
    }


def test_definition_shape(app: Sidecar) -> None:
    definition = app.model_tool.definition()
    assert set(definition) == {"name", "description", "inputSchema", "servers", "call", "tokens"}
    assert definition["name"] == "mcp_tools"
    schema = definition["inputSchema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert "required" not in schema  # exactly-one-of is checked by invoke, with a message for the model
    props = schema["properties"]
    assert list(props) == ["query", "kind", "server", "limit", "activate", "read", "complete", "result", "wait"]
    assert props["kind"]["enum"] == ["all", "tools", "resources", "prompts"]
    assert (props["limit"]["minimum"], props["limit"]["maximum"]) == (1, 50)
    assert (props["activate"]["minItems"], props["activate"]["maxItems"]) == (1, 50)
    assert props["read"]["required"] == ["server"]
    assert set(props["read"]["properties"]) == {"server", "uri", "template", "arguments"}
    assert props["complete"]["required"] == ["server", "template", "argument"]
    for word in ("query", "activate", "read", "complete", "exactly one"):
        assert word in definition["description"]


def test_definition_is_json_and_stable(app: Sidecar) -> None:
    assert json.loads(json.dumps(app.model_tool.definition())) == app.model_tool.definition()


def test_the_directory_names_enabled_servers_with_their_description_or_a_catalog_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    never = str(tmp_path / "never-run")
    servers = {
        "linear": {"command": never, "description": "Issues and\nprojects \x1b[31mof the team\u202e.\n\nMore."},
        "warehouse": {"command": never},
        "fresh": {"command": never},
        "off": {"command": never, "disabled": True, "description": "Not shown"},
    }
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    app = Sidecar(lambda method, params: None, workspace=tmp_path, use_disk_cache=False)
    app.ensure_loaded()
    app.catalogs.tools[app.registry.key("warehouse")] = ToolCatalog(
        "warehouse", [*TOOLS, *TOOLS[:1]], source="cache", generation=0
    )
    definition = app.model_tool.definition()
    assert definition["servers"] == [
        {"name": "linear", "summary": "Issues and projects of the team.", "source": "description"},
        {"name": "warehouse", "summary": "2 tools: list_tables, run_query", "source": "catalog"},
        {"name": "fresh", "summary": "", "source": "none"},
    ]
    assert definition["description"] == model_tool.DESCRIPTION + "\n\n" + "\n".join(
        [
            "Servers (for `server`; query to find their tools):",
            "- linear: Issues and projects of the team.",
            "- warehouse: 2 tools: list_tables, run_query",
            "- fresh",
        ]
    )


@pytest.mark.parametrize("count", [1, 10, 30, 50, 200])
def test_the_directory_stays_within_its_budget_and_names_every_server(count: int) -> None:
    entries: list[Any] = [
        {"name": f"server-{i:03d}-with-a-long-name", "summary": "word " * 60, "source": "description"}
        for i in range(count)
    ]
    text = directory_text.render(entries)
    assert len(text) <= directory_text.DIRECTORY_CHARS
    lines = text.splitlines()
    named = [line for line in lines if line.startswith("- server-")]
    if count <= 10:
        # Few servers: each keeps its line with a summary.
        assert len(named) == count, text
        assert all(": word" in line for line in named), text
    elif count <= 50:
        # Up to 50 (long-named) servers each keeps its line; summaries shrink, then the first ones keep theirs.
        assert len(named) == count, text
        described = [line for line in named if ": word" in line]
        assert described == named[: len(described)], text
        assert len(described) >= 3, text
        assert all(len(line.split(": ", 1)[1]) >= directory_text.SUMMARY_MIN_CHARS for line in described), text
    else:
        assert lines[-1].startswith("- and "), lines[-1]
        assert len(named) + int(lines[-1].split()[2]) == count


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, ONE_OF),
        ({"kind": "tools"}, ONE_OF),
        ({"query": "tables", "activate": ["warehouse.list_tables"]}, ONE_OF),
        ({"read": {"server": "warehouse", "uri": "x://y"}, "complete": {}}, ONE_OF),
        ({"query": "tables", "bogus": 1, "other": 2}, "Unknown argument(s): bogus, other."),
        ({"activate": ["warehouse.list_tables"], "limit": 3}, QUERY_ONLY),
        ({"activate": ["warehouse.list_tables"], "kind": "tools"}, QUERY_ONLY),
        ({"read": {"server": "warehouse", "uri": "x://y"}, "server": "warehouse"}, QUERY_ONLY),
        ({"query": "tables", "limit": 0}, "`limit` must be an integer from 1 to 50."),
        ({"query": "tables", "limit": 51}, "`limit` must be an integer from 1 to 50."),
        ({"query": "tables", "limit": True}, "`limit` must be an integer from 1 to 50."),
        ({"query": "tables", "kind": "files"}, "`kind` must be one of all, tools, resources, prompts."),
        ({"query": 3}, "`query` must be a string."),
        ({"activate": []}, "`ids` must be a list of 1 to 50 tool ids."),
        ({"activate": "warehouse.list_tables"}, "`ids` must be a list of 1 to 50 tool ids."),
    ],
    ids=[
        "none",
        "kind-alone",
        "query-and-activate",
        "read-and-complete",
        "unknown",
        "limit-with-activate",
        "kind-with-activate",
        "server-with-read",
        "limit-0",
        "limit-51",
        "limit-bool",
        "bad-kind",
        "query-not-string",
        "activate-empty",
        "activate-not-list",
    ],
)
async def test_invalid_arguments_are_error_results(app: Sidecar, arguments: dict[str, Any], message: str) -> None:
    assert await app.model_tool.invoke(arguments, "s") == invalid(message)


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (
            {"read": {"server": "warehouse", "uri": "relative"}},
            "resource_invalid",
            "The URI is not an exact absolute URI (scheme:...).",
        ),
        (
            {"read": {"server": "warehouse", "uri": "x://y", "template": "x://{y}"}},
            "invalid_params",
            "Pass exactly one of `uri` or `template`.",
        ),
        (
            {"read": {"server": "nowhere", "uri": "x://y"}},
            "server_not_found",
            "No server named 'nowhere' is configured.",
        ),
        (
            {"complete": {"server": "warehouse", "template": "x://{y}", "argument": {"name": "y", "value": 1}}},
            "invalid_params",
            "`argument.value` must be a string (it may be empty).",
        ),
        (
            {"complete": {"server": "warehouse", "prompt": "p", "argument": {"name": "y", "value": ""}}},
            "invalid_params",
            "`complete` takes a `template`, not a `prompt`.",
        ),
    ],
    ids=["read-relative", "read-both", "read-unknown-server", "complete-value", "complete-prompt"],
)
async def test_read_and_complete_failures_are_results(
    app: Sidecar, arguments: dict[str, Any], code: str, message: str
) -> None:
    # None of these reach the server (its command does not exist).
    result = await app.model_tool.invoke(arguments, "s")
    assert result["isError"] is True
    diagnostic = result["details"]["diagnostic"]
    assert (diagnostic["code"], diagnostic["message"]) == (code, message)


async def test_query_returns_text_and_discovery_details(app: Sidecar) -> None:
    result = await app.model_tool.invoke({"query": "list tables", "kind": "tools", "server": "warehouse"}, "s")
    assert result["isError"] is False
    details = result["details"]
    assert (details["query"], details["kind"], details["session"]) == ("list tables", "tools", "s")
    assert details["unavailable"] == []
    [first, *_] = details["candidates"]
    score = first.pop("score")
    assert isinstance(score, float)
    assert score > 0
    # Both signals put it first: its words and its meaning.
    match = first.pop("match")
    assert (match["signals"], match.get("keywordRank"), match.get("semanticRank")) == (["keyword", "semantic"], 1, 1)
    # What activating it adds, as an independent count of its definition gives it.
    assert first.pop("tokens") == definition_tokens(TOOLS[0])
    assert first == {
        "kind": "tool",
        "id": "warehouse.list_tables",
        "server": "warehouse",
        "name": "list_tables",
        "description": "List the tables of a schema.",
        "required": ["schema"],
        "loaded": False,
        "next": {"method": "mcp/activate", "params": {"ids": ["warehouse.list_tables"]}},
    }
    assert result["text"] == details["text"]
    assert result["text"].splitlines()[:2] == [
        'mcp discover "list tables"',
        " ○ warehouse.list_tables(schema) — List the tables of a schema.",
    ]


async def test_query_defaults_to_five_and_honours_limit(app: Sidecar) -> None:
    app.catalogs.tools[app.registry.key("warehouse")] = ToolCatalog(
        "warehouse", [{"name": f"tool_{i}", "description": "A tool."} for i in range(12)], "cache", 0
    )
    default = await app.model_tool.invoke({"query": "tool"}, "s")
    # Alike by keywords, so meaning orders them: which five is the model's call, that it is five is not.
    names = [c["name"] for c in default["details"]["candidates"]]
    assert len(set(names)) == 5
    assert set(names) <= {f"tool_{i}" for i in range(12)}
    more = await app.model_tool.invoke({"query": "tool", "limit": 50}, "s")
    assert len(more["details"]["candidates"]) == 12


async def test_activate_then_query_shows_loaded(app: Sidecar) -> None:
    activated = await app.model_tool.invoke({"activate": ["warehouse.list_tables", "warehouse.nope"]}, "s")
    assert activated["isError"] is False  # partial success
    assert [(r["id"], r["status"]) for r in activated["details"]["results"]] == [
        ("warehouse.list_tables", "loaded"),
        ("warehouse.nope", "not loaded"),
    ]
    assert [t["id"] for t in activated["details"]["tools"]] == ["warehouse.list_tables"]
    assert activated["text"].splitlines()[:5] == [
        "mcp activate",
        " ✔ warehouse.list_tables · loaded",
        # The signature: every parameter, `?` for the optional one; the description's first paragraph.
        "   warehouse.list_tables(schema: string, limit?: integer) — List the tables of a schema.",
        "     (full schema: mcp/activeTools)",
        " ✘ warehouse.nope · not loaded: Server 'warehouse' has no tool named 'nope'.",
    ]
    tokens = activated["details"]["tokens"]
    assert tokens is not None
    assert tokens["added"] == tokens["session"] > 0
    assert activated["text"].splitlines()[-2:] == [
        activation_text.CALL_HINT,
        f"+{tokens['added']} tokens; session now {tokens['session']} (estimated)",
    ]
    found = await app.model_tool.invoke({"query": "warehouse.list_tables"}, "s")
    [first, *_] = found["details"]["candidates"]
    assert first["loaded"] is True
    assert first["next"] == {"method": "mcp/callTool", "params": {"id": "warehouse.list_tables", "arguments": {}}}
    assert found["text"].splitlines()[1] == " ● warehouse.list_tables(schema) [loaded] — List the tables of a schema."
    # Another session never sees it loaded.
    other = await app.model_tool.invoke({"query": "warehouse.list_tables"}, "other")
    assert other["details"]["candidates"][0]["loaded"] is False


async def test_activate_with_nothing_loaded_is_an_error_result(app: Sidecar) -> None:
    result = await app.model_tool.invoke({"activate": ["warehouse.nope", "elsewhere.tool"]}, "s")
    assert result["isError"] is True
    assert [r["status"] for r in result["details"]["results"]] == ["not loaded", "not loaded"]


@pytest.mark.parametrize(
    ("server", "code", "message"),
    [
        ("nowhere", "server_not_found", "No server named 'nowhere' is configured."),
        ("off", "server_disabled", "The server is disabled."),
    ],
)
async def test_query_of_a_missing_or_disabled_server_is_an_error_result(
    app: Sidecar, server: str, code: DiagnosticCode, message: str
) -> None:
    result = await app.model_tool.invoke({"query": "x", "server": server}, "s")
    assert result["isError"] is True
    assert result["details"]["diagnostic"] == {
        "code": code,
        "operation": "discover",
        "server": server,
        "message": message,
        "hint": model_hint(code, server),
    }
    assert result["text"] == f"{server}: [{code}] {message} {model_hint(code, server)}"


async def test_no_match_says_so(app: Sidecar) -> None:
    result = await app.model_tool.invoke({"query": "zebra ", "kind": "tools"}, "s")
    text = 'mcp discover "zebra "\n (no matching candidates)\n' + nothing_matches(Scope(kind="tools"))
    assert result == {
        "text": text,
        "isError": False,
        "details": {
            "query": "zebra ",
            "kind": "tools",
            "session": "s",
            "candidates": [],
            "unavailable": [],
            "refused": [],
            "text": text,
        },
    }


def model_hint(code: DiagnosticCode, server: str) -> str:
    return MODEL_HINTS[code].format(server=server) if code in MODEL_HINTS else HINTS[code]


def test_hints_a_model_reads_name_no_file_and_say_what_to_do() -> None:
    assert set(MODEL_HINTS) <= set(HINTS)
    # Every code whose usual hint points at a document or a protocol method has a model's own.
    for code, hint in HINTS.items():
        if "docs/" in hint or "mcp/" in hint or ".md" in hint:
            assert code in MODEL_HINTS, code
    for code, hint in MODEL_HINTS.items():
        assert "docs/" not in hint, code
        assert "mcp/" not in hint, code
        assert hint.startswith(("Retry", "Ask the user", "Activate")), code


def test_vscode_declares_the_fixed_part_of_the_definition(app: Sidecar) -> None:
    """package.json cannot carry the server directory: it holds the fixed description and the schema."""
    package = json.loads((Path(__file__).parents[3] / "editor-clients/vscode/package.json").read_text("utf-8"))
    declared = {t["name"]: t for t in package["contributes"]["languageModelTools"]}
    definition = app.model_tool.definition()
    assert declared["mcp_tools"]["modelDescription"] == model_tool.DESCRIPTION
    assert definition["description"].startswith(model_tool.DESCRIPTION + "\n\nServers (")
    assert declared["mcp_tools"]["inputSchema"] == definition["inputSchema"]
    call = definition["call"]
    assert declared[call["name"]]["modelDescription"] == call["description"]
    assert declared[call["name"]]["inputSchema"] == call["inputSchema"]
    assert "signature its activation showed" in call["description"]
