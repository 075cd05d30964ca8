"""A tool's input schema as a signature: compact and bounded for a model, multiline for a person.

`compact(tool_id, descriptor, budget_chars)` is what a model reads after activation: the exact
id, every parameter with its type, `?` when optional, `= default`, enum values as `"a"|"b"`,
the properties of a nested object one level down, then the first paragraph of the description
and, when the budget allows, one indented line per described parameter:

    basic.echo(text: string, prefix?: string = ">") — Echo the text back.
      text: The text to echo.

Over the budget it degrades in steps: without the parameter lines, with a shorter description,
with plain types (then without the description), and last a summary (`3 parameters: a, b?, c — full schema:
mcp/activeTools`). Whenever something of the schema is not in the text (a step was taken, a
value was cut, an enum was long, an object was deeper than one level, a description had more
paragraphs) the text ends with the pointer to `mcp/activeTools`.

`multiline(tool_id, descriptor)` is what `/mcp tools SERVER TOOL` shows a person: the title,
the whole description, a paragraph per parameter (type, required or optional, default, enum
values, description) and the tool's annotations.

A schema is server data: every string goes through `one_line` or `strip_controls`, long values
are cut, and a malformed schema (properties that are not an object, `required` that is not a
list, a `$ref` that loops or points nowhere) renders what makes sense instead of raising. The
output depends on the descriptor only (property order is the schema's).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_sidecar.output.sanitize import one_line, strip_controls

POINTER = "full schema: mcp/activeTools"
"""Where the model finds what a compact signature left out."""
DESCRIPTION_CHARS = 300
"""The tool description's first paragraph in a compact signature, at most."""
SHORT_DESCRIPTION_CHARS = 80
"""The description once the budget forced the second step."""
PARAMETER_DESCRIPTION_CHARS = 120
NAME_CHARS = 64
VALUE_CHARS = 40
"""A default, an enum value or a type name, at most (JSON text)."""
ENUM_VALUES = 10
"""Enum values shown in a compact signature; `multiline` shows up to `LIST_VALUES`."""
LIST_VALUES = 50
UNION_MEMBERS = 8
NESTING = 4
"""How deep unions, arrays and `$ref`s are followed before a type is shown as `any`."""
MAX_VISITS = 2_000
"""Schema nodes one rendering looks at: type lists, unions and `$ref`s fan out, so a tiny
schema could otherwise cost exponential time. Past it, types are `any` (and the pointer says so)."""
PARAMETER_SCAN_CHARS = 1_000
"""A parameter's description in `multiline`, at most."""
MAX_PARAMETERS = 200
"""Parameters a signature lists one by one; a tool with more is summarised (`multiline` names the rest)."""
SCAN_CHARS = 8_192
"""How much of a description is read for its first paragraph (or, for `multiline`, shown)."""

_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SPACES = re.compile(r"\s+")
_REF_PREFIXES = ("#/$defs/", "#/definitions/")


def _cut(text: str, limit: int) -> tuple[str, bool]:
    """`text` at most `limit` characters (the last one `…` when cut), and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[: max(limit - 1, 0)].rstrip() + "…", True


def _cut_words(text: str, limit: int) -> tuple[str, bool]:
    """`_cut` at the last space in the final fifth of the limit, so a word is not cut in half."""
    if len(text) <= limit:
        return text, False
    head = text[: max(limit - 1, 0)]
    space = head.rfind(" ")
    return (head[:space] if space >= limit * 4 // 5 else head).rstrip(" ,;:") + "…", True


def _value(value: Any, limit: int = VALUE_CHARS) -> tuple[str, bool]:
    """A JSON value on one line, sanitised and bounded."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return "…", True
    return _cut(one_line(text), limit)


def _name(value: Any) -> tuple[str, bool]:
    return _cut(one_line(str(value)), NAME_CHARS)


def _words(text: Any) -> str:
    """A description's text on one line with its runs of spaces collapsed ('' for a non-string)."""
    if not isinstance(text, str):
        return ""
    return _SPACES.sub(" ", one_line(text)).strip()


def first_paragraph(text: Any) -> tuple[str, bool]:
    """The first non-empty paragraph of a description on one line, and whether more followed."""
    if not isinstance(text, str):
        return "", False
    head = text[:SCAN_CHARS]
    paragraphs = [p for p in (_words(p) for p in _PARAGRAPH.split(strip_controls(head))) if p]
    if not paragraphs:
        return "", False
    return paragraphs[0], len(paragraphs) > 1 or len(text) > len(head)


@dataclass
class _Style:
    """How much of a schema one rendering shows; `omitted` records what it left out."""

    detailed: bool = True
    enum_values: int = ENUM_VALUES
    omitted: bool = False
    defs: Mapping[str, Any] = field(default_factory=dict)
    visits: int = 0

    def note(self, cut: bool) -> None:
        self.omitted = self.omitted or cut

    def visit(self) -> bool:
        """Count one schema node; False once the rendering has looked at `MAX_VISITS`."""
        self.visits += 1
        if self.visits > MAX_VISITS:
            self.omitted = True
            return False
        return True


def _schema(descriptor: Mapping[str, Any]) -> Mapping[str, Any]:
    schema = descriptor.get("inputSchema") if isinstance(descriptor, Mapping) else None
    return schema if isinstance(schema, Mapping) else {}


def _defs(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    merged: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        defs = schema.get(key)
        if isinstance(defs, Mapping):
            merged.update({str(k): v for k, v in defs.items()})
    return merged


@dataclass(frozen=True)
class Parameter:
    """One parameter of a tool as the renderings see it (names and description not yet sanitised)."""

    name: str
    schema: Mapping[str, Any]
    required: bool


def parameters(schema: Mapping[str, Any]) -> list[Parameter]:
    """Every parameter in the schema's order, then required names the schema does not describe."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required_list = schema.get("required")
    required = {r for r in required_list if isinstance(r, str)} if isinstance(required_list, list) else set()
    found = [
        Parameter(str(name), sub if isinstance(sub, Mapping) else {}, str(name) in required)
        for name, sub in properties.items()
    ]
    known = {p.name for p in found}
    undeclared = [r for r in required_list if isinstance(r, str)] if isinstance(required_list, list) else []
    found += [Parameter(r, {}, True) for r in dict.fromkeys(undeclared) if r not in known]
    return found


def _join(types: list[str], style: _Style) -> str:
    unique = list(dict.fromkeys(types))
    if len(unique) > UNION_MEMBERS:
        style.note(True)
        unique = [*unique[:UNION_MEMBERS], "…"]
    return "|".join(unique) or "any"


def _enum(values: list[Any], style: _Style) -> str:
    if not style.detailed:
        style.note(True)
        return "enum"
    shown = values[: style.enum_values]
    style.note(len(values) > len(shown))
    texts = []
    for value in shown:
        text, cut = _value(value)
        style.note(cut)
        texts.append(text)
    return "|".join([*texts, "…"] if len(values) > len(shown) else texts) or "enum"


def _ref(ref: Any, style: _Style, depth: int, nest: int, seen: tuple[str, ...]) -> str:
    target = None
    if isinstance(ref, str) and ref not in seen:
        for prefix in _REF_PREFIXES:
            if ref.startswith(prefix):
                target = style.defs.get(ref[len(prefix) :])
    if not isinstance(target, Mapping):
        style.note(True)
        return "object" if isinstance(ref, str) and ref in seen else "any"
    return type_text(target, style, depth, nest + 1, (*seen, ref))


def _combined(schema: Mapping[str, Any], style: _Style, depth: int, nest: int, seen: tuple[str, ...]) -> str | None:
    for key, glue in (("anyOf", "|"), ("oneOf", "|"), ("allOf", "&")):
        members = schema.get(key)
        if isinstance(members, list) and members:
            types = [type_text(m, style, depth, nest + 1, seen) for m in members[: UNION_MEMBERS + 1]]
            style.note(len(members) > UNION_MEMBERS + 1)
            return _join(types, style) if glue == "|" else "&".join(dict.fromkeys(types))
    return None


def _array(schema: Mapping[str, Any], style: _Style, depth: int, nest: int, seen: tuple[str, ...]) -> str:
    items = schema.get("items")
    if not isinstance(items, Mapping) or not items:
        return "array"
    inner = type_text(items, style, depth, nest + 1, seen)
    return f"array of ({inner})" if "|" in inner or "&" in inner else f"array of {inner}"


def _object(schema: Mapping[str, Any], style: _Style, depth: int, seen: tuple[str, ...]) -> str:
    params = parameters(schema)
    if not params:
        return "object"
    if depth > 0 or not style.detailed:
        style.note(True)
        return "object"
    return "{" + ", ".join(_signature_part(p, style, depth + 1, seen) for p in params) + "}"


def _named(kind: Any, schema: Mapping[str, Any], style: _Style, depth: int, nest: int, seen: tuple[str, ...]) -> str:
    if isinstance(kind, list):
        # Each distinct type once, and a list counts as a level: `["array"] * 9` is not nine renderings.
        kinds = list(dict.fromkeys(k for k in kind[: UNION_MEMBERS + 1] if isinstance(k, str)))
        return _join([_named(k, schema, style, depth, nest + 1, seen) for k in kinds], style)
    if not isinstance(kind, str):
        style.note(True)
        return "any"
    if kind == "array":
        return _array(schema, style, depth, nest, seen)
    if kind == "object":
        return _object(schema, style, depth, seen)
    text, cut = _cut(one_line(kind), VALUE_CHARS)
    style.note(cut)
    return text


def type_text(schema: Any, style: _Style, depth: int = 0, nest: int = 0, seen: tuple[str, ...] = ()) -> str:
    """The type of one schema: `string`, `array of X`, `"a"|"b"`, `{a: string, b?: integer}`, `a|b`."""
    if not isinstance(schema, Mapping):
        return "any"
    if nest > NESTING or not style.visit():
        style.note(True)
        return "any"
    if "$ref" in schema:
        return _ref(schema["$ref"], style, depth, nest, seen)
    if isinstance(schema.get("enum"), list) and (style.detailed or not isinstance(schema.get("type"), str)):
        return _enum(schema["enum"], style)
    if "const" in schema:
        return _enum([schema["const"]], style)
    combined = _combined(schema, style, depth, nest, seen)
    if combined is not None and (combined != "any" or "type" not in schema):
        return combined
    if "type" in schema:
        style.note("enum" in schema)
        return _named(schema["type"], schema, style, depth, nest, seen)
    if "properties" in schema:
        return _object(schema, style, depth, seen)
    return "any"


def _signature_part(param: Parameter, style: _Style, depth: int, seen: tuple[str, ...] = ()) -> str:
    """`name: type`, `name?: type`, with ` = default` when the style is detailed."""
    name, cut = _name(param.name)
    style.note(cut)
    text = f"{name}{'' if param.required else '?'}: {type_text(param.schema, style, depth, 0, seen)}"
    if "default" in param.schema:
        if not style.detailed:
            style.note(True)
            return text
        default, cut = _value(param.schema["default"])
        style.note(cut)
        text += f" = {default}"
    return text


def _parameter_lines(params: list[Parameter], style: _Style) -> list[str]:
    lines = []
    for param in params:
        described, more = first_paragraph(param.schema.get("description"))
        if not described:
            continue
        described, cut = _cut_words(described, PARAMETER_DESCRIPTION_CHARS)
        name, cut_name = _name(param.name)
        style.note(more or cut or cut_name)
        lines.append(f"  {name}: {described}")
    return lines


@dataclass(frozen=True)
class _Step:
    detailed: bool
    description_chars: int
    parameter_lines: bool


_STEPS = (
    _Step(True, DESCRIPTION_CHARS, True),
    _Step(True, DESCRIPTION_CHARS, False),
    _Step(True, SHORT_DESCRIPTION_CHARS, False),
    _Step(False, SHORT_DESCRIPTION_CHARS, False),
    _Step(False, 0, False),
)


def _render(tool_id: str, descriptor: Mapping[str, Any], step: _Step) -> str:
    schema = _schema(descriptor)
    style = _Style(detailed=step.detailed, defs=_defs(schema))
    params = parameters(schema)
    line = f"{tool_id}({', '.join(_signature_part(p, style, 0) for p in params)})"
    description, more = first_paragraph(descriptor.get("description"))
    if description and step.description_chars:
        description, cut = _cut_words(description, step.description_chars)
        style.note(more or cut)
        line += f" — {description}"
    else:
        style.note(bool(description))
    lines = [line, *(_parameter_lines(params, style) if step.parameter_lines else ())]
    if not step.parameter_lines:
        style.note(any(first_paragraph(p.schema.get("description"))[0] for p in params))
    if style.omitted:
        lines.append(f"  ({POINTER})")
    return "\n".join(lines)


def _summary(tool_id: str, descriptor: Mapping[str, Any], budget_chars: int) -> str:
    params = parameters(_schema(descriptor))
    count = f"{len(params)} parameter{'' if len(params) == 1 else 's'}"
    names = [_name(p.name)[0] + ("" if p.required else "?") for p in params]
    fixed = len(f"{tool_id} — {count}:  — {POINTER}")
    shown: list[str] = []
    used = 0
    for index, name in enumerate(names):
        # Room for this name, and for ", …" after it unless it is the last one.
        after = 0 if index == len(names) - 1 else len(", …")
        if fixed + used + len(name) + after > budget_chars:
            break
        shown.append(name)
        used += len(name) + len(", ")
    if not shown:
        return f"{tool_id} — {count} — {POINTER}"
    listed = ", ".join(shown) + (", …" if len(shown) < len(names) else "")
    return f"{tool_id} — {count}: {listed} — {POINTER}"


def compact(tool_id: str, descriptor: Mapping[str, Any], budget_chars: int) -> str:
    """The model's signature of one tool in at most `budget_chars` characters (see the module docstring).

    Only the summary's smallest form (`ID — N parameters — full schema: mcp/activeTools`) can be
    longer than the budget: the exact id and the pointer are never cut.
    """
    tool_id = one_line(tool_id)
    descriptor = descriptor if isinstance(descriptor, Mapping) else {}
    if len(parameters(_schema(descriptor))) > MAX_PARAMETERS:
        return _summary(tool_id, descriptor, budget_chars)
    for step in _STEPS:
        text = _render(tool_id, descriptor, step)
        if len(text) <= budget_chars:
            return text
    return _summary(tool_id, descriptor, budget_chars)


_ANNOTATIONS = (
    ("readOnlyHint", "read-only", "may change its environment"),
    ("destructiveHint", "destructive", "not destructive"),
    ("idempotentHint", "idempotent", "not idempotent"),
    ("openWorldHint", "open world", "closed world"),
)
"""Each MCP tool annotation hint, as said when it is true and when it is false."""


def annotation_words(descriptor: Mapping[str, Any]) -> list[str]:
    """The tool's boolean annotation hints in words, in the MCP specification's order."""
    annotations = descriptor.get("annotations")
    if not isinstance(annotations, Mapping):
        return []
    return [yes if annotations[key] else no for key, yes, no in _ANNOTATIONS if isinstance(annotations.get(key), bool)]


def _description_block(text: Any, limit: int = SCAN_CHARS) -> list[str]:
    """A description for a person (its first `limit` characters): controls removed, lines kept, blank runs collapsed."""
    if not isinstance(text, str):
        return []
    head = text[:limit]
    paragraphs = [p.strip() for p in _PARAGRAPH.split(strip_controls(head).replace("\t", " "))]
    kept = [p for p in paragraphs if p]
    return [*kept, f"… ({len(text) - len(head):,} more characters)"] if len(text) > len(head) else kept


def _facts(param: Parameter, style: _Style) -> list[str]:
    kind = type_text(param.schema, style)
    if isinstance(param.schema.get("enum"), list):  # the values get their own line
        declared = param.schema.get("type")
        kind = _cut(one_line(declared), VALUE_CHARS)[0] if isinstance(declared, str) else "enum"
    facts = [kind, "required" if param.required else "optional"]
    if "default" in param.schema:
        facts.append(f"default {_value(param.schema['default'], LIST_VALUES * 4)[0]}")
    return facts


def _parameter_paragraph(param: Parameter, style: _Style) -> list[str]:
    lines = [f"  {_name(param.name)[0]}  {' · '.join(_facts(param, style))}"]
    values = param.schema.get("enum")
    if isinstance(values, list) and values:
        shown = ", ".join(_value(v)[0] for v in values[:LIST_VALUES])
        more = f", … ({len(values) - LIST_VALUES} more)" if len(values) > LIST_VALUES else ""
        lines.append(f"    one of: {shown}{more}")
    for paragraph in _description_block(param.schema.get("description"), PARAMETER_SCAN_CHARS):
        lines += [f"    {line.strip()}" for line in paragraph.splitlines()]
    return lines


def _nested(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object schema a parameter holds, through one `$ref` and a nullable `anyOf` ({} for none)."""
    candidates = [schema]
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list):
            candidates += [m for m in members[:UNION_MEMBERS] if isinstance(m, Mapping)]
    for candidate in candidates:
        ref = candidate.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIXES):
            candidate = defs.get(ref.split("/", 2)[2], {})
        if isinstance(candidate, Mapping) and isinstance(candidate.get("properties"), Mapping):
            return candidate
    return {}


def _parameter_paragraphs(param: Parameter, style: _Style) -> list[str]:
    """The parameter's paragraph, then one per property of the object it holds (`filters.tags`)."""
    lines = _parameter_paragraph(param, style)
    for inner in parameters(_nested(param.schema, style.defs)):
        dotted = Parameter(f"{param.name}.{inner.name}", inner.schema, inner.required)
        lines += ["", *_parameter_paragraph(dotted, style)]
    return lines


def multiline(tool_id: str, descriptor: Mapping[str, Any]) -> str:
    """One tool for a person: title, description, a paragraph per parameter, annotations."""
    descriptor = descriptor if isinstance(descriptor, Mapping) else {}
    schema = _schema(descriptor)
    style = _Style(enum_values=LIST_VALUES, defs=_defs(schema))
    params = parameters(schema)
    head = one_line(tool_id)
    title = descriptor.get("title")
    if isinstance(title, str) and _words(title):
        head += f" — {_cut(_words(title), DESCRIPTION_CHARS)[0]}"
    lines = [head]
    for paragraph in _description_block(descriptor.get("description")):
        lines += ["", *paragraph.splitlines()]
    lines += ["", "Parameters" if params else "No parameters"]
    for index, param in enumerate(params[:MAX_PARAMETERS]):
        lines += [*([""] if index else []), *_parameter_paragraphs(param, style)]
    if len(params) > MAX_PARAMETERS:
        lines += ["", f"… and {len(params) - MAX_PARAMETERS:,} more parameters (the whole schema: --json)"]
    words = annotation_words(descriptor)
    if words:
        lines += ["", f"Annotations: {', '.join(words)}"]
    return "\n".join(lines)
