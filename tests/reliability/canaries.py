"""Canary values for the results audit (`test_secret_audit_results.py`), and the scan that finds
any 8-character piece of one, in any form a server may send it in, anywhere it must not be.

A canary is a value the sidecar gives a server (`${VAR}` in `env` or `headers`, a `!command`'s
output, an OAuth token). The forms are the leak forms of `fixtures/servers/leaky.py`: as it is,
URL-encoded three ways, JSON-escaped (with and without `\\u` escapes, once and twice: a
structured result's text block escapes a JSON-escaped value again), in a Python repr (a
traceback on stderr), base64 four ways. A leak is any 8-character piece of any form of any
canary in any string of an answer, a notification, a question or a file (decoded from JSON where
it is JSON, so an escaped quote is compared as the quote it stands for).
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

PIECE = 8

EXACT = 'Zq8"k/+x'
"""Exactly 8 characters: the shortest value redacted, and different in every encoded form."""
LONG = "RESULT-CANARY-9c41e0d7b2"
"""Placed inside a longer value (`prefix-${VAR}-suffix`, `Bearer ${VAR}`)."""
SYMBOLS = 'pa$$\\w0rd&x=1%2F"Ünïcødé'
"""Everything the encodings change: `$`, `\\`, `&`, `=`, `%`, a quote, letters outside ASCII."""
COMMAND = "cmd-canary-77d1c0ffee42"
"""The output of a `!command`."""
KEY = (
    "-----BEGIN AUDIT KEY-----\n"
    "QUVTMjU2S0VZTWF0ZXJpYWwxMjM0NTY3ODkw\n"
    "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo0\n"
    "-----END AUDIT KEY-----"
)
"""A multi-line value (a `!command` printing a key): found whole and line by line."""
OAUTH = "OAUTH-CANARY-e51f93a0"
"""The start of every token and code the OAuth fixture issues."""

CANARIES = (EXACT, LONG, SYMBOLS, COMMAND, KEY, OAUTH)


def forms(value: str) -> list[str]:
    raw = value.encode("utf-8")
    standard, urlsafe = base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()
    return [
        value,
        quote(value),
        quote(value, safe=""),
        quote_plus(value, safe=""),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(json.dumps(value)[1:-1])[1:-1],
        json.dumps(json.dumps(value, ensure_ascii=False)[1:-1], ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        repr(json.dumps(value)[1:-1])[1:-1],
        standard,
        standard.rstrip("="),
        urlsafe,
        urlsafe.rstrip("="),
    ]


def pieces_of(values: Iterable[str]) -> frozenset[str]:
    """Every 8-character piece of every form of every value (a value's own lines included)."""
    found: set[str] = set()
    for value in values:
        for form in forms(value):
            found.update(form[i : i + PIECE] for i in range(len(form) - PIECE + 1))
    return frozenset(found)


PIECES = pieces_of(CANARIES)


def strings_in(value: Any) -> Iterator[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)
    elif value is not None and not isinstance(value, bool | int | float):
        yield str(value)


@dataclass
class Scan:
    """What was scanned, and every leak found."""

    pieces: frozenset[str] = PIECES
    leaks: list[tuple[str, str, str]] = field(default_factory=list)
    """(where, piece, the text around it)"""
    strings: int = 0
    redacted: int = 0
    """How many strings held `***`: the audit must see redaction at work, not only silence."""

    def text(self, where: str, text: str) -> None:
        self.strings += 1
        self.redacted += "***" in text
        for piece in self.pieces:
            at = text.find(piece)
            if at != -1:
                self.leaks.append((where, piece, text[max(0, at - 60) : at + 60]))

    def value(self, where: str, value: Any) -> None:
        for text in strings_in(value):
            self.text(where, text)
        self.text(where, json.dumps(value, ensure_ascii=False, default=str))

    def file(self, path: Path) -> None:
        text = path.read_bytes().decode("utf-8", "replace")
        self.text(str(path), text)
        with contextlib.suppress(ValueError):
            self.value(str(path), json.loads(text))

    def files(self, *roots: Path) -> int:
        count = 0
        for root in roots:
            for path in root.rglob("*"):
                if path.is_file():
                    self.file(path)
                    count += 1
        return count
