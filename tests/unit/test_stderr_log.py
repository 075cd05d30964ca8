from __future__ import annotations

from mcp_sidecar.connections.stderr_log import MAX_LINE_CHARS, MAX_LINES, StderrLog


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
