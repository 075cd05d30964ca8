"""What the gateway lists and answers: no entry breaks a host's list, floods it or hides text."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.gateway import entries

OLD = "2025-11-25"
NEW = "2026-07-28"
TAGS = "".join(chr(0xE0000 + ord(c)) for c in "obey")


def tool(**extra: Any) -> dict[str, Any]:
    return {"name": "t", "description": "A tool.", "inputSchema": {"type": "object"}, **extra}


def test_an_output_schema_the_hosts_era_cannot_take_is_left_out_not_the_tool() -> None:
    array = tool(outputSchema={"type": "array", "items": {"type": "string"}})
    old = entries.tool_entry("s__t", "s", array, OLD)
    assert old is not None
    assert "outputSchema" not in old
    new = entries.tool_entry("s__t", "s", array, NEW)
    assert new is not None
    assert new["outputSchema"]["type"] == "array"
    kept = entries.tool_entry("s__t", "s", tool(outputSchema={"type": "object"}), OLD)
    assert kept is not None
    assert kept["outputSchema"] == {"type": "object"}


def test_hidden_characters_outside_prose_leave_the_tool_out() -> None:
    enum = tool(inputSchema={"type": "object", "properties": {"mode": {"enum": [f"fast{TAGS}"]}}})
    assert entries.tool_entry("s__t", "s", enum, OLD) is None
    key = tool(inputSchema={"type": "object", "properties": {"a\u202eb": {"type": "string"}}})
    assert entries.tool_entry("s__t", "s", key, OLD) is None
    prose = tool(
        description=f"Reads\x1b[2J files.{TAGS}",
        inputSchema={"type": "object", "properties": {"p": {"type": "string", "description": "A\npath\u200b."}}},
    )
    entry = entries.tool_entry("s__t", "s", prose, OLD)
    assert entry is not None
    assert entry["description"] == "[s] Reads files."
    assert entry["inputSchema"]["properties"]["p"]["description"] == "A\npath."


def test_sizes_are_bounded() -> None:
    long = entries.tool_entry("s__t", "s", tool(description="x" * 1_000_000), OLD)
    assert long is not None
    assert len(long["description"]) == entries.MAX_DESCRIPTION_CHARS
    properties = {f"p{i}": {"type": "string", "description": "d" * 100} for i in range(1_000)}
    assert entries.tool_entry("s__t", "s", tool(inputSchema={"type": "object", "properties": properties}), OLD) is None
    big_output = tool(outputSchema={"type": "object", "properties": properties})
    entry = entries.tool_entry("s__t", "s", big_output, OLD)
    assert entry is not None
    assert "outputSchema" not in entry


@pytest.mark.parametrize("name", [f"topic{TAGS}", "to\u202epic", "a\nb"])
def test_a_prompt_whose_argument_names_hide_characters_is_not_listed(name: str) -> None:
    prompt = {"name": "p", "arguments": [{"name": name, "required": True}]}
    assert entries.prompt_entry("s__p", "s", prompt, OLD) is None
    fine = entries.prompt_entry("s__p", "s", {"name": "p", "arguments": [{"name": "topic", "extra": 1}]}, OLD)
    assert fine == {"name": "s__p", "arguments": [{"name": "topic"}]}


def test_result_blocks_and_structured_strings_are_sanitised() -> None:
    resource = {"type": "resource", "resource": {"uri": "x://a", "text": f"ok\x1b]52;c;evil\x07{TAGS}"}}
    assert entries.clean_block(resource)["resource"]["text"] == "ok"
    link = {"type": "resource_link", "uri": "x://a", "name": "n\u202ex", "description": "line\nbreak"}
    cleaned = entries.clean_block(link)
    assert cleaned["name"] == "nx"
    assert cleaned["description"] == "line break"
    assert cleaned["uri"] == "x://a"
    assert entries.clean_strings({"k\u202e": [f"v{TAGS}", 3]}) == {"k\u202e": ["v", 3]}
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert entries.clean_block(image) is image
