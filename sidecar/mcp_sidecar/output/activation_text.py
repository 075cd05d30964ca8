"""The text of an activation for a model: one line per id, then each loaded tool's signature, then
what the loaded tools cost the context ("+N tokens; session now M", an estimate).

Ids, reasons and nearby names are sanitised (an id may echo the client's input), and so is every
schema string (`output/signature.py`). Each loaded tool is named as the reader calls it
(`Wording.call_name`): its id for the editors, its native name through the gateway.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from mcp_sidecar.output import signature
from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.output.wording import EDITOR, Wording

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        ActivateResult,
        ActivationEntry,
        ActivationTokens,
        SessionBudget,
        ToolDefinition,
    )

CALL_HINT = (
    "Call each loaded tool by its exact id with arguments that follow its signature: every parameter "
    "without `?` is required, `= value` is the default, quoted alternatives are the only allowed values."
)
SIGNATURES_CHARS = 12_000
"""The signatures of one activation, together (about 3,000 tokens); each tool gets its share."""
SIGNATURE_MIN_CHARS = 240
SIGNATURE_MAX_CHARS = 2_000


def _signatures(tools: list[ToolDefinition], wording: Wording) -> dict[str, str]:
    """Each loaded tool's compact signature under the name the model calls it by, within its share of
    `SIGNATURES_CHARS`, indented."""
    if not tools:
        return {}
    share = max(SIGNATURE_MIN_CHARS, min(SIGNATURE_MAX_CHARS, SIGNATURES_CHARS // len(tools)))
    out = {}
    for tool in tools:
        name = wording.call_name(tool["id"]) if wording.call_name else tool["id"]
        text = signature.compact(name, cast("dict[str, Any]", tool), share)
        if wording.call_name:
            text = text.replace(signature.POINTER, f"full schema: {name}'s own definition")
        out[tool["id"]] = "\n".join(f"   {line}" for line in text.splitlines())
    return out


def _marks(tool: ToolDefinition) -> str:
    """What the server says a tool does to the world, as the model should weigh it before calling."""
    words = signature.annotation_words(cast("dict[str, Any]", tool))
    return "".join(f" [{word}]" for word in words if word in ("read-only", "destructive"))


def tokens_line(tokens: ActivationTokens) -> str:
    """What an activation added to the session's context, and the session's total, in estimated tokens."""
    return f"+{tokens['added']:,} tokens; session now {tokens['session']:,} (estimated)"


def budget_words(budget: SessionBudget) -> str:
    """`at most 5 tools and 4,000 tokens`."""
    parts = []
    if (tools := budget["maxTools"]) is not None:
        parts.append(f"{tools:,} tool{'' if tools == 1 else 's'}")
    if (tokens := budget["maxTokens"]) is not None:
        parts.append(f"{tokens:,} tokens")
    return "at most " + " and ".join(parts)


def budget_lines(evicted: list[str], budget: SessionBudget | None, over: bool, wording: Wording = EDITOR) -> list[str]:
    """What the session budget did: the tools it deactivated (each by id, and by the name the reader
    called it when that differs) and how to get one back; or that this activation alone exceeds it."""
    if budget is None:
        return []
    lines = []
    if evicted:
        names = [
            f"{one_line(i)} ({one_line(wording.call_name(i))})" if wording.call_name else one_line(i) for i in evicted
        ]
        lines.append(
            f"Session budget ({budget_words(budget)}): deactivated the least recently used: {', '.join(names)}. "
            f"To use one again, activate it again by its id (activate [{json_ids(evicted[:1])}])."
        )
    if over:
        lines.append(
            f"The tools of this activation alone exceed the session budget ({budget_words(budget)}): they are "
            "active all the same, and every other tool was deactivated."
        )
    return lines


def json_ids(ids: list[str]) -> str:
    return ", ".join(json.dumps(one_line(i), ensure_ascii=False) for i in ids)


def render(
    results: list[ActivationEntry],
    tools: list[ToolDefinition],
    wording: Wording = EDITOR,
    tokens: ActivationTokens | None = None,
    *,
    evicted: list[str] | None = None,
    budget: SessionBudget | None = None,
    over: bool = False,
) -> str:
    """One line per id, then each loaded tool's signature, then (when a tool is loaded and `tokens`
    known) their cost, then what the session budget deactivated to make room; ids, reasons and nearby
    names are sanitised (an id may echo the client's input), and so is every schema string."""
    signatures = _signatures(tools, wording)
    marks = {t["id"]: _marks(t) for t in tools}
    lines = ["mcp activate"]
    for r in results:
        if r["status"] == "not loaded":
            line = f" ✘ {one_line(r['id'])} · not loaded: {one_line(r['reason'])}"
            diag = r.get("diagnostic")
            if diag:
                # A diagnostic that only repeats the reason adds its hint: who can fix it.
                detail = diag["hint"] if diag["message"] == r["reason"] else one_line(diag["message"])
                line += f" [{diag['code']}] {detail}"
            if r.get("nearby"):
                line += f" Nearby: {one_line(', '.join(r['nearby']))}"
        else:
            called = f" → {one_line(wording.call_name(r['id']))}" if wording.call_name else ""
            line = f" ✔ {one_line(r['id'])}{called} · {r['status']}{marks.get(r['id'], '')}"
            if r["id"] in signatures:
                line += "\n" + signatures[r["id"]]
        lines.append(line)
    if signatures:
        lines.append(wording.call_hint or CALL_HINT)
    if tools and tokens is not None:
        lines.append(tokens_line(tokens))
    lines += budget_lines(evicted or [], budget, over, wording)
    return "\n".join(lines)


def render_result(result: ActivateResult, wording: Wording = EDITOR) -> str:
    """An activation's whole text, from its result."""
    return render(
        result["results"],
        result["tools"],
        wording,
        result["tokens"],
        evicted=result["evicted"],
        budget=result["budget"],
        over=result["overBudget"],
    )
