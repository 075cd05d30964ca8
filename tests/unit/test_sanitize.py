"""Terminal control sequences are removed from server text; plain text of any script stays."""

from __future__ import annotations

import pytest

from mcp_sidecar.output.sanitize import strip_controls


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mred\x1b[0m and \x1b[1;38;5;208mbold orange\x1b[m", "red and bold orange"),
        ("\x1b[2J\x1b[H\x1b[?25lcleared", "cleared"),
        ("\x1b]8;;https://evil.example/\x1b\\click here\x1b]8;;\x1b\\", "click here"),
        ("\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07", "click"),
        ("\x1b]0;window title\x07text", "text"),
        ("\x1bPdevice control\x1b\\after", "after"),
        ("unterminated \x1b]8;;https://x", "unterminated "),
        ("ding\x07 dong\x07", "ding dong"),
        ("safe text\rEVIL", "safe textEVIL"),
        ("windows\r\nline", "windows\nline"),
        ("back\x08\x08\x08space", "backspace"),
        ("nul\x00 del\x7f", "nul del"),
        ("c1 \x9b31mcsi\x9b0m and \x85next \x9dtitle\x9c end", "c1 csi and next  end"),
        ("\x1bcreset \x1b(Bcharset \x1b7saved", "reset charset saved"),
        ("lone escape \x1b", "lone escape "),
    ],
)
def test_control_sequences_are_removed(raw: str, clean: str) -> None:
    assert strip_controls(raw) == clean


def test_newlines_tabs_and_non_ascii_text_stay() -> None:
    text = "naïve café — 日本語\tcolumn\nΣελίδα 2 🙂\n"
    assert strip_controls(text) == text


def test_plain_text_is_returned_as_is() -> None:
    text = "just words"
    assert strip_controls(text) is text
