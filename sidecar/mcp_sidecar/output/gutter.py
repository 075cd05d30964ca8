"""Server text on a terminal, behind a gutter: no row of it can pass for a line of ours.

A server's multi-line message could print rows that look like the CLI's own (`host: …`,
`Submit? …`); a long line could do the same where the terminal wraps it. Every row of server
text starts with `GUTTER`, wrapped here to the terminal's width in columns (wide characters
count two), so the terminal never wraps it and no row of it starts at column 0. The text is
sanitised first (`strip_controls`); tabs become spaces, since their width is the terminal's.
"""

from __future__ import annotations

import re
import unicodedata

from mcp_sidecar.output.sanitize import strip_controls

GUTTER = "  │ "
MIN_WIDTH = 20
"""Columns of text per row at least, however narrow the terminal says it is."""
_WORDS = re.compile(r"\S+|\s+")


def width(text: str) -> int:
    """Columns `text` takes on a terminal: wide and full-width characters two, combining marks none."""
    return sum(_columns(c) for c in text)


def _columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _split(word: str, room: int) -> tuple[str, str]:
    """The longest start of `word` that fits `room` columns (one character at least), and the rest."""
    used = 0
    for at, char in enumerate(word):
        used += _columns(char)
        if used > room and at > 0:
            return word[:at], word[at:]
    return word, ""


def _rows(line: str, room: int) -> list[str]:
    """One line of text as rows of at most `room` columns, broken between words when it can be."""
    rows: list[str] = []
    row, used = "", 0
    for word in _WORDS.findall(line):
        size = width(word)
        if used + size <= room:
            row, used = row + word, used + size
            continue
        if word.isspace():
            rows.append(row)
            row, used = "", 0
            continue
        if row:
            rows.append(row)
        while size > room:
            head, word = _split(word, room)
            rows.append(head)
            size = width(word)
        row, used = word, size
    rows.append(row)
    return [r.rstrip() for r in rows]


def gutter_lines(text: str, columns: int) -> list[str]:
    """`text` as rows behind the gutter, each fitting `columns` (an empty text is one empty row)."""
    room = max(MIN_WIDTH, columns - width(GUTTER) - 1)  # the last column left free: no automatic wrap
    lines = strip_controls(text).replace("\t", " ").splitlines() or [""]
    return [GUTTER + row for line in lines for row in _rows(line, room)]


__all__ = ["GUTTER", "gutter_lines", "width"]
