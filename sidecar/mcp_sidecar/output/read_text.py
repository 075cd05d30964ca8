"""The head of a resource read's text: what was read, from which server, labelled untrusted.

The contents follow it, shaped within the output limits (`shaping.shape_read`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_sidecar.output.redact import redaction_note
from mcp_sidecar.output.sanitize import json_text, one_line
from mcp_sidecar.output.shaping import UNTRUSTED


def header(
    server: str, uri: str, template: str | None = None, arguments: Mapping[str, Any] | None = None, redacted: int = 0
) -> list[str]:
    """`template` and `arguments`: the template the URI was expanded from; `redacted`: how many of the
    server's secret values were replaced in its answer."""
    lines = ["mcp read", f" ✔ {one_line(server)} · {one_line(uri)}"]
    if template is not None:
        shown = json_text(dict(arguments or {}), indent=None)
        lines.append(f"Template {one_line(template)} with arguments {shown}")
    lines.append(f"{UNTRUSTED} (server {server!r}, uri {one_line(uri)})")
    if redacted:
        lines.append(redaction_note(redacted))
    return lines
