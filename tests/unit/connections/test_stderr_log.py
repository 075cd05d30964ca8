from __future__ import annotations

from urllib.parse import quote

import pytest

from mcp_sidecar.connections.stderr_log import MAX_LINE_CHARS, MAX_LINES, StderrLog, redact_and_cut
from mcp_sidecar.output.redact import LOG_MIN_CHARS, Redactor


def test_lines_are_split_across_chunks_and_flushed() -> None:
    log = StderrLog()
    log.feed(b"first li")
    log.feed(b"ne\nsecond\r\nthi")
    log.flush()
    assert [line.text for line in log.lines] == ["first line", "second", "thi"]


def test_bounded_by_lines_and_line_length() -> None:
    log = StderrLog()
    for i in range(MAX_LINES + 10):
        log.add(f"line {i}")
    assert len(log.lines) == MAX_LINES
    assert log.dropped == 10
    assert log.lines[0].text == "line 10"
    log.add("x" * (MAX_LINE_CHARS * 2))
    assert len(log.lines[-1].text) <= MAX_LINE_CHARS + 2


def test_an_endless_line_without_newline_is_cut() -> None:
    log = StderrLog()
    log.feed(b"y" * (MAX_LINE_CHARS + 10))
    assert len(log.lines) == 1


def test_secret_values_are_redacted_longest_first() -> None:
    log = StderrLog()
    log.set_secrets(frozenset({"abcd", "abcdefgh"}))
    log.feed(b"token=abcdefgh and abcd\n")
    assert log.lines[0].text == "token=*** and ***"


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    log = StderrLog()
    log.feed(b"\xff\xfe bad\n")
    assert log.lines[0].text.endswith("bad")


# -- redaction comes before the cut -----------------------------------------------------------

CANARY = "STDERR-CANARY-0b4f9e27c1d8a6"


def substrings(secret: str, size: int = 8) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def leaks(text: str, secret: str = CANARY) -> list[str]:
    """Every 8-character piece of `secret` found in `text` (a cut secret leaves its start)."""
    return [piece for piece in substrings(secret) if piece in text]


@pytest.mark.parametrize("before_cut", range(1, len(CANARY)))
def test_a_secret_straddling_the_cut_is_redacted_whole(before_cut: int) -> None:
    log = StderrLog()
    log.set_secrets(frozenset({CANARY}))
    pad = "x" * (MAX_LINE_CHARS - before_cut)
    log.feed(f"{pad}{CANARY} and more\n".encode())
    [line] = log.lines
    whole = f"{pad}*** and more"
    assert line.text == (whole[:MAX_LINE_CHARS] + " …" if len(whole) > MAX_LINE_CHARS else whole)
    assert leaks(line.text) == []
    assert CANARY[:4] not in line.text


@pytest.mark.parametrize("chunk", [1, 7, 64, 4096, 70_000])
def test_a_long_line_in_chunks_is_stored_once_redacted_and_its_rest_dropped(chunk: int) -> None:
    log = StderrLog()
    log.set_secrets(frozenset({CANARY}))
    # The canary straddles the cut, again far past it, and again right after the held part.
    line = "y" * (MAX_LINE_CHARS - 10) + CANARY + "z" * 5_000 + CANARY + "w" * 100_000 + CANARY
    data = (line + "\nnext line\n").encode()
    for start in range(0, len(data), chunk):
        log.feed(data[start : start + chunk])
    log.flush()
    texts = [entry.text for entry in log.lines]
    # Only MAX_LINE_CHARS + the longest secret is held; its last characters could start a
    # secret, so the stored line ends with the canary's replacement.
    assert texts == ["y" * (MAX_LINE_CHARS - 10) + "*** …", "next line"]


def test_an_endless_line_without_newline_keeps_only_its_redacted_start() -> None:
    log = StderrLog()
    log.set_secrets(frozenset({CANARY}))
    log.feed(("a" * (MAX_LINE_CHARS - 3) + CANARY).encode())
    for _ in range(50):
        log.feed(b"b" * 10_000 + CANARY.encode())
    log.flush()
    [line] = log.lines
    assert line.text == "a" * (MAX_LINE_CHARS - 3) + "*** …"


def test_a_line_held_only_in_part_hides_what_could_start_a_secret() -> None:
    """Held: MAX_LINE_CHARS + the longest secret; a secret cut by that end is never shown."""
    secret = "S" * 40
    secrets = Redactor(LOG_MIN_CHARS, [secret])
    # Its longest form is its base64 (56 characters): the last 55 could start it.
    assert secrets.longest == 56
    text = "c" * (MAX_LINE_CHARS + 1) + secret[:30]
    assert redact_and_cut(text, secrets, MAX_LINE_CHARS, complete=False) == "c" * (MAX_LINE_CHARS - 24) + " …"
    shown = redact_and_cut("c" * 1_000 + secret[:30], secrets, MAX_LINE_CHARS, complete=False)
    assert shown == "c" * 975 + " …"
    assert "S" not in shown


def test_replacements_that_shorten_the_line_do_not_pull_a_cut_secret_into_view() -> None:
    log = StderrLog()
    first = "Q" * 100 + "!"
    log.set_secrets(frozenset({first, CANARY}))
    # The canary straddles the cut as written; once `first` is replaced the line is short
    # enough to keep whole, and the canary is replaced too, not cut.
    log.feed((first + "d" * (MAX_LINE_CHARS - 106) + CANARY + "e" * 50 + "\n").encode())
    [line] = log.lines
    assert line.text == "***" + "d" * (MAX_LINE_CHARS - 106) + "***" + "e" * 50
    assert leaks(line.text) == []


def test_overlapping_and_adjacent_secrets_leave_nothing() -> None:
    log = StderrLog()
    log.set_secrets(frozenset({"abcdef12", "ef123456", "zzzz"}))
    log.add("x abcdef123456 y zzzzzzzz z")
    assert log.lines[0].text == "x *** y *** z"


def test_a_multi_line_secret_is_redacted_line_by_line() -> None:
    log = StderrLog()
    key = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END KEY-----"
    log.set_secrets(frozenset({key}))
    log.feed(("loaded key:\n" + key + "\n").encode())
    assert [line.text for line in log.lines] == ["loaded key:", "***", "***", "***", "***"]


def test_a_character_split_between_reads_is_decoded_and_redacted() -> None:
    log = StderrLog()
    secret = "pässwörd-ünïcode"
    log.set_secrets(frozenset({secret}))
    data = f"token {secret}\n".encode()
    split = data.index("ö".encode()) + 1  # inside the two bytes of ö
    log.feed(data[:split])
    log.feed(data[split:])
    assert log.lines[0].text == "token ***"


def test_a_secret_split_by_a_terminal_sequence_or_encoded_is_still_redacted() -> None:
    secret = "s3cr3t/value+with spaces&more"
    log = StderrLog()
    log.set_secrets(frozenset({secret}))
    split = secret[:6] + "\x1b[0m" + secret[6:]
    log.feed(f"token={split}\nurl=?t={quote(secret)}\n".encode())
    encoded = "s3cr3t%2Fvalue%2Bwith%20spaces%26more"
    plus = "s3cr3t%2Fvalue%2Bwith+spaces%26more"
    log.feed(f'q={encoded} f={plus} j={{"t": "{secret}"}}\n'.encode())
    log.flush()
    texts = [line.text for line in log.lines]
    assert texts[0] == "token=***"
    assert texts[1] == "url=?t=***"
    assert texts[2] == 'q=*** f=*** j={"t": "***"}'
    for text in texts:
        assert secret[:8] not in text
        assert "s3cr3t" not in text
