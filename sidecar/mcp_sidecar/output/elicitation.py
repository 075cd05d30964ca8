"""What a server may ask a person (MCP elicitation), checked before and after the editor sees it.

A form's `requestedSchema` is untrusted: it reaches an editor's form builder, so only MCP's
flat primitive schema passes, with every string the server wrote sanitised and bounded. The
person's answer is checked against the same schema before it goes back, so an editor's bug
never sends the server a value its schema does not allow.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcp_sidecar.output.sanitize import one_line, strip_controls

MAX_PROPERTIES = 50
MAX_OPTIONS = 500
MAX_MESSAGE_CHARS = 4_000
MAX_LABEL_CHARS = 200
MAX_DESCRIPTION_CHARS = 1_000
MAX_STRING_CHARS = 10_000
MAX_URL_CHARS = 8_192
FORMATS = ("email", "uri", "date", "date-time")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+\Z")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class SchemaRefused(ValueError):
    """The server's schema is not MCP's flat primitive form; the message says what (our words)."""


Redact = Callable[[str], str]
"""Replaces the server's own secret values in a text (the connection's log redaction)."""


def _keep(text: str) -> str:
    return text


def message_text(message: str, redact: Redact = _keep) -> str:
    """The question as the person reads it: newlines kept, nothing hidden, no secret, bounded."""
    text = redact(strip_controls(message))
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "…"


def _clean(value: str) -> bool:
    """A value that goes back to the server as it is: nothing hidden in it, on one line."""
    return one_line(value) == value and bool(value.strip())


def _label(value: Any, limit: int = MAX_LABEL_CHARS) -> str | None:
    if not isinstance(value, str):
        return None
    text = one_line(value).strip()
    return text[:limit] + ("…" if len(text) > limit else "") if text else None


def _number(value: Any) -> float | None:
    """A finite JSON number (NaN, infinities and numbers too large for a double are none)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return value if math.isfinite(float(value)) else None
    except OverflowError:
        return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _options(values: Any, where: str) -> list[dict[str, str]]:
    """`enum` strings or `oneOf`/`anyOf` `{const, title}` as `[{const, title}]`."""
    if not isinstance(values, list) or not values or len(values) > MAX_OPTIONS:
        raise SchemaRefused(f"{where}: the choices must be a list of 1 to {MAX_OPTIONS}")
    options: list[dict[str, str]] = []
    for item in values:
        const = item if isinstance(item, str) else item.get("const") if isinstance(item, dict) else None
        if not isinstance(const, str):
            raise SchemaRefused(f"{where}: a choice is not a string or a {{const, title}}")
        if not _clean(const) or len(const) > MAX_LABEL_CHARS:
            # The value goes back as it is: one the person cannot read as sent is refused.
            raise SchemaRefused(f"{where}: a choice's value is empty, too long or holds hidden characters")
        title = _label(item.get("title")) if isinstance(item, dict) else None
        options.append({"const": const, "title": title or const})
    return options


def _enum_options(prop: dict[str, Any], where: str) -> list[dict[str, str]] | None:
    if "oneOf" in prop:
        return _options(prop["oneOf"], where)
    if "enum" not in prop:
        return None
    options = _options(prop["enum"], where)
    names = prop.get("enumNames")
    if isinstance(names, list) and len(names) == len(options):
        for option, name in zip(options, names, strict=True):
            option["title"] = _label(name) or option["title"]
    return options


def _common(prop: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if title := _label(prop.get("title")):
        out["title"] = title
    if description := _label(prop.get("description"), MAX_DESCRIPTION_CHARS):
        out["description"] = description
    return out


def _string_field(prop: dict[str, Any], where: str) -> dict[str, Any]:
    out = _common(prop) | {"type": "string"}
    options = _enum_options(prop, where)
    if options is not None:
        out["oneOf"] = options
    for key in ("minLength", "maxLength"):
        if (count := _count(prop.get(key))) is not None:
            out[key] = count
    fmt = prop.get("format")
    if fmt is not None:
        if fmt not in FORMATS:
            raise SchemaRefused(f"{where}: format must be one of {', '.join(FORMATS)}")
        out["format"] = fmt
    default = prop.get("default")
    plain = isinstance(default, str) and len(default) <= MAX_STRING_CHARS and one_line(default) == default
    if plain and (options is None or default in {o["const"] for o in options}):
        out["default"] = default
    return out


def _number_field(prop: dict[str, Any], kind: str) -> dict[str, Any]:
    out = _common(prop) | {"type": kind}
    for key in ("minimum", "maximum"):
        if (number := _number(prop.get(key))) is not None:
            out[key] = number
    default = _number(prop.get("default"))
    if default is not None and (kind == "number" or float(default).is_integer()):
        out["default"] = default
    return out


def _array_field(prop: dict[str, Any], where: str) -> dict[str, Any]:
    items = prop.get("items")
    if not isinstance(items, dict):
        raise SchemaRefused(f"{where}: an array must be a multi-select with items.enum or items.anyOf")
    if "anyOf" in items:
        options = _options(items["anyOf"], where)
    elif "enum" in items:
        options = _options(items["enum"], where)
    else:
        raise SchemaRefused(f"{where}: an array must be a multi-select with items.enum or items.anyOf")
    out = _common(prop) | {"type": "array", "items": {"anyOf": options}}
    for key in ("minItems", "maxItems"):
        if (count := _count(prop.get(key))) is not None:
            out[key] = count
    default = prop.get("default")
    consts = {o["const"] for o in options}
    if isinstance(default, list) and all(isinstance(v, str) and v in consts for v in default):
        out["default"] = list(default)
    return out


def _field(prop: Any, where: str) -> dict[str, Any]:
    if not isinstance(prop, dict):
        raise SchemaRefused(f"{where}: not a schema object")
    kind = prop.get("type")
    if kind == "string":
        return _string_field(prop, where)
    if kind in ("number", "integer"):
        return _number_field(prop, kind)
    if kind == "boolean":
        out = _common(prop) | {"type": "boolean"}
        if isinstance(prop.get("default"), bool):
            out["default"] = prop["default"]
        return out
    if kind == "array":
        return _array_field(prop, where)
    raise SchemaRefused(f"{where}: type must be string, number, integer, boolean or a multi-select array")


def checked_schema(schema: Any) -> dict[str, Any]:
    """MCP's flat form schema, rebuilt from what we understood: only known keys, clean strings.

    Raises SchemaRefused for anything else (a nested object, an unknown type or format).
    """
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise SchemaRefused("the schema must be an object schema")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or len(properties) > MAX_PROPERTIES:
        raise SchemaRefused(f"the schema must have at most {MAX_PROPERTIES} properties")
    fields: dict[str, Any] = {}
    for name, prop in properties.items():
        if not isinstance(name, str) or not name or one_line(name) != name or len(name) > MAX_LABEL_CHARS:
            raise SchemaRefused("a property name is empty, too long or holds hidden characters")
        fields[name] = _field(prop, f"property {len(fields) + 1}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) and r in fields for r in required):
        raise SchemaRefused("required must list properties of the schema")
    out: dict[str, Any] = {"type": "object", "properties": fields}
    if required:
        out["required"] = list(dict.fromkeys(required))
    return out


def url_host(url: str) -> str:
    """The URL's host as a browser resolves it (UTS 46, ASCII); ValueError when that is in doubt."""
    return opened_url(url)[1]


def opened_url(url: str) -> tuple[str, str]:
    """`(url, host)`: the URL rebuilt from its parsed parts with its ASCII host, and that host.

    What the person is shown is what a browser opens: the URL is rebuilt from the parts read
    here, and anything parsers disagree on is refused (a backslash, which WHATWG URLs read as a
    slash; user information before an `@`; a percent-encoded or bracketed host).
    """
    if len(url) > MAX_URL_CHARS or one_line(url) != url or any(c.isspace() for c in url):
        raise ValueError("the URL is too long or holds spaces, controls or hidden characters")
    if "\\" in url:
        raise ValueError("the URL holds a backslash, which browsers read as a slash")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("https", "http") or not parts.hostname:
        raise ValueError("the URL must be http or https with a host")
    if "@" in parts.netloc or "%" in parts.netloc or "[" in parts.netloc:
        raise ValueError("the URL's host part holds user information, an escape or an address in brackets")
    import idna

    from mcp_sidecar.auth.urls import normalise_host

    try:
        host = idna.encode(parts.hostname.rstrip("."), uts46=True, transitional=False).decode("ascii")
        port = parts.port
    except (idna.IDNAError, UnicodeError, ValueError):
        raise ValueError("the URL's host is not a valid name") from None
    # A host that ends in a number is an IPv4 address to a browser, in any spelling (`0x7f.1`,
    # `2130706433`, `0177.0.0.1`): shown as the address it opens, or refused when it is none.
    address = normalise_host(host)
    if address is None:
        raise ValueError("the URL's host ends in a number but is no IPv4 address")
    if isinstance(address, ipaddress.IPv4Address):
        host = str(address)
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, parts.fragment)), host


# -- the answer -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContentProblem:
    field: str
    reason: str


def _format_ok(fmt: str, value: str) -> bool:
    if fmt == "email":
        return bool(_EMAIL.match(value))
    if fmt == "uri":
        return bool(_SCHEME.match(value)) and not any(c.isspace() for c in value)
    try:
        if fmt == "date":
            date.fromisoformat(value)
        else:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _string_problem(field: dict[str, Any], value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    consts = [o["const"] for o in field.get("oneOf", [])]
    if consts and value not in consts:
        return "is not one of the choices"
    if len(value) > min(field.get("maxLength", MAX_STRING_CHARS), MAX_STRING_CHARS):
        return "is too long"
    if len(value) < field.get("minLength", 0):
        return "is too short"
    if "format" in field and not _format_ok(field["format"], value):
        return f"is not a valid {field['format']}"
    return None


def _number_problem(field: dict[str, Any], value: Any) -> str | None:
    number = _number(value)
    if number is None:
        return "must be a number"
    if field["type"] == "integer" and not float(number).is_integer():
        return "must be a whole number"
    if "minimum" in field and number < field["minimum"]:
        return f"must be at least {field['minimum']}"
    if "maximum" in field and number > field["maximum"]:
        return f"must be at most {field['maximum']}"
    return None


def _array_problem(field: dict[str, Any], value: Any) -> str | None:
    consts = {o["const"] for o in field["items"]["anyOf"]}
    if not isinstance(value, list) or not all(isinstance(v, str) and v in consts for v in value):
        return "must be a list of the choices"
    if len(value) < field.get("minItems", 0):
        return f"needs at least {field['minItems']} choices"
    if "maxItems" in field and len(value) > field["maxItems"]:
        return f"allows at most {field['maxItems']} choices"
    return None


def _value_problem(field: dict[str, Any], value: Any) -> str | None:
    kind = field["type"]
    if kind == "string":
        return _string_problem(field, value)
    if kind in ("number", "integer"):
        return _number_problem(field, value)
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    return _array_problem(field, value)


def content_problem(schema: dict[str, Any], content: Any) -> ContentProblem | None:
    """Why `content` does not fit a `checked_schema`, or None when it does."""
    if not isinstance(content, dict):
        return ContentProblem("", "the content must be an object")
    fields: dict[str, Any] = schema["properties"]
    for name in schema.get("required", []):
        if content.get(name) is None:
            return ContentProblem(name, "is required")
    for name, value in content.items():
        if name not in fields:
            return ContentProblem(str(name)[:MAX_LABEL_CHARS], "is not in the schema")
        if value is None:
            continue
        if (reason := _value_problem(fields[name], value)) is not None:
            return ContentProblem(name, reason)
    return None


__all__ = [
    "ContentProblem",
    "SchemaRefused",
    "checked_schema",
    "content_problem",
    "message_text",
    "opened_url",
    "url_host",
]
