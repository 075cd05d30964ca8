"""The text of a discovery for a model: one row per candidate, then the exact next calls.

Compact and deterministic. Every server string is shown sanitised, each on one line
(`output/sanitize.py`); the structured result beside it keeps the server's data as it came.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_sidecar.catalog import kinds, names
from mcp_sidecar.output.sanitize import json_escape, one_line
from mcp_sidecar.output.shaping import model_call
from mcp_sidecar.output.wording import EDITOR, Wording

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import Candidate, Unavailable

QUERY_SHOWN_CHARS = 200
"""A long query is echoed in the text this far; `query` keeps all of it."""


def _tool_row(c: Mapping[str, Any], desc: str, wording: Wording) -> str:
    signature = f"{one_line(c['id'])}({one_line(', '.join(c['required']))})"
    if c["loaded"]:
        called = f" as {one_line(wording.call_name(c['id']))}" if wording.call_name else ""
        return f"● {signature} [loaded{called}]{desc}"
    if c.get("changed"):
        return f"○ {signature} — changed since activation: activate again{desc}"
    return f"○ {signature}{desc}"


def _resource_row(c: Mapping[str, Any], desc: str, wording: Wording) -> str:
    """With the resource's exact read call."""
    title = one_line(c.get("title") or c["name"])
    mime = f" [{one_line(c['mimeType'])}]" if c.get("mimeType") else ""
    call = model_call({"read": {"server": c["server"], "uri": c["uri"]}})
    return f"○ {one_line(c['server'])} · {title} · {one_line(c['uri'])}{mime}{desc}\n   read: {call}"


def _template_row(c: Mapping[str, Any], desc: str, wording: Wording) -> str:
    """With the template's read-call shape, a placeholder per variable."""
    variables = one_line(", ".join(c["variables"]))
    row = f"○ {one_line(c['server'])} · [template] {one_line(c['uriTemplate'])} ({variables}){desc}"
    arguments = {v: f"<{v}>" for v in c["variables"]}
    call = model_call({"read": {"server": c["server"], "template": c["uriTemplate"], "arguments": arguments}})
    return f"{row}\n   read (fill in the variables): {call}"


def _prompt_row(c: Mapping[str, Any], desc: str, wording: Wording) -> str:
    """With what a person runs: a model cannot run a prompt."""
    server = one_line(c["server"])
    arguments = one_line(", ".join(a["name"] + ("*" if a["required"] else "") for a in c["arguments"]))
    if wording.prompt_command is not None:
        command = one_line(wording.prompt_command(c["server"], c["name"]))
    else:
        command = f"/mcp prompt {server} {one_line(c['name'])}"
    row = f"○ {server} · [prompt] {one_line(c['name'])}({arguments}){desc}"
    return f"{row}\n   for people: ask the user to run {command}"


ROWS: Mapping[str, Callable[[Mapping[str, Any], str, Wording], str]] = {
    kinds.TOOL.name: _tool_row,
    kinds.RESOURCE.name: _resource_row,
    kinds.TEMPLATE.name: _template_row,
    kinds.PROMPT.name: _prompt_row,
}
"""Each kind's text row, keyed by its record's name: rendering is output/'s, and catalog/kinds.py,
which output/ reads, cannot hold it."""


def _row(c: Mapping[str, Any], wording: Wording) -> str:
    """One candidate on one line (a resource or template adds its read call): server strings through `one_line`."""
    desc = f" — {one_line(c['description'])}" if c.get("description") else ""
    return ROWS[c["kind"]](c, desc, wording)


def _refused_rows(refused: list[dict[str, Any]]) -> list[str]:
    """Per server, one line per kind and reason refused, naming up to three entries (escaped)."""
    by_server: dict[str, list[dict[str, Any]]] = {}
    for r in refused:
        by_server.setdefault(r["server"], []).append(r)
    return [f" ✘ {one_line(server)} refused {line}" for server, rs in by_server.items() for line in names.summary(rs)]


@dataclass(frozen=True)
class Scope:
    """What a query searched, for the next step when nothing fits."""

    server: str | None = None
    kind: str = "all"
    judged: bool = True
    """False for a query too long to judge (a pasted message): nothing is marked weak."""


def render(
    query: str,
    candidates: list[Candidate],
    unavailable: list[Unavailable],
    refused: list[dict[str, Any]] | None = None,
    *,
    ranked_chars: int | None = None,
    wording: Wording = EDITOR,
    scope: Scope = Scope(),
) -> str:
    """Compact, deterministic text for a model: one row per candidate, then the exact next calls."""
    shown = query if len(query) <= QUERY_SHOWN_CHARS else query[: QUERY_SHOWN_CHARS - 1] + "…"
    lines = [f"mcp discover {json_escape(json.dumps(shown, ensure_ascii=False))}"]
    if ranked_chars is not None:
        lines.append(f" (a long query: ranked on its first {ranked_chars:,} of {len(query):,} characters)")
    all_weak = bool(candidates) and all(c.get("weak") for c in candidates)
    if not candidates:
        lines.append(" (no matching candidates)")
    elif all_weak:
        lines.append(f" (no confident match: the nearest entries follow, marked {WEAK}; they may not do what is asked)")
    elif not scope.judged:
        lines.append(" (a long message: ranked, not judged; read each description before activating one)")
    lines.extend(f" {_weak_marked(_row(c, wording), c)}" for c in candidates)
    lines.extend(_unavailable_rows(unavailable))
    lines.extend(_refused_rows(refused or []))
    if not unavailable and (not candidates or all_weak):
        lines.append(nothing_matches(scope))
    to_activate = [c["id"] for c in candidates if c["kind"] == "tool" and not c["loaded"] and not c.get("weak")]
    if to_activate:
        lead = "Activate the tools you need by their exact ids" if scope.judged else "Activate only those that fit"
        lines.append(f"{lead}: {model_call({'activate': to_activate})}")
    elif any(c["kind"] == "tool" and not c["loaded"] for c in candidates):
        call = model_call({"activate": ["<id>"]})
        lines.append(f"If one of them does fit, activate it by its exact id as shown: {call}")
    if any(c["kind"] == "tool" and c["loaded"] for c in candidates):
        lines.append(wording.loaded_note or LOADED_NOTE)
    return "\n".join(lines)


WEAK = "[weak match]"
NOTHING_MATCHES = (
    "Try other words for what the tool would do (an action and its object). If nothing fits, none of "
    "the user's MCP servers seems to offer this: use your other tools, or tell the user."
)


def nothing_matches(scope: Scope) -> str:
    """The next step when nothing fits: widen a narrowed search first."""
    if scope.server is not None:
        return f"Nothing in {one_line(scope.server)} fits: query again without `server` to search every server."
    if scope.kind != "all":
        return f'Nothing among the {scope.kind} fits: query again with `kind: "all"`, or in other words.'
    return NOTHING_MATCHES


def _weak_marked(row: str, c: Mapping[str, Any]) -> str:
    """A weak candidate's row with the mark after its glyph, where the eye starts reading."""
    return f"{row[:2]}{WEAK} {row[2:]}" if c.get("weak") else row


LOADED_NOTE = (
    "Tools marked [loaded] are callable now, with the signature their activation showed; "
    "activating one again shows its signature, if you do not have it."
)
UNAVAILABLE_ROWS = 5
"""Unavailable servers shown one row each; the rest are named on one more row."""


def _unavailable_rows(unavailable: list[Unavailable]) -> list[str]:
    """One row per unusable server (its kinds together when they failed alike), at most `UNAVAILABLE_ROWS`."""
    by_server: dict[str, list[Unavailable]] = {}
    for u in unavailable:
        by_server.setdefault(u["server"], []).append(u)
    groups = []
    for server, entries in by_server.items():
        name = one_line(server or "configuration")
        diags = {(u["diagnostic"]["code"], u["diagnostic"]["message"]) for u in entries}
        if len(diags) > 1:  # failed differently per kind: one row each
            groups.append([_unavailable_row(name, u) for u in entries])
        else:
            groups.append([_unavailable_row(name, entries[0], whole=len(entries) > 1)])
    if len(groups) <= UNAVAILABLE_ROWS + 1:
        return [row for group in groups for row in group]
    rest = [one_line(s or "configuration") for s in list(by_server)[UNAVAILABLE_ROWS:]]
    shown = [row for group in groups[:UNAVAILABLE_ROWS] for row in group]
    return [*shown, f" ✘ and {len(rest)} more servers unavailable ({', '.join(rest)}): query one with `server`"]


def _unavailable_row(name: str, u: Unavailable, *, whole: bool = False) -> str:
    diag = u["diagnostic"]
    if diag["code"] == "configuration_invalid" and u["kind"] == "all":  # an invalid definition or file
        return f" ✘ {name} broken: {diag['code']} — {one_line(diag['message'])}"
    kind = "all" if whole else u["kind"]
    return f" ✘ {name} {kind} unavailable: [{diag['code']}] {one_line(diag['message'])}"
