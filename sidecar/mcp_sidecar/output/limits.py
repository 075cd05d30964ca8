"""Output limits and JSON detection for display, shared by tool results, reads and completions.

Text meant for a model is limited to 2,000 lines or 50 KiB per result; what is cut is saved
whole in a spill file. JSON is formatted (two-space) for display only and never replaces the
text a model receives. Explicit JSON MIME types (including `application/*+json`) and
structured content are JSON without guessing; other explicit MIME types stay plain text;
unlabelled text is checked. Invalid or truncated JSON stays plain.
"""

from __future__ import annotations

import json
from typing import Any

MAX_LINES = 2_000
MAX_TEXT_BYTES = 50 * 1024
IMAGE_BUDGET = 8 * 1024 * 1024
"""Base64 characters of images passed through per result."""
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def within_limits(text: str) -> bool:
    # Characters never outnumber UTF-8 bytes, so a long string fails without being encoded.
    return len(text) <= MAX_TEXT_BYTES and utf8_size(text) <= MAX_TEXT_BYTES and line_count(text) <= MAX_LINES


class TextBudget:
    """What is left of one result's text allowance; `cut` records that something did not fit."""

    def __init__(self, lines: int = MAX_LINES, size: int = MAX_TEXT_BYTES) -> None:
        self.lines = lines
        self.bytes = size
        self.cut = False

    def take(self, text: str) -> str:
        """`text` itself when it fits (the same object), else the longest prefix that does."""
        lines = line_count(text)
        if lines <= self.lines and len(text) <= self.bytes:
            size = utf8_size(text)
            if size <= self.bytes:
                self.lines -= lines
                self.bytes -= size
                return text
        self.cut = True
        prefix = text
        if lines > self.lines:
            end = -1
            for _ in range(self.lines):
                end = prefix.find("\n", end + 1)
                if end < 0:
                    break
            prefix = prefix[: end + 1] if end >= 0 else ""
        if len(prefix) > self.bytes or utf8_size(prefix) > self.bytes:
            # Cut at a character boundary: a partial UTF-8 sequence is dropped, never split.
            prefix = prefix[: self.bytes].encode("utf-8")[: self.bytes].decode("utf-8", "ignore")
        self.lines = max(0, self.lines - line_count(prefix))
        self.bytes -= utf8_size(prefix)
        return prefix


def is_json_mime(mime: str | None) -> bool:
    if not mime:
        return False
    base = mime.split(";", 1)[0].strip().lower()
    if base in ("application/json", "text/json"):
        return True
    return base.startswith("application/") and base.endswith("+json")


def json_display(text: str, mime: str | None) -> str | None:
    """Two-space JSON of an object or array for display, or None when it stays plain text."""
    if mime:
        if not is_json_mime(mime):
            return None  # another explicit type: no guessing
    else:
        head = text.lstrip()[:1]
        if head not in ("{", "["):
            return None
    if not within_limits(text):
        return None  # results over the formatting limits stay plain
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return formatted(value)


def formatted(value: Any) -> str | None:
    if not isinstance(value, dict | list):
        return None
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text if within_limits(text) else None
