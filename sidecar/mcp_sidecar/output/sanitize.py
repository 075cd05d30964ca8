"""Keep server text from steering a terminal or hiding words from the person reading it.

One sanitiser for every human- or model-facing rendering (CLI text, `text` fields, prompt
snapshots, diagnostics built from server data). Removed everywhere:

- terminal sequences: CSI (`ESC [` … final byte, and the 8-bit `U+009B` form), string
  sequences (OSC `ESC ]` such as OSC 52 clipboard writes and OSC 8 hyperlinks, DCS `ESC P`,
  SOS `ESC X`, PM `ESC ^`, APC `ESC _`, ended by BEL or `ESC \\`, or by the end of the text;
  the 8-bit introducers too), and every other ESC sequence;
- C0 controls except newline and tab (so carriage return, bell, backspace, NUL, vertical
  tab, form feed go: `safe\\rEVIL` shows both parts), DEL, and C1 controls (U+0080–U+009F);
- bidirectional controls: U+061C ARABIC LETTER MARK, U+200E/U+200F (LRM, RLM),
  U+202A–U+202E (embeddings and overrides), U+2066–U+2069 (isolates);
- zero-width and other invisible format characters: U+00AD SOFT HYPHEN, U+180E MONGOLIAN
  VOWEL SEPARATOR, U+200B–U+200D (zero-width space, non-joiner, joiner), U+2060–U+2064
  (word joiner, invisible operators) with the rest of that block (U+2065 unassigned,
  U+206A–U+206F deprecated format controls), U+FEFF (byte-order mark, zero-width no-break
  space), U+FFF9–U+FFFB (interlinear annotation: hides its annotated text);
- Unicode TAG characters U+E0000–U+E007F (invisible ASCII look-alikes used to smuggle
  instructions to a model).

Everything else stays: text in any script, emoji, newlines and tabs. The price of removing
the joiners: an emoji ZWJ sequence shows as its parts, scripts that use ZWNJ/ZWJ for shaping
(Persian, Indic) may join differently, and subdivision flags lose their tags. Variation
selectors stay (emoji presentation needs them).

Three forms:

- `strip_controls`: content bodies (tool result text, resource text, prompt messages);
  newline and tab stay.
- `one_line`: single-line fields (names, titles, descriptions in a row, URIs in a list,
  diagnostic messages); newline, tab, U+2028 and U+2029 also become a space, so a server
  cannot forge extra rows.
- `json_escape`: JSON text printed to a terminal; every removed character that JSON does not
  already escape is written as a `\\uXXXX` escape instead, so the data is kept whole.

Plain text costs one `str.isprintable()` call (all the characters above are non-printable
to Python); text with newlines or non-ASCII letters one regular-expression scan (about
0.25 ms for 50 KiB of ASCII, 0.4 ms otherwise, on the benchmark machine).
"""

from __future__ import annotations

import json
import re

_INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
REMOVED = "\x00-\x08\x0b-\x1f\x7f-\x9f" + _INVISIBLE
"""The regular-expression class of what `strip_controls` removes (besides whole sequences)."""

_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # any other ESC sequence (charset, keypad, RIS ...)
)
_REMOVED = re.compile(f"[{REMOVED}]")
_ASCII_REMOVED = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
"""`_REMOVED` for ASCII text: a smaller class, scanned twice as fast."""
_UNSAFE = re.compile(f"[\x00-\x1f{REMOVED}\u2028\u2029]")
"""Anything `strip_controls` removes, plus the line breaks `one_line` replaces."""
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_INVISIBLE}\u2028\u2029]")
"""What `json.dumps(..., ensure_ascii=False)` leaves raw and a terminal must not see."""
_LINE_BREAKS = str.maketrans({"\n": " ", "\t": " ", "\u2028": " ", "\u2029": " "})


def strip_controls(text: str) -> str:
    """`text` without terminal sequences, control, bidi, zero-width or TAG characters (newline and tab stay)."""
    if text.isprintable() or not (_ASCII_REMOVED if text.isascii() else _REMOVED).search(text):
        return text
    return _REMOVED.sub("", _SEQUENCES.sub("", text))


def one_line(text: str) -> str:
    """`strip_controls(text)` on one line: newline, tab, U+2028 and U+2029 become a space."""
    if text.isprintable() or not _UNSAFE.search(text):
        return text
    return strip_controls(text).translate(_LINE_BREAKS)


def has_controls(text: str) -> bool:
    """Whether `text` holds anything `one_line` would change (a URI or name must not)."""
    return not text.isprintable() and _UNSAFE.search(text) is not None


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_escape(text: str) -> str:
    """JSON text (from `json.dumps`) with the characters above escaped; it decodes to the same value.

    Valid because JSON allows those characters only inside strings, where an escape means the same.
    """
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_UNSAFE.sub(_escape, text)


def json_text(value: object, indent: int | None = 2) -> str:
    """`value` as JSON for a terminal: non-ASCII text stays readable, invisible and control characters are escaped."""
    return json_escape(json.dumps(value, indent=indent, ensure_ascii=False))


def quoted(text: str, limit: int = 80) -> str:
    """`text` as a short, plain-ASCII JSON string for a message: every unusual character escaped."""
    shown = text if len(text) <= limit else text[:limit]
    out = json.dumps(shown, ensure_ascii=True)
    return out if shown is text else out + "…"
