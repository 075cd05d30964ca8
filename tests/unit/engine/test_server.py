"""What the engine accepts as a front's hello, and the cancellations a front stops tracking."""

from __future__ import annotations

import json

from mcp_sidecar.engine.framing import cancelled_in
from mcp_sidecar.engine.server import HelloLine, parse_hello

GOOD = {"v": 1, "kind": "lsp", "front": "0123456789abcdef", "cwd": "/work", "argv": [], "env": {}}


def hello(**changes: object) -> bytes:
    return json.dumps({**GOOD, **changes}).encode()


def test_a_well_formed_hello_is_read() -> None:
    read = parse_hello(hello(resume="0123456789abcdef"))
    assert isinstance(read, HelloLine)
    assert (read.kind, read.front, read.resume) == ("lsp", "0123456789abcdef", "0123456789abcdef")


def test_the_hellos_environment_is_read_and_never_shown() -> None:
    read = parse_hello(hello(env={"GITHUB_TOKEN": "canary-3d1f7a", "PATH": "/usr/bin"}))
    assert isinstance(read, HelloLine)
    assert read.env == {"GITHUB_TOKEN": "canary-3d1f7a", "PATH": "/usr/bin"}
    assert "canary-3d1f7a" not in repr(read)  # a log line or a traceback naming the hello shows no value


def test_a_hello_that_would_name_files_or_loop_is_refused() -> None:
    """The front id names the session file: anything but 16 hex digits is refused up front (a bad
    one used to fail after the answer, and the front attached again and again)."""
    for front in ("../../etc/x", "0123456789ABCDEF", "0123", 7, None):
        assert isinstance(parse_hello(hello(front=front)), str)
    assert isinstance(parse_hello(hello(kind="shell")), str)
    assert isinstance(parse_hello(hello(cwd="relative")), str)
    assert isinstance(parse_hello(hello(argv="serve")), str)
    assert isinstance(parse_hello(hello(env={"A": 1})), str)
    assert isinstance(parse_hello(b"{not json"), str)
    assert isinstance(parse_hello(hello(v=2)), str)


def test_cancellations_of_both_protocols_name_their_requests() -> None:
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "x"}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": True}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled"},
    ]
    assert cancelled_in(batch) == [4, "x"]
