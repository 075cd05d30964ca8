"""Remove terminal control sequences from server text before it is shown or sent.

Removed: CSI sequences (`ESC [` … final byte, and the 8-bit `U+009B` form), string
sequences (OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC `ESC _`, ended by BEL or
`ESC \\`, or by the end of the text), every other ESC sequence, C0 controls except newline
and tab (so carriage return, bell and backspace go), DEL, and C1 controls (U+0080–U+009F).
What remains is plain text: printable characters of any script, newlines and tabs.
"""

from __future__ import annotations

import re

_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # any other ESC sequence (charset, keypad, RIS ...)
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """`text` without terminal control sequences or control characters (newline and tab stay)."""
    if text.isascii() and text.isprintable():
        return text
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))
