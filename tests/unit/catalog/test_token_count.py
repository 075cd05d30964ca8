"""Token estimates of tool definitions (`catalog/token_count.py`): exactly the `tokenizers` library's
count with Llama 2's file from the `wordllama` package, on the compact JSON a host sends its model;
kept beside a disk copy only for that very file and tokenizer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sidecar.catalog import semantic, token_count
from mcp_sidecar.catalog.token_count import Counted, TokenCounter
from support.tokens import definition_tokens, text_tokens

TOOL: dict[str, Any] = {
    "name": "list_tables",
    "title": "List tables",
    "description": "List the tables of a schema.\n\nReturns  names, one per line — ünïcode too 😀.",
    "inputSchema": {"type": "object", "properties": {"schema": {"type": "string"}}, "required": ["schema"]},
    "outputSchema": {"type": "object", "properties": {"tables": {"type": "array"}}},
    "annotations": {"readOnlyHint": True},
    "icons": [{"src": "https://example.com/i.png"}],
}


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    found = token_count.load_counter(None)
    assert found is not None, "wordllama is a dependency"
    return found


def test_the_definition_is_the_four_fields_a_model_sees_as_compact_json() -> None:
    shown = {k: TOOL[k] for k in ("name", "description", "inputSchema", "outputSchema")}
    text = token_count.definition_text(TOOL)
    assert text == json.dumps(shown, separators=(",", ":"), ensure_ascii=False)
    assert text.startswith('{"name":"list_tables","description":')
    assert "ü" in text  # not escaped: a host sends the characters


def test_a_definition_counts_as_the_tokenizers_library_counts_it(counter: TokenCounter) -> None:
    assert counter.tool(TOOL) == definition_tokens(TOOL) > 40


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a",
        " leading and  double   spaces ",
        "tabs\tand\nnew\r\nlines",
        '{"type":"object","properties":{"path":{"type":"string"}}}',
        "snake_case camelCase kebab-case SCREAMING_CASE v1.2.3 0xDEADBEEF",
        "中文 日本語 한국어 émoji 😀👍🏽 \u200b zero-width",
        "a" * 63,
    ],
)
def test_texts_count_as_the_tokenizers_library_counts_them(counter: TokenCounter, text: str) -> None:
    assert counter.count(text) == text_tokens(text)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=60))
def test_any_short_text_counts_as_the_tokenizers_library_counts_it(text: str) -> None:
    counter = token_count.load_counter(None)
    assert counter is not None
    assert counter.count(text) == text_tokens(text)


def test_the_pairs_that_join_are_those_inside_the_vocabularys_tokens(counter: TokenCounter) -> None:
    root = semantic.package_dir()
    assert root is not None
    vocab = json.loads((root / semantic.TOKENIZER).read_bytes())["model"]["vocab"]
    special = {"<s>", "</s>", "<unk>"}
    built = [t for t in vocab if t not in special and not (t.startswith("<0x") and len(t) == 6)]
    inside = {t[i : i + 2] for t in built for i in range(len(t) - 1)}
    # Every pair a merge makes is inside some token, and every pair inside a token that merges
    # build (all but the special tokens `<s>`, `</s>`, `<unk>` and the byte tokens) is a merge's.
    assert counter._pairs <= inside  # noqa: SLF001 - the table the cuts rely on
    assert inside == counter._pairs  # noqa: SLF001


def test_a_run_past_the_piece_limit_is_cut_and_stays_close(counter: TokenCounter) -> None:
    text = "x" * 70 + " " + "-" * 200
    assert abs(counter.count(text) - text_tokens(text)) <= 3


def test_past_the_budget_new_pieces_are_estimated_from_their_length(counter: TokenCounter) -> None:
    words = "internationalization representational acknowledgement"
    exact = counter.count(words)
    fresh = TokenCounter.__new__(TokenCounter)  # the same tables, empty caches
    for slot in ("digest", "_merges", "_pairs", "_lock"):
        object.__setattr__(fresh, slot, getattr(counter, slot))
    fresh._words, fresh._pieces = {}, {}  # noqa: SLF001
    estimated = fresh.count(words, budget=[0])
    assert (exact, estimated) == (text_tokens(words), len(words.replace(" ", "")) // 2 + 3)
    assert (fresh._words, fresh._pieces) == ({}, {})  # noqa: SLF001 - an estimate is never remembered
    assert fresh.count(words) == exact


def test_a_catalog_reuses_the_counts_of_unchanged_definitions(counter: TokenCounter) -> None:
    tools = [TOOL, {"name": "echo", "inputSchema": {"type": "object"}}]
    first = token_count.count_catalog(counter, tools)
    assert first.tokens == {"list_tables": counter.tool(TOOL), "echo": counter.tool(tools[1])}

    # A planted count shows reuse: the same text keeps the earlier count, a changed one is counted.
    earlier = Counted({"list_tables": 1, "echo": 1}, dict(first.texts))
    changed = [TOOL, {"name": "echo", "description": "Now described.", "inputSchema": {"type": "object"}}]
    again = token_count.count_catalog(counter, changed, earlier)
    assert again.tokens == {"list_tables": 1, "echo": counter.tool(changed[1])}
    assert again.texts["list_tables"] == first.texts["list_tables"] != 0
    assert again.texts["echo"] != first.texts["echo"]


def test_kept_figures_are_used_only_for_their_catalog_file_and_tokenizer() -> None:
    counted = Counted({"echo": 12, "add": 30}, {"echo": 5, "add": 6})
    data = token_count.kept_bytes("100:abc", "tok1", counted)

    kept = token_count.from_kept(data, "tok1", "100:abc")
    assert kept == Counted(counted.tokens, counted.texts, "100:abc")
    assert token_count.from_kept(data, "tok1") == kept  # any copy's, for reuse by definition
    assert token_count.from_kept(data, "tok1", "101:abd") is None
    assert token_count.from_kept(data, "tok2", "100:abc") is None


@pytest.mark.parametrize(
    "damage",
    [
        b"not json",
        b"[]",
        json.dumps({"version": 2, "catalog": "c", "tokenizer": "t", "tools": {}}).encode(),
        json.dumps({"version": 1, "catalog": "c", "tokenizer": "t", "tools": {"echo": [True, 1]}}).encode(),
        json.dumps({"version": 1, "catalog": "c", "tokenizer": "t", "tools": {"echo": [-1, 1]}}).encode(),
        json.dumps({"version": 1, "catalog": "c", "tokenizer": "t", "tools": {"echo": 3}}).encode(),
        json.dumps({"version": 1, "catalog": "c", "tokenizer": "t", "tools": []}).encode(),
    ],
)
def test_damaged_kept_figures_are_counted_again(damage: bytes) -> None:
    assert token_count.from_kept(damage, "t", "c") is None


def test_the_counters_digest_is_known_from_the_files_before_loading(counter: TokenCounter) -> None:
    assert token_count.files_digest() == counter.digest
