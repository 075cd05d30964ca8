"""The status matrix as text (`mcp-sidecar status`, `/mcp list`, Neovim's `:Mcp`): with an engine, a
`Shared` column and the engine's line with its clients; without one, neither. Each server's token
estimate in its column, and what every counted server's tools cost together under the table."""

from __future__ import annotations

import pytest

from mcp_sidecar.output.render import duration, status_matrix, tools_list
from mcp_sidecar.protocol.results import ContextTokens, EngineStatus, ServerToolsResult, StatusResult, StatusRow


def row(name: str, shared_by: int, tokens: int | None = None) -> StatusRow:
    return {
        "name": name,
        "scope": "global",
        "transport": "stdio",
        "state": "connected",
        "description": None,
        "protocolVersion": None,
        "catalog": {"tools": 3, "resources": None, "templates": None, "prompts": None},
        "catalogSource": "live",
        "loaded": 1,
        "lastDiagnostic": None,
        "approvalRequired": False,
        "sharedBy": shared_by,
        "tokens": tokens,
    }


def status(engine: EngineStatus | None, context: ContextTokens | None = None) -> StatusResult:
    return {
        "servers": [row("basic", 3, 1234), row("memory", 1)],
        "configFiles": [],
        "trustedWorkspace": False,
        "pendingApprovals": [],
        "diagnostics": [],
        "engine": engine,
        "profile": None,
        "profiles": [],
        "tokens": context,
        "budget": None,
    }


ENGINE: EngineStatus = {
    "pid": 4242,
    "version": "0.1.0",
    "since": "2026-01-01T00:00:00Z",
    "uptimeSeconds": 185,
    "clients": [
        {"kind": "lsp", "workspace": "/work/app", "since": "2026-01-01T00:00:01Z", "thisClient": False},
        {"kind": "mcp", "workspace": "/work/app\x1b[2J", "since": "2026-01-01T00:00:02Z", "thisClient": False},
        {"kind": "cli", "workspace": None, "since": "2026-01-01T00:00:03Z", "thisClient": True},
    ],
}


def test_with_an_engine_the_matrix_counts_sharers_and_lists_the_clients() -> None:
    lines = status_matrix(status(ENGINE)).splitlines()

    assert lines[0].split()[-2:] == ["Loaded", "Shared"]
    assert lines[1].split()[-2:] == ["1", "3"]
    assert lines[2].split()[-2:] == ["1", "1"]
    assert lines[3:] == [
        "Engine pid 4242 · mcp-sidecar 0.1.0 · up 3m 5s · 3 clients:",
        "  lsp  /work/app",
        "  mcp  /work/app",  # a workspace's escape sequence cannot reach the terminal
        "  cli  (no workspace) (this client)",
    ]


def test_in_a_process_of_its_own_the_matrix_has_no_engine_and_no_shared_column() -> None:
    text = status_matrix(status(None))

    assert "Shared" not in text.splitlines()[0]
    assert "Engine" not in text
    assert text.splitlines()[1].split()[-1] == "1"  # Loaded is the last column


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (42, "42s"), (185, "3m 5s"), (3600, "1h 0m"), (7440, "2h 4m"), (3 * 86400 + 7300, "3d 2h")],
)
def test_durations_read_in_their_two_largest_units(seconds: int, text: str) -> None:
    assert duration(seconds) == text


def test_each_row_shows_its_estimate_and_the_line_under_the_table_what_all_cost() -> None:
    context: ContextTokens = {
        "tokenizer": "llama-2-bpe",
        "allTools": 1234,
        "counted": 1,
        "enabled": 2,
        "modelTool": 980,
    }
    lines = status_matrix(status(None, context)).splitlines()

    assert lines[0].split()[4:6] == ["Tools", "Tokens"]
    assert lines[1].split()[5:7] == ["3", "1,234"]
    assert lines[2].split()[5:7] == ["3", "—"]  # not counted yet
    assert lines[3] == (
        "Tool definitions: 1,234 tokens (1 of 2 enabled servers counted); mcp_tools itself 980 tokens"
        " · estimated (llama-2-bpe)"
    )


def test_nothing_counted_yet_or_no_tokenizer_adds_no_line() -> None:
    nothing: ContextTokens = {"tokenizer": "llama-2-bpe", "allTools": 0, "counted": 0, "enabled": 2, "modelTool": None}
    assert len(status_matrix(status(None, nothing)).splitlines()) == 3
    assert len(status_matrix(status(None, None)).splitlines()) == 3


def test_a_session_budget_is_one_line_and_none_adds_nothing() -> None:
    limited = status(None)
    limited["budget"] = {"maxTools": 12, "maxTokens": 6000}
    assert status_matrix(limited).splitlines()[-1] == "Session budget: at most 12 tools and 6,000 tokens active at once"
    limited["budget"] = {"maxTools": 1, "maxTokens": None}
    assert status_matrix(limited).splitlines()[-1] == "Session budget: at most 1 tool active at once"
    assert "budget" not in status_matrix(status(None))


def test_a_servers_tools_show_their_estimates() -> None:
    result: ServerToolsResult = {
        "server": "demo",
        "source": "live",
        "tools": [
            {
                "id": "demo.add",
                "modelName": "mcp__demo__add",
                "server": "demo",
                "name": "add",
                "tokens": 63,
                "description": "Add two numbers.",
                "inputSchema": {"type": "object", "required": ["a", "b"]},
            },
            {"id": "demo.now", "modelName": "mcp__demo__now", "server": "demo", "name": "now", "tokens": 1},
        ],
        "hiddenByFilters": 0,
        "refused": [],
        "tokens": 64,
    }
    assert tools_list(result).splitlines() == [
        "demo · 2 tools (live) · 64 tokens (estimated)",
        "  demo.add(a, b) · 63 tokens  Add two numbers.",
        "  demo.now() · 1 token",
    ]
    result["tokens"] = None
    del result["tools"][0]["tokens"]
    assert tools_list(result).splitlines()[:2] == ["demo · 2 tools (live)", "  demo.add(a, b)  Add two numbers."]
