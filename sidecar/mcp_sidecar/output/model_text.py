"""What a model reads besides the renderings of its own operations: a called tool's result, and a
diagnostic's hint rewritten for it.

A hint written for a person (a file to read) becomes one a model can act on: what to retry with,
or what to ask the user (`MODEL_HINTS`), its `/mcp` commands spelled as the reader's person runs
them (`Wording.person_command`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from mcp_sidecar.output.redact import redaction_note
from mcp_sidecar.output.sanitize import one_line, removal_note, removed_hidden, strip_controls
from mcp_sidecar.output.wording import EDITOR, Wording

if TYPE_CHECKING:
    from mcp_sidecar.protocol.errors import Diagnostic, DiagnosticCode
    from mcp_sidecar.protocol.results import BackgroundCallView, CallToolResult

MODEL_HINTS: dict[DiagnosticCode, str] = {
    # Hints written for a model: what to retry with or what to ask the user, never a file to read.
    "invalid_params": "Retry with arguments the mcp_tools input schema allows.",
    "not_supported": "Retry without this operation: this sidecar does not offer it.",
    "server_not_found": "Retry with a server name from a mcp_tools query result; names are case-sensitive.",
    "tool_not_found": "Retry with an exact tool id from a mcp_tools query result.",
    "call_not_found": (
        "Retry the tool call itself only if you still need its result: this call's result was delivered "
        "already, or its session ended."
    ),
    "server_disabled": "Ask the user to enable the server (/mcp enable {server}); do not retry until they have.",
    "trust_required": (
        "Ask the user to review and approve the server's project definition; do not retry until they have."
    ),
    "authentication_required": "Ask the user to log in (/mcp login {server}), then retry.",
    "configuration_invalid": "Ask the user to fix the server's definition; the other servers still work.",
    "catalog_changed": "Retry the same query: the server's catalog changed while it was read.",
    "tool_not_active": 'Retry after activating the tool: mcp_tools({{"activate": ["<exact id>"]}}).',
    "tool_changed": (
        'Activate it again for its current signature (mcp_tools({{"activate": ["<exact id>"]}})); '
        "if it no longer exists, query again."
    ),
    "resource_not_found": "Retry with a URI from a new mcp_tools query or from a tool's resource link.",
    "completion_invalid": "Retry with a variable of the template (its read call names them) and a string prefix.",
    "connection_failed": "Retry once; if it fails again, ask the user to check the server (/mcp status).",
    "server_starts_itself": (
        "Ask the user to move this server's definition out of the files mcp-sidecar reads (it is mcp-sidecar "
        "itself); do not retry, the other servers still work."
    ),
}


def call_text(result: CallToolResult) -> str:
    """A tool's result as a model reads it: every block (JSON for what is not text), marked when the
    tool failed, sanitised, with a note when hidden characters were removed or the server's
    secrets replaced (so the model knows)."""
    body = "\n".join(
        block["text"] if block.get("type") == "text" and isinstance(block.get("text"), str) else json.dumps(block)
        for block in result["content"]
    )
    if not result["content"] and "structuredContent" in result:
        body = json.dumps(result["structuredContent"], ensure_ascii=False)
    text = (f"Tool {result['id']} reported an error:\n" if result["isError"] else "") + body
    notes = [note for note in (removal_note(removed_hidden(text)), redaction_note(result.get("redacted", 0))) if note]
    return "\n".join([strip_controls(text), *notes])


def for_model(diag: Diagnostic, wording: Wording = EDITOR) -> Diagnostic:
    """`diag` with the hint a model can act on, when its usual hint is written for a person."""
    hint = MODEL_HINTS.get(diag.code)
    if hint is None:
        return diag
    return replace(diag, hint=wording.person_command(hint.format(server=diag.server or "SERVER")))


def background_text(call: BackgroundCallView, *, still: bool = False) -> str:
    """What a caller reads of a call gone to the background (`still`: asked for its result, it has none yet)."""
    call_id, tool = strip_controls(call["callId"]), one_line(call["tool"])[:200]
    fetch = f'mcp_tools({{"result": "{call_id}"}})'
    if call["status"] == "cancelled":
        return f"Call {call_id} ({tool}) was cancelled; it has no result."
    progress = call.get("progress") or {}
    done = ""
    if "progress" in progress:
        done = f" ({progress['progress']:g}" + (f" of {progress['total']:g}" if "total" in progress else "") + ")"
    if progress.get("message"):
        done += f": {one_line(progress['message'])}"
    if still:
        return f"Call {call_id} ({tool}) is still running{done}. Ask for its result again later with {fetch}."
    return (
        f"Tool {tool} is taking long, so it goes on in the background as call {call_id}; the user sees it among "
        f"the running calls and can cancel it. Get its result with {fetch}: it waits up to 30 s and returns the "
        "result once, or says the call still runs. Go on with other work meanwhile if you can."
    )
