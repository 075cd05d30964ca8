"""A front relays one client through the engine and survives the engine's `kill -9`, against real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from mcp_sidecar.engine import framing, runtime
from mcp_sidecar.engine.front import (
    MAX_ENV_BYTES,
    MAX_HELLO_BYTES,
    RESUME_ID_PREFIX,
    Hello,
    Relay,
    hello_environment,
)

FAKE_ENGINE = textwrap.dedent(
    """
    # An engine that answers the hello, then `initialize`, `echo` (with its pid) and never `hang`.
    import json, os, sys, threading
    from pathlib import Path
    from mcp_sidecar.engine import framing, runtime

    path, log_path, kind = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    server = runtime.listen(path)
    Frames = framing.LspFrames if kind == "lsp" else framing.LineFrames

    def log(entry):
        with open(log_path, "a") as f:
            f.write(json.dumps(entry) + "\\n")

    def serve(conn):
        runtime.check_peer(conn)
        hello = b""
        while not hello.endswith(b"\\n"):
            hello += conn.recv(1)
        log({"hello": json.loads(hello)})
        conn.sendall(b'{"v":1,"engine":{"pid":%d}}\\n' % os.getpid())
        frames = Frames()
        while data := conn.recv(65536):
            for frame in frames.feed(data):
                msg = frame.message
                log({"pid": os.getpid(), "message": msg})
                method = msg.get("method")
                if "id" not in msg or method == "hang":
                    continue
                result = {"pid": os.getpid(), "params": msg.get("params")}
                conn.sendall(Frames.frame({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
        conn.close()

    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
    """
)


class Client:
    """The editor's side of a front: writes into its stdin, reads its stdout frame by frame."""

    def __init__(self, kind: str) -> None:
        self.frames = framing.LspFrames() if kind == "lsp" else framing.LineFrames()
        self.frame = self.frames.frame
        in_read, self._in_write = os.pipe()
        self._out_read, out_write = os.pipe()
        self.front_in: BinaryIO = os.fdopen(in_read, "rb", buffering=0)
        self.front_out: BinaryIO = os.fdopen(out_write, "wb", buffering=0)
        self._pending: list[Any] = []

    def send(self, message: dict[str, Any]) -> None:
        os.write(self._in_write, self.frame({"jsonrpc": "2.0", **message}))

    def close(self) -> None:
        os.close(self._in_write)

    def read(self) -> Any:
        while not self._pending:
            data = _read_with_timeout(self._out_read, 20)
            self._pending.extend(f.message for f in self.frames.feed(data))
        return self._pending.pop(0)


def _read_with_timeout(fd: int, seconds: float) -> bytes:
    import select

    ready, _, _ = select.select([fd], [], [], seconds)
    assert ready, f"no answer from the front within {seconds} s"
    data = os.read(fd, 65536)
    assert data, "the front closed its output"
    return data


@pytest.fixture
def engine_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path / "home"))
    yield tmp_path
    shutil.rmtree(base)


def _starter(kind: str, log: Path, engines: list[subprocess.Popen[bytes]]) -> Callable[[], None]:
    paths = runtime.engine_paths()

    def start() -> None:
        script = [sys.executable, "-c", FAKE_ENGINE, str(paths.socket), str(log), kind]
        engines.append(subprocess.Popen(script, start_new_session=True))

    return start


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("kind", ["lsp", "mcp"])
def test_a_killed_engine_answers_the_requests_in_flight_and_a_new_one_takes_over(engine_env: Path, kind: str) -> None:
    log = engine_env / "engine.log"
    engines: list[subprocess.Popen[bytes]] = []
    paths = runtime.engine_paths()
    start = _starter(kind, log, engines)
    client = Client(kind)
    hello = Hello(kind, ["serve"], env={"CANARY": "x"})
    relay = Relay(hello, lambda: runtime.connect_or_start(paths, start), client.front_in, client.front_out)
    ended: list[int | None] = []
    thread = threading.Thread(target=lambda: ended.append(relay.run()), daemon=True)
    thread.start()
    try:
        client.send({"id": 1, "method": "initialize", "params": {"processId": None}})
        first = client.read()
        assert first["id"] == 1
        first_pid = first["result"]["pid"]
        client.send({"method": "initialized", "params": {}})
        client.send({"id": 2, "method": "echo", "params": {"n": 2}})
        assert client.read() == {"jsonrpc": "2.0", "id": 2, "result": {"pid": first_pid, "params": {"n": 2}}}
        client.send({"id": 3, "method": "hang"})
        _wait_logged(log, lambda e: e.get("message", {}).get("method") == "hang")

        os.kill(first_pid, signal.SIGKILL)

        lost = client.read()
        assert lost["id"] == 3
        assert lost["error"]["data"]["code"] == "engine_restarted"
        assert lost["error"]["data"]["operation"] == "hang"
        client.send({"id": 4, "method": "echo", "params": {"n": 4}})
        after = client.read()  # the replayed initialize's answer never reaches the client
        assert after["id"] == 4
        second_pid = after["result"]["pid"]
        assert second_pid != first_pid
        assert relay.restarts == 1

        seen = [e for e in _log(log) if e.get("pid") == second_pid]
        assert [e["message"].get("method") for e in seen] == ["initialize", "initialized", "echo"]
        assert str(seen[0]["message"]["id"]).startswith(RESUME_ID_PREFIX)
        hellos = [e["hello"] for e in _log(log) if "hello" in e]
        assert [h["resume"] for h in hellos] == [None, hello.front]
        assert all(h["kind"] == kind and h["env"] == {"CANARY": "x"} for h in hellos)

        client.close()
        thread.join(timeout=20)
        assert ended == [0]
    finally:
        for engine in engines:
            engine.kill()
            engine.wait()


def test_a_front_without_an_engine_hands_back_before_reading_its_client(engine_env: Path) -> None:
    """No engine starts: `run` says so (None) and the caller runs in-process; stdin was never read."""
    paths = runtime.engine_paths()
    client = Client("lsp")

    def connect() -> Any:
        return runtime.connect_or_start(paths, lambda: None, timeout=0.2)

    client.send({"id": 1, "method": "initialize", "params": {}})
    relay = Relay(Hello("lsp", ["serve"]), connect, client.front_in, client.front_out)
    assert relay.run() is None
    assert os.read(client.front_in.fileno(), 65536).startswith(b"Content-Length:")  # still there to serve


def _wait_logged(log: Path, condition: Callable[[dict[str, Any]], bool], seconds: float = 20) -> None:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if log.exists() and any(condition(e) for e in _log(log)):
            return
        time.sleep(0.02)
    raise AssertionError(f"the engine never logged the awaited message within {seconds} s")


def test_lsp_frames_come_out_whole_from_any_chunks() -> None:
    frames = framing.LspFrames()
    data = framing.LspFrames.frame({"id": 1, "method": "a"}) + b"Garbage: x\r\n\r\n" + framing.LspFrames.frame([1])
    out = [f for byte in data for f in frames.feed(bytes([byte]))]
    assert [f.message for f in out] == [{"id": 1, "method": "a"}, None, [1]]
    assert b"".join(f.raw for f in out) == data  # passed on byte for byte


def test_an_oversized_lsp_body_is_passed_on_as_it_comes_never_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine reads and discards it and answers that it was too large; the next frame is whole."""
    monkeypatch.setattr(framing, "MAX_FRAME_BYTES", 24)  # the next frame, 21 bytes, fits
    frames = framing.LspFrames()
    header = b"Content-Length: 25\r\n\r\n"
    after = framing.LspFrames.frame({"id": 2, "method": "b"})
    out = frames.feed(header + b"x" * 8)
    assert [f.raw for f in out] == [header, b"x" * 8]
    out += frames.feed(b"y" * 17 + after)
    assert b"".join(f.raw for f in out) == header + b"x" * 8 + b"y" * 17 + after
    assert [f.message for f in out][-1] == {"id": 2, "method": "b"}
    assert all(len(f.raw) <= 25 for f in out[:-1])  # the body in the pieces it came in


def test_an_oversized_line_is_passed_on_as_it_comes_never_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound without its newline, a line goes on in the pieces it came in, unparsed (the
    engine answers that it was too large); the line after it is whole again."""
    monkeypatch.setattr(framing, "MAX_FRAME_BYTES", 24)
    frames = framing.LineFrames()
    after = framing.LineFrames.frame({"id": 2, "method": "b"})
    out = frames.feed(b"x" * 20)
    assert out == []  # within the bound: held for its newline
    out += frames.feed(b"x" * 10)
    out += frames.feed(b"y" * 5 + b'"}\n' + after)
    assert b"".join(f.raw for f in out) == b"x" * 30 + b"y" * 5 + b'"}\n' + after
    assert [f.message for f in out] == [None, None, {"id": 2, "method": "b"}]
    assert [len(f.raw) for f in out[:2]] == [30, 8]


def test_a_line_fed_byte_by_byte_comes_out_whole() -> None:
    frames = framing.LineFrames()
    data = framing.LineFrames.frame({"id": 1, "method": "a", "params": {"text": "z" * 5000}})
    out = [f for byte in data for f in frames.feed(bytes([byte]))]
    assert [f.raw for f in out] == [data]
    assert out[0].message["params"]["text"] == "z" * 5000


def test_a_last_line_without_its_newline_still_goes_at_the_end_of_input() -> None:
    lines = framing.LineFrames()
    assert [f.message for f in lines.feed(b'{"id":1}\n{"id":2,"method":"tools/list"}')] == [{"id": 1}]
    assert [f.message for f in lines.rest()] == [{"id": 2, "method": "tools/list"}]
    assert lines.rest() == []
    assert framing.LspFrames().rest() == []


def test_requests_and_answers_are_found_in_batches() -> None:
    batch = [{"id": 1, "method": "a"}, {"method": "n"}, {"id": True, "method": "b"}, {"id": "x", "result": 1}]
    assert framing.requests_in(batch) == [(1, "a")]
    assert framing.answers_in(batch) == ["x"]
    assert framing.requests_in("not a message") == []


def test_a_front_loads_no_event_loop_no_editor_protocol_and_no_sdk(engine_env: Path) -> None:
    """A front must stay small and start fast (issue 33: 20 MB, a warm attach under 100 ms): what
    `entry.py`, the relay and the runtime's paths import, in a fresh process."""
    heavy: tuple[str, ...] = ("asyncio", "pygls", "lsprotocol", "mcp", "numpy", "argparse", "logging", "pathlib")
    heavy += ("hashlib", "tempfile", "secrets", "platformdirs", "dataclasses")
    code = (
        "import sys, mcp_sidecar.entry, mcp_sidecar.engine.front, mcp_sidecar.engine.runtime as runtime\n"
        "runtime.engine_paths()\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert loaded.stdout.strip() == "[]"


def test_the_hello_carries_the_fronts_own_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "this-terminals-token")
    sent = json.loads(Hello("lsp", []).line(resume=False))
    assert sent["env"] == dict(os.environ)
    assert sent["env"]["GITHUB_TOKEN"] == "this-terminals-token"


def test_an_environment_past_its_bound_leaves_out_its_largest_variables(capsys: pytest.CaptureFixture[str]) -> None:
    environ = {"PATH": "/usr/bin", "HUGE_BLOB": "x" * MAX_ENV_BYTES, "BIG": "y" * (MAX_ENV_BYTES // 2)}
    environ |= {f"V{i}": "v" * 100 for i in range(100)}
    env = hello_environment(environ)
    assert set(environ) - set(env) == {"HUGE_BLOB"}  # the one variable that had to go, nothing more
    assert len(json.dumps(env)) <= MAX_ENV_BYTES
    assert len(Hello("lsp", ["serve"], env=env).line(resume=False)) < MAX_HELLO_BYTES
    warned = capsys.readouterr().err
    assert "HUGE_BLOB" in warned  # named, never shown
    assert "xxxx" not in warned
    small = {"PATH": "/usr/bin", "TOKEN": "t"}
    assert hello_environment(small) == small
