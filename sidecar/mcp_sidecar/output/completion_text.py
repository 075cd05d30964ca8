"""The text of an argument completion: the suggestions, each on one sanitised line, as untrusted data."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mcp_sidecar.output.redact import redaction_note
from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.output.shaping import UNTRUSTED

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import CompleteResult


def render(result: CompleteResult, notice: str) -> str:
    """`notice`: the output limits' note when the values were cut (and spilled), else ""."""
    target = result.get("template") or result.get("prompt")
    arg = result["argument"]
    head = f"{one_line(result['server'])} · {one_line(str(target))} · {one_line(arg['name'])}"
    lines = ["mcp complete", f" ✔ {head}={json.dumps(arg['value'])}"]
    lines.append(UNTRUSTED)
    if result["values"]:
        lines += [f"- {one_line(v)}" for v in result["values"]]
    else:
        lines.append("(no suggestions)")
    more = []
    if "total" in result:
        more.append(f"{result['total']} in total")
    if result["dropped"]:
        more.append(f"{result['dropped']} left out for control or invisible characters")
    if result.get("hasMore"):
        more.append("more available: narrow the prefix")
    if more:
        lines.append("(" + "; ".join(more) + ")")
    if result.get("redacted"):
        lines.append(redaction_note(result["redacted"]))
    if notice:
        lines.append(notice)
    return "\n".join(lines)
