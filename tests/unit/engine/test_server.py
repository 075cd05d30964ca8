"""What the engine accepts as a front's hello, and the cancellations a front stops tracking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_sidecar.engine.framing import cancelled_in
from mcp_sidecar.engine.server import Engine, HelloLine, parse_hello

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


async def test_a_stopped_engine_stops_accepting_and_closes_the_users_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM's path (`Engine.stop`): the listener closes and the shared servers are closed, in order."""
    import asyncio
    import shutil
    import socket
    import tempfile

    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path / "home"))
    run = Path(tempfile.mkdtemp(prefix="rt-"))
    try:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(run / "e.sock"))
        listener.listen()
        engine = Engine(grace=3600, runtime_dir=run)
        closed: list[bool] = []
        real_close = engine.user.close

        async def close() -> None:
            closed.append(True)
            await real_close()

        monkeypatch.setattr(engine.user, "close", close)
        serving = asyncio.create_task(engine.serve(listener))
        await asyncio.sleep(0.1)
        assert not serving.done()  # a long grace: it would wait an hour for a front
        engine.stop()
        await asyncio.wait_for(serving, 30)
        assert closed == [True]
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with pytest.raises((ConnectionRefusedError, FileNotFoundError)):
            probe.connect(str(run / "e.sock"))
        probe.close()
    finally:
        shutil.rmtree(run)
