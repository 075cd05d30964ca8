"""Discovery end to end: ranked search, limits and filters, candidate shapes and their text,
catalogs that fail whole, pagination, refresh, and `mcp_tools`.

One sidecar serves the module, and every one of its discoveries names its server: a server
no test names (`bystander`) must never start. Change notifications, the concurrency bound
and the disk cache are in test_discovery_catalogs.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mcp_sidecar.output.activation_text import CALL_HINT, tokens_line
from mcp_sidecar.output.discovery_text import LOADED_NOTE
from support.discovery import BASIC_TOOLS, HINTS, cache_files, discover, ids, status_row, without_score
from support.servers import basic_stdio, started_pids
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config
from support.tokens import definition_tokens

pytestmark = pytest.mark.asyncio(loop_scope="module")

INVALID_PARAMS = -32602
REQUEST_FAILED = -32000
QUERY_TOO_LONG = "`query` must be at most 64 KiB; a few words about the capability rank best."
RANKED_TOOLS = {
    "list_tables": "List the tables of a schema.",
    "list_teams": "List the teams of the organisation.",
    "getTeamMembers": "Members of one team.",
    "create-issue": "Open an issue in the tracker.",
    "search_docs": "Find documents by keyword.",
    "run_report": "Run a report; can search archived data.",
}
WAREHOUSE_TOOLS = [*BASIC_TOOLS, *RANKED_TOOLS, "notify_changes"]


@dataclass(frozen=True, slots=True)
class Env:
    sidecar: SidecarClient
    home: Path
    counters: Path


def ranked_args() -> list[str]:
    return [arg for name, description in RANKED_TOOLS.items() for arg in ("--tool", f"{name}:{description}")]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    counters = tmp_path_factory.mktemp("counters")
    project = tmp_path_factory.mktemp("project")
    write_config(
        home,
        {
            "warehouse": basic_stdio("--resources", "--prompts", *ranked_args()),
            "bystander": basic_stdio("--counter-file", str(counters / "bystander")),
            "duplicate": basic_stdio("--duplicate-tool", "--resources"),
            "too-many": basic_stdio("--oversized", "entries"),
            "too-big": basic_stdio("--oversized", "bytes"),
            "paged": basic_stdio("--paginate", "3", "--tools-count", "10"),
            "off": basic_stdio(disabled=True),
        },
    )
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        yield Env(sidecar, home, counters)


# -- server scoping (first: nothing before it may contact `bystander`) -----------------------


async def test_a_server_scoped_search_contacts_only_that_server(env: Env) -> None:
    found = await discover(env.sidecar, "echo", server="warehouse")
    assert ids(found)[0] == "warehouse.echo"
    assert {c["server"] for c in found["candidates"]} == {"warehouse"}
    assert found["unavailable"] == []
    assert started_pids(env.counters / "bystander") == []
    # A catalog never fetched shows null counts, not zero.
    row = await status_row(env.sidecar, "bystander")
    assert (row["state"], row["catalog"], row["catalogSource"]) == (
        "idle",
        {"tools": None, "resources": None, "templates": None, "prompts": None},
        None,
    )


# -- ranking through the protocol -------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("search ", ["warehouse.search_docs", "warehouse.run_report"]),  # name beats description
        ("lis tab", ["warehouse.list_tables"]),  # prefix on the last word
        ("list tea", ["warehouse.list_teams"]),
        ("team members", ["warehouse.getTeamMembers", "warehouse.list_teams"]),  # identifier splitting
        ("create issue", ["warehouse.create-issue"]),
        ("list_teams", ["warehouse.list_teams"]),
        ("tables ", ["warehouse.list_tables"]),  # stemming
    ],
)
async def test_ranking(env: Env, query: str, expected: list[str]) -> None:
    found = await discover(env.sidecar, query, server="warehouse", kind="tools")
    assert ids(found)[: len(expected)] == expected


@pytest.mark.parametrize("query", ["echo", "warehouse.echo", "mcp__warehouse__echo", "WAREHOUSE.ECHO"])
async def test_exact_name_and_ids_rank_first(env: Env, query: str) -> None:
    # `redefine`'s description mentions echo too; the exact spelling still comes first.
    found = await discover(env.sidecar, query, server="warehouse")
    assert ids(found)[:2] == ["warehouse.echo", "warehouse.redefine"]


async def test_equal_scores_keep_catalog_order_and_results_repeat(env: Env) -> None:
    first = await discover(env.sidecar, "", server="warehouse", kind="tools", limit=50)
    assert ids(first) == [f"warehouse.{name}" for name in WAREHOUSE_TOOLS]
    again = await discover(env.sidecar, "", server="warehouse", kind="tools", limit=50)
    assert again == first


# -- limits and filters -----------------------------------------------------------------------


async def test_default_limit_is_five_and_limit_goes_to_fifty(env: Env) -> None:
    default = await discover(env.sidecar, "", server="warehouse", kind="tools")
    assert ids(default) == [f"warehouse.{name}" for name in WAREHOUSE_TOOLS[:5]]
    assert len((await discover(env.sidecar, "", server="warehouse", kind="tools", limit=1))["candidates"]) == 1
    assert len((await discover(env.sidecar, "", server="warehouse", kind="tools", limit=50))["candidates"]) == 15
    assert len((await discover(env.sidecar, "", server="warehouse", limit=50))["candidates"]) == 15 + 3 + 1 + 2


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": 0}, "`limit` must be an integer from 1 to 50."),
        ({"limit": 51}, "`limit` must be an integer from 1 to 50."),
        ({"limit": "5"}, "`limit` must be an integer from 1 to 50."),
        ({"limit": True}, "`limit` must be an integer from 1 to 50."),
        ({"kind": "files"}, "`kind` must be one of all, tools, resources, prompts."),
        ({"query": 7}, "`query` must be a string."),
        ({"query": "x" * (64 * 1024 + 1)}, QUERY_TOO_LONG),
        ({"query": "é" * (32 * 1024 + 1)}, QUERY_TOO_LONG),  # 32 Ki characters, 64 KiB + 2 bytes
        ({"server": ""}, "`server` must be a non-empty string."),
    ],
    ids=[
        "limit-0",
        "limit-51",
        "limit-string",
        "limit-bool",
        "kind",
        "query-type",
        "query-bytes",
        "query-utf8",
        "server-empty",
    ],
)
async def test_invalid_params(env: Env, params: dict[str, Any], message: str) -> None:
    error = await env.sidecar.error("mcp/discover", {"query": "echo", "server": "warehouse", **params})
    assert error.code == INVALID_PARAMS
    assert diagnostic_of(error) == {
        "code": "invalid_params",
        "operation": "discover",
        "message": message,
        "hint": HINTS["invalid_params"],
    }


@pytest.mark.parametrize(
    ("server", "code", "message"),
    [
        ("nowhere", "server_not_found", "No server named 'nowhere' is configured."),
        ("off", "server_disabled", "The server is disabled."),
    ],
)
async def test_unknown_or_disabled_server_is_an_error(env: Env, server: str, code: str, message: str) -> None:
    error = await env.sidecar.error("mcp/discover", {"query": "echo", "server": server})
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error) == {
        "code": code,
        "operation": "discover",
        "server": server,
        "message": message,
        "hint": HINTS[code],
    }


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("tools", [f"warehouse.{name}" for name in WAREHOUSE_TOOLS]),
        ("resources", ["notes://readme", "notes://changelog", "config://settings", "notes://{folder}/{name}"]),
        ("prompts", ["warehouse:review_code", "warehouse:summarize_notes"]),
    ],
)
async def test_kind_filter(env: Env, kind: str, expected: list[str]) -> None:
    found = await discover(env.sidecar, "", server="warehouse", kind=kind, limit=50)
    assert found["kind"] == kind
    assert ids(found) == expected
    # A search keeps to the kind as well: "notes" matches resources, a template and a prompt.
    searched = await discover(env.sidecar, "notes", server="warehouse", kind=kind, limit=50)
    kinds = {"tools": {"tool"}, "resources": {"resource", "template"}, "prompts": {"prompt"}}[kind]
    assert {c["kind"] for c in searched["candidates"]} <= kinds


# -- candidate shapes (docs/protocol.md, mcp/discover) -----------------------------------------


async def test_tool_candidate_shape(env: Env) -> None:
    # Listing the tools counts them (a candidate has its figure once the tokenizer is loaded).
    listed = await env.sidecar.request("mcp/server/tools", {"server": "warehouse"})
    tool = next(t for t in listed["tools"] if t["name"] == "list_tables")
    found = await discover(env.sidecar, "warehouse.list_tables", server="warehouse", limit=1)
    assert [without_score(c) for c in found["candidates"]] == [
        {
            "kind": "tool",
            "id": "warehouse.list_tables",
            "server": "warehouse",
            "name": "list_tables",
            "description": "List the tables of a schema.",
            "required": ["query"],  # required only: the optional `limit` is left out
            "loaded": False,
            "next": {"method": "mcp/activate", "params": {"ids": ["warehouse.list_tables"]}},
            # An exact name or URI: ranked by keywords alone, first.
            "match": {"signals": ["exact", "keyword"], "keywordRank": 1},
            "tokens": definition_tokens(tool),  # what activating it adds
        }
    ]
    assert (found["query"], found["kind"], found["session"]) == ("warehouse.list_tables", "all", "default")


async def test_resource_candidate_shape(env: Env) -> None:
    found = await discover(env.sidecar, "notes://readme", server="warehouse", kind="resources", limit=1)
    assert [without_score(c) for c in found["candidates"]] == [
        {
            "kind": "resource",
            "server": "warehouse",
            "name": "readme",
            "title": "Project readme",
            "uri": "notes://readme",
            "description": "How to set up the warehouse project.",
            "mimeType": "text/markdown",
            "next": {"method": "mcp/read", "params": {"server": "warehouse", "uri": "notes://readme"}},
            # An exact name or URI: ranked by keywords alone, first.
            "match": {"signals": ["exact", "keyword"], "keywordRank": 1},
        }
    ]


async def test_template_candidate_shape(env: Env) -> None:
    found = await discover(env.sidecar, "notes://{folder}/{name}", server="warehouse", kind="resources", limit=1)
    assert [without_score(c) for c in found["candidates"]] == [
        {
            "kind": "template",
            "label": "template",
            "server": "warehouse",
            "name": "note",
            "title": "Note by folder",
            "uriTemplate": "notes://{folder}/{name}",
            "variables": ["folder", "name"],
            "description": "One note, by folder and name.",
            "mimeType": "text/markdown",
            "next": {
                "method": "mcp/read",
                "params": {
                    "server": "warehouse",
                    "template": "notes://{folder}/{name}",
                    "arguments": {"folder": "<folder>", "name": "<name>"},
                },
            },
            # An exact name or URI: ranked by keywords alone, first.
            "match": {"signals": ["exact", "keyword"], "keywordRank": 1},
        }
    ]


async def test_prompt_candidate_shape(env: Env) -> None:
    found = await discover(env.sidecar, "review_code", server="warehouse", kind="prompts", limit=1)
    assert [without_score(c) for c in found["candidates"]] == [
        {
            "kind": "prompt",
            "server": "warehouse",
            "name": "review_code",
            "title": "Code review",
            "description": "Review a piece of code.",
            "arguments": [{"name": "code", "required": True}, {"name": "language", "required": False}],
            "next": {
                "method": "mcp/prompt/preview",
                "params": {"server": "warehouse", "name": "review_code", "arguments": {"code": "", "language": ""}},
            },
            # An exact name or URI: ranked by keywords alone, first.
            "match": {"signals": ["exact", "keyword"], "keywordRank": 1},
        }
    ]


# -- text rendering ---------------------------------------------------------------------------


async def test_text_rendering_is_compact_and_deterministic(env: Env) -> None:
    found = await discover(env.sidecar, "notes", server="warehouse", limit=10)
    assert found["text"] == "\n".join(
        [
            'mcp discover "notes"',
            " ○ warehouse · [template] notes://{folder}/{name} (folder, name) — One note, by folder and name.",
            '   read (fill in the variables): mcp_tools({"read": {"server": "warehouse", "template": '
            '"notes://{folder}/{name}", "arguments": {"folder": "<folder>", "name": "<name>"}}})',
            " ○ warehouse · [prompt] summarize_notes(folder) — Summarize the notes of a folder.",
            "   for people: ask the user to run /mcp prompt warehouse summarize_notes",
            " ○ warehouse · changelog · notes://changelog [text/plain] — Release notes by version.",
            '   read: mcp_tools({"read": {"server": "warehouse", "uri": "notes://changelog"}})',
            " ○ warehouse · Project readme · notes://readme [text/markdown] — How to set up the warehouse project.",
            '   read: mcp_tools({"read": {"server": "warehouse", "uri": "notes://readme"}})',
        ]
    )
    assert (await discover(env.sidecar, "notes", server="warehouse", limit=10))["text"] == found["text"]


async def test_loaded_tools_are_marked_after_activation(env: Env) -> None:
    session = "marks"
    before = await discover(env.sidecar, "list ", server="warehouse", kind="tools", limit=2, session=session)
    # Alike by keywords ("list" in both names): meaning orders them.
    assert before["text"] == "\n".join(
        [
            'mcp discover "list "',
            " ○ warehouse.list_teams(query) — List the teams of the organisation.",
            " ○ warehouse.list_tables(query) — List the tables of a schema.",
            "Activate the tools you need by their exact ids: "
            'mcp_tools({"activate": ["warehouse.list_teams", "warehouse.list_tables"]})',
        ]
    )
    activated = await env.sidecar.request("mcp/activate", {"ids": ["warehouse.list_tables"], "session": session})
    assert [r["status"] for r in activated["results"]] == ["loaded"]
    after = await discover(env.sidecar, "list ", server="warehouse", kind="tools", limit=2, session=session)
    assert after["text"] == "\n".join(
        [
            'mcp discover "list "',
            " ○ warehouse.list_teams(query) — List the teams of the organisation.",
            " ● warehouse.list_tables(query) [loaded] — List the tables of a schema.",
            'Activate the tools you need by their exact ids: mcp_tools({"activate": ["warehouse.list_teams"]})',
            LOADED_NOTE,
        ]
    )
    [other, loaded] = after["candidates"]
    assert (loaded["loaded"], other["loaded"]) == (True, False)
    assert loaded["next"] == {"method": "mcp/callTool", "params": {"id": "warehouse.list_tables", "arguments": {}}}
    # Other sessions are unaffected.
    other_session = await discover(env.sidecar, "list ", server="warehouse", kind="tools", limit=2)
    assert other_session["text"] == before["text"]


# -- catalogs that fail whole -----------------------------------------------------------------


async def test_duplicate_tool_catalog_is_unavailable_and_resources_still_found(env: Env) -> None:
    found = await discover(env.sidecar, "readme", server="duplicate")
    assert ids(found) == ["notes://readme"]
    assert found["unavailable"] == [
        {
            "server": "duplicate",
            "kind": "tools",
            "diagnostic": {
                "code": "protocol_error",
                "operation": "discover",
                "server": "duplicate",
                "message": "The tools catalog lists 'echo' twice.",
                "hint": HINTS["protocol_error"],
            },
        }
    ]
    assert found["text"].splitlines()[-2:] == [
        '   read: mcp_tools({"read": {"server": "duplicate", "uri": "notes://readme"}})',
        " ✘ duplicate tools unavailable: [protocol_error] The tools catalog lists 'echo' twice.",
    ]
    row = await status_row(env.sidecar, "duplicate")
    assert (row["state"], row["catalog"]["tools"], row["catalog"]["resources"]) == ("connected", None, 3)
    # Activation sees the same failure, never part of the catalog.
    activated = await env.sidecar.request("mcp/activate", {"ids": ["duplicate.add"], "session": "dupes"})
    assert activated["results"][0]["diagnostic"]["code"] == "protocol_error"


@pytest.mark.parametrize("server", ["too-many", "too-big"])
async def test_oversized_tool_catalog_is_unavailable(env: Env, server: str) -> None:
    found = await discover(env.sidecar, "bulk", server=server, kind="tools")
    assert found["candidates"] == []
    assert found["unavailable"] == [
        {
            "server": server,
            "kind": "tools",
            "diagnostic": {
                "code": "protocol_error",
                "operation": "discover",
                "server": server,
                "message": "The tools catalog exceeds 10000 entries or 4 MiB of descriptors.",
                "hint": HINTS["protocol_error"],
            },
        }
    ]
    row = await status_row(env.sidecar, server)
    assert (row["catalog"]["tools"], row["catalogSource"]) == (None, None)
    assert server not in cache_files(env.home)


async def test_pagination_is_followed_to_the_end(env: Env) -> None:
    found = await discover(env.sidecar, "", server="paged", kind="tools", limit=50)
    expected = [*BASIC_TOOLS, *(f"synthetic_{i:04d}" for i in range(10))]
    assert ids(found) == [f"paged.{name}" for name in expected]
    # synthetic_0009 is alone on the sixth and last page of three.
    assert ids(await discover(env.sidecar, "synthetic_0009", server="paged", limit=1)) == ["paged.synthetic_0009"]
    assert (await status_row(env.sidecar, "paged"))["catalog"]["tools"] == 18


# -- refresh and status -----------------------------------------------------------------------


async def test_refresh_returns_counts_and_status_shows_them(env: Env) -> None:
    refreshed = await env.sidecar.request("mcp/server/refresh", {"server": "warehouse"})
    counts = {"tools": 15, "resources": 3, "templates": 1, "prompts": 2}
    assert (refreshed["server"], refreshed["toolsSource"], refreshed["diagnostics"]) == ("warehouse", "live", [])
    assert (refreshed["status"]["catalog"], refreshed["status"]["catalogSource"]) == (counts, "live")
    row = await status_row(env.sidecar, "warehouse")
    assert (row["state"], row["catalog"], row["catalogSource"]) == ("connected", counts, "live")
    assert row == refreshed["status"]


async def test_refresh_of_an_unknown_or_disabled_server_is_an_error(env: Env) -> None:
    error = await env.sidecar.error("mcp/server/refresh", {"server": "off"})
    assert error.code == REQUEST_FAILED
    assert diagnostic_of(error)["code"] == "server_disabled"
    error = await env.sidecar.error("mcp/server/refresh", {"server": "nowhere"})
    assert diagnostic_of(error)["code"] == "server_not_found"


# -- mcp_tools --------------------------------------------------------------------------------


async def test_model_tool_definition(env: Env) -> None:
    definition = await env.sidecar.request("mcp/modelTool/definition")
    assert definition["name"] == "mcp_tools"
    assert set(definition["inputSchema"]["properties"]) == {
        "query",
        "kind",
        "server",
        "limit",
        "activate",
        "read",
        "complete",
        "result",
        "wait",
    }
    assert definition["inputSchema"]["additionalProperties"] is False


async def test_model_tool_query_activate_and_read(env: Env) -> None:
    invoke = "mcp/modelTool/invoke"
    session = "model"
    # A model writes whole words (its query's last word is not a prefix being typed): the same
    # answer as an editor's query ending in a space.
    query: dict[str, Any] = {"query": "list tables", "server": "warehouse", "kind": "tools", "limit": 3}
    result = await env.sidecar.request(invoke, {"arguments": query, "session": session})
    assert result["isError"] is False
    as_typed = await discover(env.sidecar, **{**query, "query": "list tables "}, session=session)
    assert result["details"] == {**as_typed, "query": "list tables", "text": result["text"]}
    assert result["text"] == result["details"]["text"]
    assert result["text"].splitlines()[1] == " ○ warehouse.list_tables(query) — List the tables of a schema."

    activate = {"arguments": {"activate": ["warehouse.list_tables"]}, "session": session}
    loaded = await env.sidecar.request(invoke, activate)
    assert loaded["isError"] is False
    assert loaded["text"].splitlines() == [
        "mcp activate",
        " ✔ warehouse.list_tables · loaded",
        "   warehouse.list_tables(query: string, limit?: integer = 10) — List the tables of a schema.",
        CALL_HINT,
        tokens_line(loaded["details"]["tokens"]),
    ]
    assert [t["id"] for t in loaded["details"]["tools"]] == ["warehouse.list_tables"]
    again = await env.sidecar.request(invoke, {"arguments": query, "session": session})
    assert again["text"].splitlines()[1] == " ● warehouse.list_tables(query) [loaded] — List the tables of a schema."

    read = {"arguments": {"read": {"server": "warehouse", "uri": "notes://readme"}}, "session": session}
    done = await env.sidecar.request(invoke, read)
    # Reads are served now (issue 4); test_resources.py covers them in depth.
    assert (done["isError"], done["details"]["contents"][0]["text"]) == (False, "contents of notes://readme")

    both = await env.sidecar.request(invoke, {"arguments": {"query": "x", "activate": ["warehouse.echo"]}})
    assert both["isError"] is True
    assert both["details"]["diagnostic"]["code"] == "invalid_params"


async def test_model_tool_malformed_params_are_a_json_rpc_error(env: Env) -> None:
    error = await env.sidecar.error("mcp/modelTool/invoke", {"arguments": ["query"]})
    assert error.code == INVALID_PARAMS
    assert diagnostic_of(error)["message"] == "`arguments` must be a JSON object."
