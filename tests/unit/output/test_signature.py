"""Tool signatures: every parameter reaches the model within its budget, and hostile schemas render safely."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sidecar.output import signature
from mcp_sidecar.output.signature import POINTER, compact, multiline

ECHO: dict[str, Any] = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text to echo."},
            "prefix": {"type": "string", "default": ">", "description": "Put before the text."},
        },
        "required": ["text"],
    },
}


def tool(properties: Any, required: Any = None, description: Any = "Does it.", **schema: Any) -> dict[str, Any]:
    input_schema: dict[str, Any] = {"type": "object", "properties": properties, **schema}
    if required is not None:
        input_schema["required"] = required
    return {"name": "t", "description": description, "inputSchema": input_schema}


def signature_line(properties: Any, required: Any = None, **schema: Any) -> str:
    """The first line of a roomy compact signature: just the parameter list."""
    return compact("s.t", tool(properties, required, **schema), 10_000).splitlines()[0].removesuffix(" — Does it.")


def test_every_parameter_with_type_requiredness_default_and_descriptions() -> None:
    assert compact("basic.echo", ECHO, 1000) == (
        'basic.echo(text: string, prefix?: string = ">") — Echo the text back.\n'
        "  text: The text to echo.\n"
        "  prefix: Put before the text."
    )


def test_types_enums_unions_arrays_and_nested_objects() -> None:
    properties = {
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "level": {"enum": [1, 2, None]},
        "kind": {"const": "file"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "any_list": {"type": "array"},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "either": {"oneOf": [{"type": "number"}, {"type": "boolean"}]},
        "both": {"type": ["string", "null"]},
        "opts": {
            "type": "object",
            "properties": {"depth": {"type": "integer"}, "deep": {"type": "object", "properties": {"x": {}}}},
            "required": ["depth"],
        },
        "rows": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        "free": {},
    }
    assert signature_line(properties, ["mode"]) == (
        's.t(mode: "fast"|"slow", level?: 1|2|null, kind?: "file", tags?: array of string,'
        " ids?: array of (string|integer), any_list?: array, maybe?: string|null = null,"
        " either?: number|boolean, both?: string|null, opts?: {depth: integer, deep?: object},"
        " rows?: array of {id?: integer}, free?: any)"
    )


def test_refs_resolve_within_defs_and_recursion_stops() -> None:
    defs = {
        "Color": {"type": "string", "enum": ["red", "green"]},
        "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "number"}}},
        "Loop": {"$ref": "#/$defs/Loop"},
    }
    properties = {
        "color": {"$ref": "#/$defs/Color"},
        "old": {"$ref": "#/definitions/Old"},
        "node": {"$ref": "#/$defs/Node"},
        "loop": {"$ref": "#/$defs/Loop"},
        "remote": {"$ref": "https://example.com/schema.json"},
    }
    text = compact("s.t", tool(properties, definitions={"Old": {"type": "integer"}}, **{"$defs": defs}), 10_000)
    assert text == (
        's.t(color?: "red"|"green", old?: integer, node?: {next?: object, v?: number}, loop?: object, remote?: any)'
        f" — Does it.\n  ({POINTER})"
    )


def test_a_required_name_the_schema_does_not_describe_is_still_listed() -> None:
    assert signature_line({"a": {"type": "string"}}, ["b", "a", "b", 7]) == "s.t(a: string, b: any)"


def test_no_parameters_and_no_description() -> None:
    assert compact("s.t", {"name": "t"}, 100) == "s.t()"
    assert compact("s.t", {"name": "t", "inputSchema": {"type": "object"}}, 100) == "s.t()"


def test_the_description_is_its_first_paragraph_and_more_points_at_the_full_schema() -> None:
    descriptor = {**ECHO, "description": "  Echo   the\ntext back.\n\nSecond paragraph.\n"}
    assert compact("basic.echo", descriptor, 1000).splitlines()[0].endswith(" — Echo the text back.")
    assert compact("basic.echo", descriptor, 1000).splitlines()[-1] == f"  ({POINTER})"


WIDE = tool(
    {
        "query": {"type": "string", "description": "What to look for, in plain words."},
        "mode": {"type": "string", "enum": ["fast", "exact"], "default": "fast", "description": "Matching."},
        "limit": {"type": "integer", "default": 10},
    },
    ["query"],
    description="Search the index for documents that match the query, newest first, and return their titles and"
    " links so that the caller can read the ones it needs.",
)


def test_budget_degrades_in_steps_and_says_where_the_rest_is() -> None:
    full = (
        's.search(query: string, mode?: "fast"|"exact" = "fast", limit?: integer = 10) — Search the index for'
        " documents that match the query, newest first, and return their titles and links so that the caller can"
        " read the ones it needs.\n"
        "  query: What to look for, in plain words.\n"
        "  mode: Matching."
    )
    assert compact("s.search", WIDE, len(full)) == full
    no_parameter_lines = full.split("\n")[0] + f"\n  ({POINTER})"
    assert compact("s.search", WIDE, len(full) - 1) == no_parameter_lines
    short_description = (
        's.search(query: string, mode?: "fast"|"exact" = "fast", limit?: integer = 10) — Search the index for'
        f" documents that match the query, newest first, and return…\n  ({POINTER})"
    )
    assert compact("s.search", WIDE, len(no_parameter_lines) - 1) == short_description
    types_described = (
        "s.search(query: string, mode?: string, limit?: integer) — Search the index for documents that match the"
        f" query, newest first, and return…\n  ({POINTER})"
    )
    assert compact("s.search", WIDE, len(short_description) - 1) == types_described
    types_only = f"s.search(query: string, mode?: string, limit?: integer)\n  ({POINTER})"
    assert compact("s.search", WIDE, len(types_described) - 1) == types_only
    summary = f"s.search — 3 parameters: query, mode?, limit? — {POINTER}"
    assert compact("s.search", WIDE, len(types_only) - 1) == summary
    assert compact("s.search", WIDE, len(summary) - 1) == f"s.search — 3 parameters: query, mode?, … — {POINTER}"
    assert compact("s.search", WIDE, 10) == f"s.search — 3 parameters — {POINTER}"


def test_many_parameters_are_summarised_within_the_budget() -> None:
    descriptor = tool({f"p{i}": {"type": "string", "description": "x" * 50} for i in range(200)}, ["p0"])
    text = compact("big.tool", descriptor, 400)
    assert len(text) <= 400
    assert text.startswith("big.tool — 200 parameters: p0, p1?, p2?, ")
    assert text.endswith(f", … — {POINTER}")


def test_hostile_strings_are_sanitised_and_bounded() -> None:
    properties = {
        "na\nme\u202e": {"type": "string\x1b[31m", "description": "line one\nline\u200b two\x07"},
        "choice": {"enum": ["a\nb", "\U000e0069gnore", "x" * 100]},
        "dflt": {"type": "string", "default": "\x1b]52;c;Zm9v\x07evil\r\nrow"},
    }
    text = compact("s.t", tool(properties, description="Does\x1b[2J it.\u2066"), 10_000)
    assert text == (
        's.t(na me?: string, choice?: "a\\nb"|"gnore"|"' + "x" * 38 + "…,"
        ' dflt?: string = "\\u001b]52;c;Zm9v\\u0007evil\\r\\nrow")'
        " — Does it.\n  na me: line one line two\n  (" + POINTER + ")"
    )


def test_long_names_and_descriptions_are_cut() -> None:
    long_name = "n" * 100
    descriptor = tool({long_name: {"type": "string", "description": "d" * 500}}, description="w" * 500)
    text = compact("s.t", descriptor, 10_000)
    first, parameter_line, pointer = text.split("\n")
    assert first == f"s.t({'n' * 63}…?: string) — {'w' * 299}…"
    assert parameter_line == f"  {'n' * 63}…: {'d' * 119}…"
    assert pointer == f"  ({POINTER})"


def test_malformed_schemas_render_what_makes_sense() -> None:
    circular: list[Any] = []
    circular.append(circular)
    assert compact("s.t", {"inputSchema": "nope", "description": 42}, 100) == "s.t()"
    assert compact("s.t", "not a mapping", 100) == "s.t()"  # type: ignore[arg-type]
    assert signature_line(["a", "b"], "a") == "s.t()"
    assert signature_line({"a": "string", "b": None, "c": {"type": 7}}, {"a": 1}) == ("s.t(a?: any, b?: any, c?: any)")
    text = compact("s.t", tool({"a": {"type": "array", "items": [1]}, "b": {"default": circular}}), 1000)
    assert text == f"s.t(a?: array, b?: any = …) — Does it.\n  ({POINTER})"
    assert signature_line({"e": {"enum": []}, "u": {"anyOf": []}}) == "s.t(e?: enum, u?: any)"


def test_deep_and_wide_refs_stay_bounded() -> None:
    defs = {f"D{i}": {"anyOf": [{"$ref": f"#/$defs/D{i + 1}"} for _ in range(20)]} for i in range(30)}
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        deep = {"anyOf": [deep]}
    text = compact("s.t", tool({"a": {"$ref": "#/$defs/D0"}, "b": deep}, **{"$defs": defs}), 10_000)
    assert text == f"s.t(a?: any, b?: any) — Does it.\n  ({POINTER})"


def test_output_is_deterministic() -> None:
    assert compact("basic.echo", WIDE, 150) == compact("basic.echo", dict(WIDE), 150)
    assert multiline("basic.echo", WIDE) == multiline("basic.echo", dict(WIDE))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
SCHEMA_KEYS = st.sampled_from(["type", "properties", "required", "enum", "anyOf", "items", "$ref", "default"])


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(SCHEMA_KEYS, JSON, max_size=5),
    st.dictionaries(st.text(max_size=6), st.dictionaries(SCHEMA_KEYS, JSON, max_size=4), max_size=4),
    st.integers(min_value=0, max_value=300),
)
def test_any_json_schema_renders_within_budget_or_as_the_smallest_summary(
    schema: dict[str, Any], properties: dict[str, Any], budget: int
) -> None:
    descriptor = {"description": "d", "inputSchema": {**schema, "properties": properties}}
    text = compact("s.t", descriptor, budget)
    assert len(text) <= budget or text.endswith(f"parameters — {POINTER}") or text.endswith(f"parameter — {POINTER}")
    assert isinstance(multiline("s.t", descriptor), str)


def test_multiline_shows_a_paragraph_per_parameter_and_the_annotations() -> None:
    descriptor = {
        **WIDE,
        "title": "Search\nthe index",
        "description": "Search the index.\n\nNewest first.\n  Titles and links.",
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False, "x": 1},
    }
    assert multiline("s.search", descriptor) == (
        "s.search — Search the index\n"
        "\n"
        "Search the index.\n"
        "\n"
        "Newest first.\n"
        "  Titles and links.\n"
        "\n"
        "Parameters\n"
        "  query  string · required\n"
        "    What to look for, in plain words.\n"
        "\n"
        '  mode  string · optional · default "fast"\n'
        '    one of: "fast", "exact"\n'
        "    Matching.\n"
        "\n"
        "  limit  integer · optional · default 10\n"
        "\n"
        "Annotations: read-only, not destructive, closed world"
    )


def test_multiline_without_parameters_and_with_hostile_text() -> None:
    descriptor = {"description": "Runs\x1b[2J.\r\nNow\u202e.", "annotations": {"idempotentHint": "yes"}}
    assert multiline("s.t\n", descriptor) == "s.t \n\nRuns.\nNow.\n\nNo parameters"


def test_multiline_shows_the_properties_of_a_nested_object_one_level_down() -> None:
    defs = {"Filters": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}}
    properties = {"filters": {"anyOf": [{"$ref": "#/$defs/Filters"}, {"type": "null"}], "description": "Narrow it."}}
    assert multiline("s.t", tool(properties, **{"$defs": defs})) == (
        "s.t\n"
        "\n"
        "Does it.\n"
        "\n"
        "Parameters\n"
        "  filters  {tags?: array of string}|null · optional\n"
        "    Narrow it.\n"
        "\n"
        "  filters.tags  array of string · optional"
    )


def _fan_out(depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    return leaf if depth == 0 else {"type": ["array"] * 9, "items": _fan_out(depth - 1, leaf)}


def test_a_small_schema_that_fans_out_renders_a_bounded_number_of_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Type lists, unions and `$ref`s multiply: without the visit budget this schema took minutes."""
    inner = _fan_out(2, {"type": "string"})
    outer = _fan_out(5, {"type": ["object"] * 9, "properties": {"q": {"$ref": "#/$defs/H"}}})
    descriptor = {"name": "boom", "inputSchema": {"type": "object", "$defs": {"H": inner}, "properties": {"p": outer}}}
    calls = 0
    real = signature.type_text

    def counting(*args: Any, **kwargs: Any) -> str:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(signature, "type_text", counting)
    text = compact("raw.boom", descriptor, 240)
    person = multiline("raw.boom", descriptor)
    # At most five rendering steps and the person's view, each stopping after MAX_VISITS nodes.
    assert calls <= 6 * (signature.MAX_VISITS + 50)
    assert text.startswith("raw.boom(p?: array of array of ")
    assert text.endswith(f"({POINTER})")
    assert person.startswith("raw.boom\n\nParameters\n  p  ")


def test_huge_descriptions_and_parameter_counts_are_bounded() -> None:
    paragraphs = "word\n\n" * 100_000
    descriptor = {
        "name": "big",
        "description": "Does much. " * 100_000,
        "inputSchema": {
            "type": "object",
            "properties": {f"p{i}": {"type": "string", "description": paragraphs} for i in range(300)},
        },
    }
    text = compact("x.big", descriptor, 240)
    assert len(text) <= 240
    assert text.startswith("x.big — 300 parameters: p0?, p1?")
    person = multiline("x.big", descriptor)
    assert len(person) < 600_000
    assert person.endswith("… and 100 more parameters (the whole schema: --json)")
