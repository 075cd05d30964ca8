"""Replace a server's own secret values by `***` in what it sends back.

One redaction for the server's stderr log (`connections/stderr_log.py`) and for everything a
server answers (tool results, reads, prompts, completions, questions, progress and log
messages): a `Redactor` holds the values one connection gave its server and looks for each in
the forms a server prints it in:

- the value itself, and each line of a multi-line value (a PEM key printed line by line);
- URL-encoded (`quote` with and without `/` kept, `quote_plus`), and escaped: inside a JSON
  string (with and without `\\uXXXX` for letters outside ASCII) or a Python repr (a traceback on
  stderr), and escaped twice (a JSON text inside a JSON string, as a structured result's text
  block holds it);
- base64 of the whole value (standard and URL-safe alphabets, with and without padding).

Values shorter than `min_chars` are left alone: a result's redaction skips values under 8
characters (`RESULT_MIN_CHARS`), which would replace ordinary words; the log's keeps its 4.

A text is rewritten only when a value is found; otherwise the same object comes back, so a
result without secrets is neither copied nor re-serialised. Short strings are searched with
one precompiled alternation of every form; long ones with one `str.find` per form, which is
faster there (the regular expression engine tries the alternation at every position). The
set of forms is rebuilt only when a new value is added.

A value a server hid from the search with a control or invisible character (`AB\\u200bCD`)
would come back whole once the text is sanitised for a person or a model: a string whose
sanitised form holds a secret is replaced by that form, redacted.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from itertools import islice
from typing import Any
from urllib.parse import quote, quote_plus

from mcp_sidecar.output.sanitize import strip_controls

REDACTED = "***"
RESULT_MIN_CHARS = 8
"""A server's secret values shorter than this are not replaced in its results."""
LOG_MIN_CHARS = 4
_REGEX_CHARS_PER_FORM = 8
"""Below `forms x this` characters one regular expression beats a `find` per form."""


def secret_forms(secrets: Iterable[str], min_chars: int) -> tuple[str, ...]:
    """The texts to look for, longest first: each value of at least `min_chars` characters and
    each such line of a multi-line one, each also URL-encoded and JSON-escaped (once and twice);
    and each whole value in base64."""
    values = {s for s in secrets if len(s) >= min_chars}
    parts = set(values)
    for secret in values:
        if "\n" in secret:
            parts.update(p for line in secret.split("\n") if len(p := line.strip("\r")) >= min_chars)
    for part in list(parts):
        parts.update({quote(part), quote(part, safe=""), quote_plus(part, safe="")})
        for escaped in _escaped(part):
            parts.update({escaped, *_escaped(escaped)})
    for secret in values:
        raw = secret.encode("utf-8")
        for encoded in (base64.b64encode(raw).decode("ascii"), base64.urlsafe_b64encode(raw).decode("ascii")):
            parts.update({encoded, encoded.rstrip("=")})
    return tuple(sorted((p for p in parts if p), key=len, reverse=True))


_VISIBLE_ASCII = str.maketrans("", "", "".join(map(chr, range(32, 127))) + "\n\t")


def _may_hide(text: str) -> bool:
    """Whether sanitising could change `text`: ASCII text is checked for controls by deleting every
    other character (about ten times faster than a scan with a regular expression)."""
    if text.isascii():
        return bool(text.translate(_VISIBLE_ASCII))
    return True


def _escaped(text: str) -> set[str]:
    """`text` inside a JSON string (with and without `\\u` escapes) and inside a Python string's repr."""
    return {json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], repr(text)[1:-1]}


class Redactor:
    """The secret values of one connection, and their replacement in texts and JSON values."""

    __slots__ = ("_any", "_regex_below", "_shortest", "_values", "forms", "longest", "min_chars")

    def __init__(self, min_chars: int = RESULT_MIN_CHARS, secrets: Iterable[str] = ()) -> None:
        self.min_chars = min_chars
        self._values: frozenset[str] = frozenset()
        self.forms: tuple[str, ...] = ()
        self.longest = 0
        self._shortest = 0
        self._any: re.Pattern[str] | None = None
        self._regex_below = 0
        self.add(secrets)

    def __bool__(self) -> bool:
        return bool(self.forms)

    def add(self, secrets: Iterable[str]) -> None:
        """Also look for these values (an OAuth token refreshed mid-connection, say)."""
        fresh = {s for s in secrets if len(s) >= self.min_chars} - self._values
        if fresh:
            self._rebuild(self._values | fresh)

    def replace(self, secrets: Iterable[str]) -> None:
        """Look for these values only."""
        values = frozenset(s for s in secrets if len(s) >= self.min_chars)
        if values != self._values:
            self._rebuild(values)

    def _rebuild(self, values: frozenset[str]) -> None:
        self._values = values
        self.forms = secret_forms(values, self.min_chars)
        self.longest = len(self.forms[0]) if self.forms else 0
        self._shortest = len(self.forms[-1]) if self.forms else 0
        self._any = re.compile("|".join(map(re.escape, self.forms))) if self.forms else None
        self._regex_below = _REGEX_CHARS_PER_FORM * len(self.forms)

    def found_in(self, text: str) -> bool:
        if self._any is None:
            return False
        if len(text) < self._regex_below:
            return self._any.search(text) is not None
        return any(form in text for form in self.forms)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the forms occur in `text`, overlapping occurrences included, sorted by start."""
        spans: list[tuple[int, int]] = []
        for form in self.forms:
            start = text.find(form)
            while start != -1:
                spans.append((start, start + len(form)))
                start = text.find(form, start + 1)
        spans.sort()
        return spans

    def text(self, text: str) -> tuple[str, int]:
        """`text` with every form replaced (overlapping or adjacent ones by one `***`), and how many
        replacements; the same object and 0 when nothing was found."""
        if self._any is None or len(text) < self._shortest:
            return text, 0  # sanitising only ever shortens a text: no form fits in it
        if _may_hide(text):
            clean = strip_controls(text)
            if clean is not text and self.found_in(clean):
                return self.replaced(clean)  # a secret split by a hidden character: sanitised, redacted
        if not self.found_in(text):
            return text, 0
        return self.replaced(text)

    def replaced(self, text: str, visible: int | None = None) -> tuple[str, int]:
        """The first `visible` characters of `text` (all by default) with every form replaced
        (overlapping or adjacent ones by one `***`), and how many `***` there are. A form that
        starts before `visible` is replaced whole, however far it goes."""
        end_of_view = len(text) if visible is None else visible
        pieces: list[str] = []
        count = position = 0
        for start, end in self.spans(text):
            if start >= end_of_view:
                break
            if end <= position:
                continue  # inside a span already replaced
            if start > position or not pieces:
                pieces += [text[position:start], REDACTED]
                count += 1
            position = end  # else: overlaps or touches the span just replaced, which now reaches `end`
        if position < end_of_view:
            pieces.append(text[position:end_of_view])
        return "".join(pieces), count

    def value(self, value: Any) -> tuple[Any, int]:
        """A JSON value with every string (keys too) redacted, and how many replacements; unchanged
        containers are the same objects."""
        if not self.forms:
            return value, 0
        return self._value(value)

    def _value(self, value: Any) -> tuple[Any, int]:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return self._mapping(value)
        if isinstance(value, list):
            total = 0
            items: list[Any] | None = None
            for index, item in enumerate(value):
                new, count = self._value(item)
                if count:
                    total += count
                    items = items if items is not None else list(value)
                    items[index] = new
            return (items, total) if items is not None else (value, 0)
        return value, 0

    def _mapping(self, value: dict[Any, Any]) -> tuple[dict[Any, Any], int]:
        total = 0
        out: dict[Any, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            new_key, key_count = self.text(key) if isinstance(key, str) else (key, 0)
            new, count = self._value(item)
            if key_count or count:
                total += key_count + count
                if out is None:
                    out = dict(islice(value.items(), index))
                out[new_key] = new
            elif out is not None:
                out[key] = item
        return (out, total) if out is not None else (value, 0)


def redaction_note(count: int) -> str:
    """The line telling a reader that `count` secret values were replaced ('' for none)."""
    if count <= 0:
        return ""
    values = "value" if count == 1 else "values"
    return f"(the sidecar replaced {count} of this server's secret {values} with {REDACTED})"


__all__ = ["LOG_MIN_CHARS", "REDACTED", "RESULT_MIN_CHARS", "Redactor", "redaction_note", "secret_forms"]
