"""Keep server text from steering a terminal or hiding words from the person reading it.

One sanitiser for every human- or model-facing rendering (CLI text, `text` fields, prompt
snapshots, diagnostics built from server data). Removed everywhere:

- terminal sequences: CSI (`ESC [` … final byte), string sequences (OSC `ESC ]` such as
  OSC 52 clipboard writes and OSC 8 hyperlinks, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC
  `ESC _`) whole only when they are terminated (BEL, `ESC \\` or U+009C), and every other
  ESC sequence. An unterminated string introducer goes alone and what follows stays as
  visible, inert text (taking it all would lose the rest of the text);
- C0 controls except newline and tab, DEL, and C1 controls (U+0080–U+009F), each alone.
  The 8-bit introducers (CSI U+009B, DCS U+0090, SOS U+0098, OSC U+009D, PM U+009E, APC
  U+009F) start no sequence: in real text they are nearly always cp1252 read as Latin-1
  (› ž Ÿ œ are 0x9B 0x9E 0x9F 0x9C), and `Ko\\x9eice report` must not lose its report.
  Without its introducer the rest is inert text;
- bidirectional controls: U+061C ARABIC LETTER MARK, U+200E/U+200F (LRM, RLM),
  U+202A–U+202E (embeddings and overrides), U+2066–U+2069 (isolates);
- zero-width and other invisible format characters: U+00AD SOFT HYPHEN, U+180E MONGOLIAN
  VOWEL SEPARATOR, U+200B–U+200D (zero-width space, non-joiner, joiner), U+2060–U+2064
  (word joiner, invisible operators) with the rest of that block (U+2065 unassigned,
  U+206A–U+206F deprecated format controls), U+FEFF (byte-order mark, zero-width no-break
  space), U+FFF9–U+FFFB (interlinear annotation: hides its annotated text);
- Unicode TAG characters U+E0000–U+E007F (invisible ASCII look-alikes used to smuggle
  instructions to a model), and the other invisible format characters U+1BCA0–U+1BCA3
  (shorthand format controls) and U+1D173–U+1D17A (musical formatting);
- variation selectors that carry data rather than presentation: U+E0100–U+E01EF and
  U+FE00–U+FE0D always, and U+FE0E/U+FE0F past the first one after a character (a run of
  selectors after one base character encodes bytes a model can read back, "emoji
  smuggling"; emoji presentation needs one U+FE0F at most);
- invisible letters that render as nothing: the Hangul fillers U+115F, U+1160, U+3164, U+FFA0
  and U+034F COMBINING GRAPHEME JOINER.

The controls that separate text are replaced, not removed, so words stay apart: carriage
return (CRLF is one newline), vertical tab, form feed, NEL (U+0085) and the file, group and
record separators (U+001C–U+001E) become a newline, the unit separator (U+001F) a space.
`safe\\rEVIL` shows both parts, on two lines; `10%\\r50%` is `10%` and `50%`.

Everything else stays: text in any script, emoji, newlines and tabs. The price of removing
the joiners: an emoji ZWJ sequence shows as its parts, scripts that use ZWNJ/ZWJ for shaping
(Persian, Indic) may join differently, subdivision flags lose their tags, and ideographic
variation sequences (U+E0100 and up) show their base character only.

Three forms:

- `strip_controls`: content bodies (tool result text, resource text, prompt messages);
  newline and tab stay.
- `one_line`: single-line fields (names, titles, descriptions in a row, URIs in a list,
  diagnostic messages); newline, tab, U+2028 and U+2029 (and so the separators above)
  also become a space, so a server cannot forge extra rows.
- `json_escape`: JSON text printed to a terminal; every removed character that JSON does not
  already escape is written as a `\\uXXXX` escape instead, so the data is kept whole.

The forms keep their `str` result; `removed_hidden` counts what was removed that could hide
words (bidi controls, TAG characters, whole string sequences, not colours or zero-width
noise) so a rendering can add `removal_note` and a model learns that text was taken out.

Plain text costs one `str.isprintable()` call (all the characters above are non-printable
to Python); text with newlines or non-ASCII letters one regular-expression scan (about
0.25 ms for 50 KiB of ASCII, 0.4 ms otherwise, on the benchmark machine).
"""

from __future__ import annotations

import json
import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_TAGS = "\U000e0000-\U000e007f"
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a" + _TAGS
)
REMOVED = "\x00-\x08\x0b-\x1f\x7f-\x9f" + _INVISIBLE
"""The regular-expression class of what `strip_controls` removes or replaces (besides whole sequences)."""

_STRING_SEQUENCE = r"\x1b[\]PX^_][^\x07\x1b\x9c]*+(?:\x07|\x1b\\|\x9c)"
"""OSC, DCS, SOS, PM, APC with their terminator (possessive: an unterminated one fails in one scan)."""
_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*+[ -/]*+[@-~]"  # CSI
    f"|{_STRING_SEQUENCE}"
    r"|\x1b[ -/]*+[0-~]"  # any other ESC sequence, and an unterminated string introducer alone
)
_SPACING = {"\r": "\n", "\x0b": "\n", "\x0c": "\n", "\x1c": "\n", "\x1d": "\n", "\x1e": "\n", "\x85": "\n", "\x1f": " "}
"""The controls that separate text, and what each becomes instead of nothing."""
_REMOVED = re.compile(f"[{REMOVED}]")
_ASCII_REMOVED = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
"""`_REMOVED` for ASCII text: a smaller class, scanned twice as fast."""
_UNSAFE = re.compile(f"[\x00-\x1f{REMOVED}\u2028\u2029]")
"""Anything `strip_controls` removes, plus the line breaks `one_line` replaces."""
_LINE_BREAKS = str.maketrans({"\n": " ", "\t": " ", "\u2028": " ", "\u2029": " "})
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_PRINTABLE_HIDDEN = f"[{_SELECTORS}\u034f\u115f\u1160\u3164\uffa0]"
"""Printable to Python, yet nothing a reader sees: selectors and fillers (checked past the fast path)."""
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_INVISIBLE}\u2028\u2029{_PRINTABLE_HIDDEN[1:-1]}]")
"""What `json.dumps(..., ensure_ascii=False)` leaves raw and a terminal must not see."""
_LOOKALIKE = re.compile(_PRINTABLE_HIDDEN)
_SMUGGLED = re.compile(
    f"(?<=[^{_SELECTORS}])[\ufe0e\ufe0f]"  # one presentation selector after a character stays ...
    f"|{_PRINTABLE_HIDDEN}"  # ... every other selector and filler goes
)
_HIDDEN = re.compile(f"{_STRING_SEQUENCE}|[{_BIDI}{_TAGS}]+")
_SELECTOR_RUNS = re.compile(f"[{_SELECTORS}]+")
"""What `removed_hidden` counts: the removals that can hide or reorder words."""
_HIDDEN_START = re.compile(f"[\x1b{_BIDI}{_TAGS}{_SELECTORS}]")
"""How each `_HIDDEN` match begins: a one-class scan rules most text out faster."""


def _replace(match: re.Match[str]) -> str:
    return _SPACING.get(match.group(), "")


def strip_controls(text: str) -> str:
    """`text` without terminal sequences, control, bidi, zero-width or TAG characters (newline and tab stay).

    A control that separates text (carriage return, vertical tab, form feed, NEL, FS, GS, RS)
    becomes a newline, the unit separator a space.
    """
    if text.isascii():
        if text.isprintable() or not _ASCII_REMOVED.search(text):
            return text
    elif _LOOKALIKE.search(text) is not None:
        text = _SMUGGLED.sub(_keep_presentation, text)
        if text.isprintable():
            return text
    elif text.isprintable() or not _REMOVED.search(text):
        return text
    text = _SEQUENCES.sub("", text)
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _REMOVED.sub(_replace, text)


def _keep_presentation(match: re.Match[str]) -> str:
    """`_SMUGGLED`: the first presentation selector after a character stays, the rest go."""
    char = match.group()
    return char if char in "\ufe0e\ufe0f" and match.start() > 0 and _is_base(match.string[match.start() - 1]) else ""


def _is_base(char: str) -> bool:
    return not ("\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef")


def one_line(text: str) -> str:
    """`strip_controls(text)` on one line: newline, tab, U+2028 and U+2029 become a space."""
    if (text.isprintable() and (text.isascii() or not _LOOKALIKE.search(text))) or not (
        _UNSAFE.search(text) or _LOOKALIKE.search(text)
    ):
        return text
    return strip_controls(text).translate(_LINE_BREAKS)


def removed_hidden(text: str) -> int:
    """How many characters of `text` the forms above remove that could hide or reorder words.

        Counted: bidirectional controls, TAG characters and whole terminal string sequences
        (OSC, DCS, SOS, PM, APC: an OSC 8 link target, a clipboard write), and the variation
    selectors past a presentation one (data smuggled after a character). Not counted: colours
        and other CSI or ESC sequences, zero-width characters, lone controls, formatting noise
        that hides nothing.
    """
    if "\x1b" not in text if text.isascii() else _HIDDEN_START.search(text) is None:
        return 0
    count = sum(len(hidden) for hidden in _HIDDEN.findall(text))
    for run in _SELECTOR_RUNS.finditer(text):
        kept = run.group()[0] in "\ufe0e\ufe0f" and run.start() > 0
        count += len(run.group()) - kept  # selectors past a presentation one carry data
    return count


def removal_note(count: int) -> str:
    """The line telling a reader that `count` hidden characters were removed ('' for none)."""
    if count <= 0:
        return ""
    return f"(the sidecar removed {count} hidden character{'' if count == 1 else 's'} from this server's text)"


def has_controls(text: str) -> bool:
    """Whether `text` holds anything `one_line` would change (a URI or name must not)."""
    if text.isascii():
        return not text.isprintable() and _UNSAFE.search(text) is not None
    return _UNSAFE.search(text) is not None or strip_controls(text) != text


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
