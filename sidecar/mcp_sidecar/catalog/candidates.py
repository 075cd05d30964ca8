"""What a discovery candidate says of each kind of catalog entry, and the exact call it offers next.

One candidate builder and one next-call builder per kind (`catalog/kinds.py` holds them in its
records). A builder takes a ranked entry's `Document` and the ranking's part (`Scored`, the same for
every kind) and returns the wire candidate; its fields keep the server's data as it came, only
the description is shortened to its first paragraph, sanitised, on one line (`short`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Protocol, TypedDict

from mcp_sidecar.catalog.documents import canonical, template_variables
from mcp_sidecar.catalog.icons import safe_icons
from mcp_sidecar.catalog.index import Document
from mcp_sidecar.output.sanitize import strip_controls

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        Icon,
        Match,
        NextCall,
        PromptArgument,
        PromptCandidate,
        ResourceCandidate,
        TemplateCandidate,
        ToolCandidate,
    )

DESCRIPTION_CHARS = 160


def short(text: str | None, limit: int = DESCRIPTION_CHARS) -> str:
    """The first paragraph, sanitised, on one line, cut at a word boundary (hidden characters take no room)."""
    if not text:
        return ""
    first = re.split(r"\n\s*\n", strip_controls(text).strip(), maxsplit=1)[0]
    first = " ".join(first.split())
    if len(first) <= limit:
        return first
    cut = first[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


class Held(Protocol):
    """What a session holds of an active tool: its definition's canonical text when it was activated."""

    @property
    def canonical(self) -> str: ...


class Scored(TypedDict):
    """A candidate's last fields, the same for every kind: its score and what put it there."""

    score: float
    match: NotRequired[Match]
    weak: NotRequired[Literal[True]]


class Cost(TypedDict, total=False):
    """A tool candidate's token estimate: added by discovery, which has the catalogs' counts."""

    tokens: int


# -- the exact call each kind offers next -------------------------------------------------------


def tool_next(doc: Document, loaded: bool) -> NextCall:
    """A loaded tool is called; any other is activated first."""
    tool_id = f"{doc.server}.{doc.key}"
    if loaded:
        return {"method": "mcp/callTool", "params": {"id": tool_id, "arguments": {}}}
    return {"method": "mcp/activate", "params": {"ids": [tool_id]}}


def resource_next(doc: Document, loaded: bool) -> NextCall:
    return {"method": "mcp/read", "params": {"server": doc.server, "uri": doc.key}}


def template_next(doc: Document, loaded: bool) -> NextCall:
    """A read of the template with a placeholder per variable."""
    arguments = {v: f"<{v}>" for v in template_variables(doc.key)}
    return {"method": "mcp/read", "params": {"server": doc.server, "template": doc.key, "arguments": arguments}}


def prompt_next(doc: Document, loaded: bool) -> NextCall:
    """A preview with every argument empty."""
    arguments = {a["name"]: "" for a in prompt_arguments(doc.payload)}
    return {"method": "mcp/prompt/preview", "params": {"server": doc.server, "name": doc.key, "arguments": arguments}}


# -- candidates ---------------------------------------------------------------------------------


def tool_candidate(doc: Document, active: Mapping[str, Held], scored: Scored) -> ToolCandidate:
    d: dict[str, Any] = doc.payload
    tool_id = f"{doc.server}.{doc.key}"
    held = active.get(tool_id)
    # Loaded means callable: the session's definition is the one the catalog has now.
    loaded = held is not None and held.canonical == canonical(d)
    schema = d.get("inputSchema")
    listed = schema.get("required", []) if isinstance(schema, dict) else []
    required = [r for r in listed if isinstance(r, str)] if isinstance(listed, list) else []
    return {
        "kind": "tool",
        "id": tool_id,
        "server": doc.server,
        "name": doc.key,
        **_title(d),
        "description": short(d.get("description")),
        "required": required,
        "loaded": loaded,
        # Active in the session with a definition the server no longer has.
        **_changed(held is not None and not loaded),
        **_annotations(d),
        **_icons(d),
        "next": tool_next(doc, loaded),
        **scored,
        **Cost(),
    }


def resource_candidate(doc: Document, active: Mapping[str, Held], scored: Scored) -> ResourceCandidate:
    d: dict[str, Any] = doc.payload
    return {
        "kind": "resource",
        "server": doc.server,
        "name": d.get("name") or doc.key,
        "uri": doc.key,
        **_title(d),
        "description": short(d.get("description")),
        **_mime_type(d),
        **_icons(d),
        "next": resource_next(doc, False),
        **scored,
    }


def template_candidate(doc: Document, active: Mapping[str, Held], scored: Scored) -> TemplateCandidate:
    d: dict[str, Any] = doc.payload
    return {
        "kind": "template",
        "label": "template",
        "server": doc.server,
        "name": d.get("name") or doc.key,
        "uriTemplate": doc.key,
        "variables": template_variables(doc.key),
        **_title(d),
        "description": short(d.get("description")),
        **_mime_type(d),
        **_icons(d),
        "next": template_next(doc, False),
        **scored,
    }


def prompt_candidate(doc: Document, active: Mapping[str, Held], scored: Scored) -> PromptCandidate:
    d: dict[str, Any] = doc.payload
    return {
        "kind": "prompt",
        "server": doc.server,
        "name": doc.key,
        **_title(d),
        "description": short(d.get("description")),
        "arguments": prompt_arguments(d),
        **_icons(d),
        "next": prompt_next(doc, False),
        **scored,
    }


def prompt_arguments(d: dict[str, Any]) -> list[PromptArgument]:
    """A prompt's named arguments and whether each is required (anything else in the list is left out)."""
    return [
        {"name": a["name"], "required": bool(a.get("required", False))}
        for a in d.get("arguments") or []
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    ]


class _Title(TypedDict, total=False):
    title: Any


class _Changed(TypedDict, total=False):
    changed: bool


class _MimeType(TypedDict, total=False):
    mimeType: Any


class _Icons(TypedDict, total=False):
    icons: list[Icon]


class _Annotations(TypedDict, total=False):
    annotations: Any


def _title(d: dict[str, Any]) -> _Title:
    return {"title": d["title"]} if d.get("title") else {}


def _changed(changed: bool) -> _Changed:
    return {"changed": True} if changed else {}


def _mime_type(d: dict[str, Any]) -> _MimeType:
    return {"mimeType": d["mimeType"]} if d.get("mimeType") else {}


def _icons(d: dict[str, Any]) -> _Icons:
    icons = safe_icons(d.get("icons"))
    return {"icons": icons} if icons else {}


def _annotations(d: dict[str, Any]) -> _Annotations:
    return {"annotations": d["annotations"]} if isinstance(d.get("annotations"), dict) else {}
