"""Which catalog entries the sidecar accepts, and how names are compared.

Tool and prompt names must have the MCP form (SEP-986, 2025-11-25 `server/tools#tool-names`):
1 to 128 characters of `A-Za-z0-9_.-`. Resource URIs and URI templates must hold no control,
bidirectional, zero-width or TAG character (see `output/sanitize.py`). An entry outside these
rules is refused on its own: left out of the catalog (not indexed, not activatable, not
readable) and reported with a `protocol_error` diagnostic, while the rest of the catalog stays
usable. Resource and template `name`s are labels, not identifiers (the reference server names
its templates "Dynamic Text Resource"); they are only sanitised where they are shown.

Names a client sends are compared after NFC normalisation. Accepted names are ASCII, so NFC
never changes them; it lets a decomposed spelling of a refused name find its refusal.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from mcp_sidecar.output.sanitize import has_controls, quoted
from mcp_sidecar.protocol.errors import diagnostic

EntryKind = Literal["tool", "prompt", "resource", "template"]
NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
KEYS: dict[EntryKind, str] = {"tool": "name", "prompt": "name", "resource": "uri", "template": "uriTemplate"}
OPERATION = "catalog"
"""The diagnostics' operation: a refusal belongs to the catalog, whichever request fetched it."""
_WHAT: dict[EntryKind, str] = {"tool": "tool", "prompt": "prompt", "resource": "resource", "template": "URI template"}


def nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def valid_name(name: str) -> bool:
    return NAME.fullmatch(name) is not None


def problem(kind: EntryKind, key: str) -> str | None:
    """Why an entry whose identifying field is `key` is refused, or None when it is accepted."""
    if kind in ("tool", "prompt"):
        if valid_name(key):
            return None
        return (
            f"The server's {_WHAT[kind]} name {quoted(key)} is not 1 to 128 letters, digits, '_', '-' or '.'; "
            f"the {_WHAT[kind]} is left out."
        )
    if not has_controls(key):
        return None
    field = "URI" if kind == "resource" else "template"
    return f"The server's {_WHAT[kind]} {quoted(key)} holds control or invisible characters; the {field} is left out."


def refusal(server: str, kind: EntryKind, key: str, why: str) -> dict[str, Any]:
    """The wire shape of one refused entry: `{kind, name | uri | uriTemplate, diagnostic}` (raw key)."""
    diag = diagnostic("protocol_error", OPERATION, why, server)
    return {"kind": kind, KEYS[kind]: key, "diagnostic": diag.to_json()}


def screen(
    server: str, kind: EntryKind, descriptors: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(accepted descriptors in order, refusals); the connection already checked the key is a string."""
    key = KEYS[kind]
    accepted: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for descriptor in descriptors:
        value = descriptor.get(key)
        why = problem(kind, value) if isinstance(value, str) else f"The server's {_WHAT[kind]} has no valid {key}."
        if why is None:
            accepted.append(descriptor)
        else:
            refused.append(refusal(server, kind, value if isinstance(value, str) else "", why))
    return accepted, refused
