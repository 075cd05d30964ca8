"""The server directory as a model reads it: in `mcp_tools`' description, the gateway's
instructions and, for clients with a fixed description, a session's first query answer.

Bounded by `DIRECTORY_CHARS` whatever the number of servers. The entries come from
`services/model_tool.py` (`directory`), their summaries already sanitised on one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import DirectoryEntry

DIRECTORY_CHARS = 2_000
"""The server directory's budget: about 500 tokens, whatever the number of servers."""
SUMMARY_CHARS = 80
SUMMARY_MIN_CHARS = 24
HEAD = "Servers (for `server`; query to find their tools):"


def _line(entry: DirectoryEntry, summary_chars: int) -> str:
    mark = f" (unavailable: {entry['unavailable']})" if "unavailable" in entry else ""
    summary = _cut(entry["summary"], summary_chars)
    return f"- {entry['name']}{mark}: {summary}" if summary else f"- {entry['name']}{mark}"


def render(entries: list[DirectoryEntry]) -> str:
    """The directory for the model, within `DIRECTORY_CHARS`.

    Every server gets its line with a summary when there is room for all; with less, the first
    servers keep whole summaries and the rest are named; past what names alone fit, the rest
    are counted on one line.
    """
    if not entries:
        return ""
    room = DIRECTORY_CHARS - len(HEAD) - 1
    bare = [_line(e, 0) for e in entries]
    spare = room - sum(len(line) + 1 for line in bare)
    if spare < 0:
        return "\n".join([HEAD, *_named_until_full(entries, bare, room)])
    even = min(SUMMARY_CHARS, spare // len(entries) - 2)
    if even >= SUMMARY_MIN_CHARS:
        return "\n".join([HEAD, *(_line(e, even) for e in entries)])
    lines = []
    for entry, plain in zip(entries, bare, strict=True):
        line = _line(entry, SUMMARY_CHARS)
        grown = len(line) - len(plain)
        if entry["summary"] and grown <= spare:
            lines.append(line)
            spare -= grown
        else:
            lines.append(plain)
    return "\n".join([HEAD, *lines])


def _named_until_full(entries: list[DirectoryEntry], bare: list[str], room: int) -> list[str]:
    lines: list[str] = []
    used = 0
    for i, line in enumerate(bare):
        rest = [e["name"] for e in entries[i:]]
        tail = f"- and {len(rest)} more: {', '.join(rest)}"
        if used + len(line) + 1 + len(tail) > room:
            lines.append(tail if used + len(tail) <= room else f"- and {len(rest)} more (query to search them)")
            break
        lines.append(line)
        used += len(line) + 1
    return lines


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    if limit < 8:
        return ""
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",:;") + "…"
