from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sidecar.connections.stdio import LineSplitter, OversizedLine, parse_line, server_environment


def split_all(splitter: LineSplitter, chunks: list[bytes]) -> list[bytes | None]:
    return [line for chunk in chunks for line in splitter.feed(chunk)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.data())
def test_lines_come_out_whole_however_the_stream_is_cut(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert split_all(LineSplitter(limit=1_000), chunks) == lines


def test_an_unfinished_line_waits_for_its_newline() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":') == []
    assert splitter.feed(b"1}") == []
    assert splitter.feed(b"\n{") == [b'{"a":1}']


def test_a_line_over_the_limit_is_dropped_once_and_the_next_line_is_whole() -> None:
    splitter = LineSplitter(limit=10)
    assert splitter.feed(b"0123456") == []
    assert splitter.feed(b"789abcdef") == []  # over the limit: the pieces are let go
    assert splitter.feed(b"more of the same") == []
    assert splitter.feed(b"tail\nok\n") == [None, b"ok"]
    assert splitter.feed(b"0123456789a\nshort\n") == [None, b"short"]
    assert splitter.feed(b"0123456789\n") == [b"0123456789"]  # exactly the limit is kept


def test_parse_line_turns_garbage_and_dropped_lines_into_values() -> None:
    message = parse_line(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert message.message.id == 1
    assert isinstance(parse_line(b"not json"), ValueError)
    assert isinstance(parse_line(b'{"jsonrpc":"2.0","id":1,"result":{}}\xff'), ValueError)
    assert isinstance(parse_line(None), OversizedLine)


def test_the_server_environment_is_the_clients_basics_plus_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "this-process")
    client = {
        "PATH": "/usr/bin",
        "HOME": "/home/client",
        "SHELL": "() { :; }; echo hi",
        "CANARY_SECRET": "must-not-pass",
    }
    env = server_environment({"TOKEN": "t", "PATH": "/opt/bin"}, client)
    assert env == {"PATH": "/opt/bin", "HOME": "/home/client", "TOKEN": "t"}  # nothing of this process's own
