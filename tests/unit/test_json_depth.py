"""Nesting read from JSON bytes without recursion, and values past a bound cut out (`json_depth.py`)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sidecar import json_depth
from mcp_sidecar.catalog import names
from mcp_sidecar.json_depth import MARKER, max_depth, nesting, prune

# Strings that look like structure to a naive scanner: brackets, quotes, backslash runs.
TRICKY = st.text(alphabet='{}[]"\\,:ab \n\u00e9', max_size=12)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=30,
)


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


@settings(max_examples=300, deadline=None)  # numpy loads on the first example
@given(VALUES, st.booleans())
def test_the_depth_read_from_the_bytes_is_the_parsed_depth(value: Any, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    assert max_depth(data) == depth_of(value)
    assert nesting(value, 1000) == depth_of(value)


@settings(max_examples=300, deadline=None)  # numpy loads on the first example
@given(VALUES, st.integers(min_value=1, max_value=4))
def test_pruning_keeps_what_is_shallow_and_marks_what_is_not(value: Any, limit: int) -> None:
    data = json.dumps(value).encode("utf-8")
    pruned = prune(data, limit)
    assert pruned is not None
    parsed = json.loads(pruned)
    assert depth_of(parsed) <= limit
    if depth_of(value) <= limit:
        assert pruned is data
    else:
        assert MARKER in pruned


def test_thousands_of_levels_are_read_and_cut_without_recursion() -> None:
    deep = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"ok"},{"name":"d","x":' + b"[" * 50_000
    deep += b"]" * 50_000 + b"}]}}"
    assert max_depth(deep) == 50_004
    pruned = prune(deep)
    assert pruned is not None
    message = json.loads(pruned)
    tools = message["result"]["tools"]
    assert tools[0] == {"name": "ok"}
    assert nesting(tools[1], names.MAX_ENTRY_DEPTH) == names.MAX_ENTRY_DEPTH + 1
    nested: Any = []
    for _ in range(100_000):
        nested = [nested]
    assert nesting(nested, 10) == 11  # stops counting past the limit, never recurses


def test_text_that_is_not_json_gets_no_pruning() -> None:
    assert prune(b'{"a": "open string') is None
    assert prune(b"]]]" + b"[" * 200) is None
    assert prune(b"hello this is not json") == b"hello this is not json"


def test_an_entry_past_the_depth_is_refused_alone_with_its_reason() -> None:
    shallow = {"name": "ok", "inputSchema": {"type": "object"}}
    schema: Any = {"type": "string"}
    for _ in range(40):
        schema = {"type": "object", "properties": {"a": schema}}
    accepted, refused = names.screen("s", "tool", [shallow, {"name": "deep", "inputSchema": schema}])
    assert accepted == [shallow]
    (entry,) = refused
    assert entry["diagnostic"]["message"] == (
        'The server\'s tool "deep" nests objects and arrays more than 64 levels deep (its schema or metadata); '
        "the tool is left out."
    )
    assert names.summary(refused) == ['1 tool nested more than 64 levels deep: "deep"']
    assert json_depth.MESSAGE_DEPTH > names.MAX_ENTRY_DEPTH + 4  # a pruned entry is always refused too
