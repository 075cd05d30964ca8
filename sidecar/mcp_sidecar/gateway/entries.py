"""What the gateway lists and answers, built from server data so that no entry can hurt the host.

A host gets each native tool and prompt only if it is safe and fits:

- **Its era.** The SDK checks a whole `tools/list` (or `prompts/list`) against the host's
  protocol version and fails the list if one entry does not fit (a 2026-07-28 server's array
  `outputSchema` is not a 2025-11-25 tool). Each entry is checked on its own: an output schema
  the host's era cannot take is left out, and an entry that still does not fit is left out.
- **Its size.** A description is cut at `MAX_DESCRIPTION_CHARS`; an input schema over
  `MAX_SCHEMA_BYTES` leaves the tool out, an output schema over `MAX_OUTPUT_SCHEMA_BYTES` is left
  out (the call's result says what it holds).
- **Hidden characters.** Titles and descriptions, at any depth, are sanitised. Any other string
  of a schema (a property name, an enum value, a default) cannot be changed without changing
  what the server expects, so a tool holding hidden characters there is left out; so is a
  prompt whose argument names hold them.

Results: text blocks, embedded resources' text and resource links' names are sanitised, and
string values of `structuredContent` too.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from mcp_types import methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_sidecar.output.redact import redaction_note
from mcp_sidecar.output.sanitize import has_controls, one_line, strip_controls

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import CallToolResult

log = logging.getLogger(__name__)

MAX_DESCRIPTION_CHARS = 2_000
MAX_SCHEMA_BYTES = 64 * 1024
MAX_OUTPUT_SCHEMA_BYTES = 16 * 1024
_PROSE = ("title", "description")
_LIST_ENVELOPE = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}


def clean_prose(value: Any) -> Any:
    """`value` with every `title` and `description` string sanitised, at any depth."""
    if isinstance(value, dict):
        return {
            k: strip_controls(v) if k in _PROSE and isinstance(v, str) else clean_prose(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [clean_prose(v) for v in value]
    return value


def _prose(key: str, value: Any) -> Any:
    return strip_controls(value) if key in _PROSE and isinstance(value, str) else clean_prose(value)


def hides_text(value: Any) -> bool:
    """Whether a key or a string anywhere in `value` (prose aside: it is sanitised) holds control,
    bidi, zero-width or TAG characters; a value's newlines and tabs are text."""
    if isinstance(value, dict):
        return any(
            has_controls(k) or (not (k in _PROSE and isinstance(v, str)) and hides_text(v)) for k, v in value.items()
        )
    if isinstance(value, list):
        return any(hides_text(v) for v in value)
    return isinstance(value, str) and strip_controls(value) != value


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _fits(method: str, version: str, key: str, entry: dict[str, Any]) -> bool:
    envelope = _LIST_ENVELOPE if version in MODERN_PROTOCOL_VERSIONS else {}
    try:
        methods.serialize_server_result(method, version, {key: [entry], **envelope})
    except (ValidationError, KeyError, ValueError):
        return False
    return True


def _cut(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION_CHARS else text[: MAX_DESCRIPTION_CHARS - 1] + "…"


def tool_entry(
    name: str, server: str, descriptor: dict[str, Any], version: str, meta: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The native tool a host lists, or None (logged) when it cannot be listed safely; `meta`: its
    `_meta` for this host (MCP Apps' `ui`, `gateway/apps.py`), already made safe."""
    schema = clean_prose(descriptor.get("inputSchema") or {"type": "object"})
    if hides_text(schema) or _size(schema) > MAX_SCHEMA_BYTES:
        log.warning("gateway: %s.%s is not listed: its input schema is too large or hides characters", server, name)
        return None
    description = f"[{server}] {descriptor.get('description') or ''}".rstrip()
    entry: dict[str, Any] = {"name": name, "description": _cut(strip_controls(description)), "inputSchema": schema}
    if isinstance(descriptor.get("title"), str):
        entry["title"] = one_line(descriptor["title"])[:200]
    if meta is not None:
        entry["_meta"] = meta
    if isinstance(descriptor.get("annotations"), dict) and not hides_text(clean_prose(descriptor["annotations"])):
        entry["annotations"] = clean_prose(descriptor["annotations"])
    output = descriptor.get("outputSchema")
    if isinstance(output, dict):
        output = clean_prose(output)
        if not hides_text(output) and _size(output) <= MAX_OUTPUT_SCHEMA_BYTES:
            with_output = {**entry, "outputSchema": output}
            if _fits("tools/list", version, "tools", with_output):
                return with_output
    if _fits("tools/list", version, "tools", entry):
        return entry
    log.warning("gateway: %s.%s is not listed: it does not fit protocol %s", server, name, version)
    return None


def prompt_entry(name: str, server: str, prompt: dict[str, Any], version: str) -> dict[str, Any] | None:
    """The namespaced prompt a host lists, or None when its arguments hide characters or it does not fit."""
    entry: dict[str, Any] = {"name": name}
    if isinstance(prompt.get("description"), str):
        entry["description"] = _cut(strip_controls(f"[{server}] {prompt['description']}"))
    arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
    if any(has_controls(a["name"]) for a in arguments):
        log.warning("gateway: prompt %s of %s is not listed: an argument name hides characters", name, server)
        return None
    if arguments:
        entry["arguments"] = [
            {k: v for k, v in clean_prose(a).items() if k in ("name", "title", "description", "required")}
            for a in arguments
        ]
    return entry if _fits("prompts/list", version, "prompts", entry) else None


def clean_block(block: dict[str, Any]) -> dict[str, Any]:
    """A result's content block sanitised where it holds text a host shows or a model reads."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {**block, "text": strip_controls(block["text"])}
    if kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        if isinstance(resource.get("text"), str):
            return {**block, "resource": {**resource, "text": strip_controls(resource["text"])}}
    if kind == "resource_link":
        return {
            k: one_line(v) if k in ("name", "title", "description", "mimeType") and isinstance(v, str) else v
            for k, v in block.items()
        }
    return block


def clean_strings(value: Any) -> Any:
    """Every string in structured content, sanitised (newlines kept); keys stay as the server sent them."""
    if isinstance(value, str):
        return strip_controls(value)
    if isinstance(value, dict):
        return {k: clean_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_strings(v) for v in value]
    return value


BROWSER_STEP = "The user agreed to finish a step in the browser for this server: call again once they are done."
TOO_LARGE = "The structured result was too large to pass on: the text above and the spill file hold it."
IN_BACKGROUND = (
    "This answer is marked as an error only because the tool's structured result cannot be given before the "
    "call ends: the call did not fail."
)


def background_answer(text: str, declared_output: bool) -> dict[str, Any]:
    """A call gone to the background: the text naming it. A tool listed with an output schema owes a
    structured result it cannot have yet, so the answer reads as an error (a host checks the schema
    of every other answer), saying that it is none."""
    if not declared_output:
        return {"content": [{"type": "text", "text": text}], "isError": False}
    return {"content": [{"type": "text", "text": text}, {"type": "text", "text": IN_BACKGROUND}], "isError": True}


def call_answer(result: CallToolResult, version: str, declared_output: bool) -> dict[str, Any]:
    """A call's result for a host speaking `version`: sanitised, and valid against what its list declared
    (`declared_output`: the tool was listed with an output schema)."""
    out: dict[str, Any] = {
        "content": [clean_block(b) for b in result["content"]],
        "isError": bool(result.get("isError")),
    }
    structured = result.get("structuredContent")
    if isinstance(structured, dict) or (structured is not None and version in MODERN_PROTOCOL_VERSIONS):
        out["structuredContent"] = clean_strings(structured)
    steps = result.get("elicitations") or []
    if steps and all(s["action"] == "accept" for s in steps) and not all(s["completed"] for s in steps):
        # Only steps the user accepted (the host showed them): a declined or unshown step, and the
        # server's URL, never become an instruction to the model.
        out["content"].append({"type": "text", "text": BROWSER_STEP})
    if result.get("redacted"):
        out["content"].append({"type": "text", "text": redaction_note(result.get("redacted", 0))})
    if declared_output and "structuredContent" not in out and not out["isError"]:
        # Over the output limits the structured result stays in the spill file: the host must not
        # take the preview for a result its schema promises, so it reads as a failed call.
        out["content"].append({"type": "text", "text": TOO_LARGE})
        out["isError"] = True
    return out
