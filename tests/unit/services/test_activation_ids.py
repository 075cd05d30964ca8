from __future__ import annotations

import pytest

from mcp_sidecar.services.activation import ToolRef, parse_tool_id

SERVERS = ["a", "a_b", "my-server", "x__y"]


@pytest.mark.parametrize(
    ("tool_id", "expected"),
    [
        ("a.list", ToolRef("a", "list")),
        ("a_b.list", ToolRef("a_b", "list")),
        ("a.b.c", ToolRef("a", "b.c")),  # tool names may contain dots
        ("mcp__a__list", ToolRef("a", "list")),
        ("mcp__a_b__list", ToolRef("a_b", "list")),
        ("mcp__x__y__tool", ToolRef("x__y", "tool")),  # longest server name wins
        ("mcp__my-server__do_it", ToolRef("my-server", "do_it")),
        ("my-server.do_it", ToolRef("my-server", "do_it")),
    ],
)
def test_exact_ids(tool_id: str, expected: ToolRef) -> None:
    assert parse_tool_id(tool_id, SERVERS) == expected


@pytest.mark.parametrize("tool_id", ["unknown.tool", "a.", "a", "mcp__a__", "mcp__unknown__t", "A.list", ".a"])
def test_ids_that_name_no_server_tool(tool_id: str) -> None:
    assert parse_tool_id(tool_id, SERVERS) is None
