"""Which catalog entries the sidecar accepts, and how names are compared.

Tool and prompt names must have the MCP form (SEP-986, 2025-11-25 `server/tools#tool-names`),
`NAME`, put in words once, in `NAME_RULE`, for every message that states it. Resource URIs and
URI templates must hold no control, bidirectional, zero-width or TAG character (see
`output/sanitize.py`). An entry outside these rules is refused on its own: left out of the
catalog (not indexed, not activatable, not readable) and reported with a `catalog_entry_invalid`
diagnostic, whose hint says that only the server can fix it, while the rest of the catalog stays
usable. Two tools of different servers with one `mcp__server__tool` model name are refused with
the same code by discovery and activation (`collision`). Resource and template `name`s are
labels, not identifiers (the reference server names its templates "Dynamic Text Resource"); they
are only sanitised where they are shown.

Names a client sends are compared after NFC normalisation. Accepted names are ASCII, so NFC
never changes them; it lets a decomposed spelling of a refused name find its refusal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mcp_sidecar.catalog import kinds
from mcp_sidecar.catalog.kinds import EntryKind
from mcp_sidecar.json_depth import nesting
from mcp_sidecar.output.sanitize import has_controls, quoted
from mcp_sidecar.protocol.errors import DiagnosticCode, SidecarError, diagnostic, fail

NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
NAME_RULE = "1 to 128 ASCII letters, digits, `_`, `-` or `.`"
"""The name rule in words, wherever it is shown (`café` is letters, but not ASCII ones)."""
CODE: DiagnosticCode = "catalog_entry_invalid"
MAX_ENTRY_DEPTH = 64
"""The deepest nesting of objects and arrays in one entry (a tool's schemas, its `_meta`); real schemas
stay far below, and everything that reads them (signatures, validation, editors) stays safe."""
OPERATION = "catalog"
"""The diagnostics' operation: a refusal belongs to the catalog, whichever request fetched it."""


def nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def valid_name(name: str) -> bool:
    return NAME.fullmatch(name) is not None


def find(refused: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    """The refused tool or prompt `name` denotes (compared after NFC normalisation), if any."""
    wanted = nfc(name)
    return next((r for r in refused if isinstance(r.get("name"), str) and nfc(r["name"]) == wanted), None)


def problem(kind: EntryKind, key: str) -> str | None:
    """Why an entry whose identifying field is `key` is refused, or None when it is accepted."""
    record = kinds.of(kind)
    what = record.what
    if record.key == "name":  # tools and prompts: a name has the MCP form
        if valid_name(key):
            return None
        return f"The server's {what} name {quoted(key)} is not {NAME_RULE}; the {what} is left out."
    if not has_controls(key):
        return None
    field = "URI" if kind == "resource" else "template"
    return f"The server's {what} {quoted(key)} holds control or invisible characters; the {field} is left out."


def refusal(server: str, kind: EntryKind, key: str, why: str) -> dict[str, Any]:
    """The wire shape of one refused entry: `{kind, name | uri | uriTemplate, diagnostic}` (raw key)."""
    diag = diagnostic(CODE, OPERATION, why, server)
    return {"kind": kind, kinds.of(kind).key: key, "diagnostic": diag.to_json()}


def collision(server: str, name: str, others: list[str]) -> dict[str, Any]:
    """A tool refused because tools `others` (ids) of other servers have its model name."""
    shown = " and ".join(quoted(o) for o in others)
    why = (
        f"The server's tool {quoted(name)} has the same model name {quoted(f'mcp__{server}__{name}')} as {shown} "
        "(their mcp__server__tool forms collide), so it is neither offered nor activated."
    )
    diag = diagnostic(CODE, OPERATION, why, server)
    return {"kind": "tool", "name": name, "collidesWith": others, "diagnostic": diag.to_json()}


def refused_error(entry: dict[str, Any], operation: str) -> SidecarError:
    """A request naming a refused entry fails with the refusal's own message."""
    diag = entry["diagnostic"]
    return fail(CODE, operation, diag["message"], diag.get("server"))


def too_deep(kind: EntryKind, key: str, descriptor: dict[str, Any]) -> str | None:
    """Why an entry nested past MAX_ENTRY_DEPTH is refused, or None (counted without recursion)."""
    if nesting(descriptor, MAX_ENTRY_DEPTH) <= MAX_ENTRY_DEPTH:
        return None
    what = kinds.of(kind).what
    return (
        f"The server's {what} {quoted(key)} nests objects and arrays more than {MAX_ENTRY_DEPTH} levels "
        f"deep (its schema or metadata); the {what} is left out."
    )


def screen(
    server: str, kind: EntryKind, descriptors: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(accepted descriptors in order, refusals); the connection already checked the key is a string."""
    key = kinds.of(kind).key
    accepted: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for descriptor in descriptors:
        value = descriptor.get(key)
        if not isinstance(value, str):
            why: str | None = f"The server's {kinds.of(kind).what} has no valid {key}."
        else:
            why = problem(kind, value) or too_deep(kind, value, descriptor)
        if why is None:
            accepted.append(descriptor)
        else:
            refused.append(refusal(server, kind, value if isinstance(value, str) else "", why))
    return accepted, refused


Reason = Literal["name", "collision", "depth"]
_SUMMARY: dict[tuple[EntryKind, Reason], tuple[str, str]] = {
    ("tool", "name"): (f"tool whose name is not {NAME_RULE}", f"tools whose names are not {NAME_RULE}"),
    ("prompt", "name"): (f"prompt whose name is not {NAME_RULE}", f"prompts whose names are not {NAME_RULE}"),
    ("resource", "name"): (
        "resource whose URI holds control or invisible characters",
        "resources whose URIs hold control or invisible characters",
    ),
    ("template", "name"): (
        "URI template holding control or invisible characters",
        "URI templates holding control or invisible characters",
    ),
    ("tool", "collision"): (
        "tool whose model name another server's tool has too",
        "tools whose model names other servers' tools have too",
    ),
    **{
        (kind.name, "depth"): (
            f"{kind.what} nested more than {MAX_ENTRY_DEPTH} levels deep",
            f"{kind.what}s nested more than {MAX_ENTRY_DEPTH} levels deep",
        )
        for kind in kinds.KINDS
    },
}
SHOWN = 3
"""Refused keys a summary names; the rest are counted."""


def _reason(kind: EntryKind, entry: Mapping[str, Any]) -> Reason:
    """Why an entry was refused, read from the entry: a key that passes the rules was refused for its depth."""
    if "collidesWith" in entry:
        return "collision"
    key = entry.get(kinds.of(kind).key)
    return "depth" if isinstance(key, str) and key and problem(kind, key) is None else "name"


def summary(refused: Sequence[Mapping[str, Any]]) -> list[str]:
    """One server's refusals, one line per kind and reason: what was refused, and up to three escaped keys.

    `refused` holds `{kind?, name | uri | uriTemplate, collidesWith?}` (no kind: a tool).
    """
    groups: dict[tuple[EntryKind, Reason], list[Mapping[str, Any]]] = {}
    for entry in refused:
        kind: EntryKind = entry.get("kind", "tool")
        groups.setdefault((kind, _reason(kind, entry)), []).append(entry)
    lines = []
    for (kind, reason), entries in groups.items():
        one, many = _SUMMARY[(kind, reason)]
        shown = []
        for entry in entries[:SHOWN]:
            text = quoted(entry[kinds.of(kind).key], 40)
            if reason == "collision":
                text += f" (as {' and '.join(quoted(o) for o in entry['collidesWith'])})"
            shown.append(text)
        more = f" and {len(entries) - SHOWN} more" if len(entries) > SHOWN else ""
        lines.append(f"{len(entries)} {one if len(entries) == 1 else many}: {', '.join(shown)}{more}")
    return lines
