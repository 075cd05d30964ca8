"""The engine's runtime directory, socket, peer check and start lock, on real sockets and processes."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_sidecar
from mcp_sidecar.engine import runtime

NOBODY = 65534
as_root = pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another uid")


def mode(path: str | Path) -> int:
    return stat.S_IMODE(Path(path).lstat().st_mode)


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short `$XDG_RUNTIME_DIR` (pytest's own paths are too long for a socket's name)."""
    base = Path(tempfile.mkdtemp(prefix="run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path / "home"))
    yield base
    shutil.rmtree(base)


@pytest.fixture
def engine(run_dir: Path) -> Iterator[runtime.EnginePaths]:
    paths = runtime.engine_paths()
    yield paths
    Path(paths.socket).unlink(missing_ok=True)


def test_the_runtime_directory_is_made_private_and_names_the_version(run_dir: Path) -> None:
    paths = runtime.engine_paths()
    assert paths.directory == str(run_dir / "mcp-sidecar")
    assert mode(paths.directory) == 0o700
    assert str(Path(paths.socket).parent) == paths.directory
    assert f"engine-{mcp_sidecar.__version__}-" in Path(paths.socket).name


def test_a_runtime_directory_too_deep_for_a_socket_name_falls_back_to_the_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    paths = runtime.engine_paths(tmp_path / "home")
    assert paths.directory == str(Path(tempfile.gettempdir()) / f"mcp-sidecar-{os.getuid()}")
    assert len(os.fsencode(paths.socket)) <= runtime.MAX_SOCKET_PATH
    assert mode(paths.directory) == 0o700


def test_another_config_home_gets_another_engine(run_dir: Path, tmp_path: Path) -> None:
    first = runtime.engine_paths(tmp_path / "a")
    assert runtime.engine_paths(tmp_path / "a") == first
    assert runtime.engine_paths(tmp_path / "b").socket != first.socket


def test_a_linked_runtime_directory_is_refused(run_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (run_dir / "mcp-sidecar").symlink_to(elsewhere)
    with pytest.raises(runtime.EngineUnavailable, match="symbolic link"):
        runtime.engine_paths()


@as_root
def test_a_runtime_directory_of_another_user_is_refused(run_dir: Path) -> None:
    theirs = run_dir / "mcp-sidecar"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(runtime.EngineUnavailable, match="another user"):
        runtime.engine_paths()


def test_the_socket_is_private_and_a_stale_one_is_replaced(engine: runtime.EnginePaths) -> None:
    assert runtime.probe(engine.socket) == "absent"
    server = runtime.listen(engine.socket)
    assert mode(engine.socket) == 0o600
    assert runtime.probe(engine.socket) == "live"
    with pytest.raises(runtime.EngineUnavailable, match="already listens"):
        runtime.listen(engine.socket)
    server.close()  # an engine that died: the file stays, nobody listens
    assert runtime.probe(engine.socket) == "stale"
    again = runtime.listen(engine.socket)
    try:
        assert runtime.probe(engine.socket) == "live"
    finally:
        again.close()


def test_the_own_uid_is_accepted(engine: runtime.EnginePaths) -> None:
    server = runtime.listen(engine.socket)
    client = socket.socket(socket.AF_UNIX)
    try:
        client.connect(os.fspath(engine.socket))
        conn, _ = server.accept()
        runtime.check_peer(conn)
        assert runtime.peer_uid(conn) == os.getuid()
        conn.close()
    finally:
        client.close()
        server.close()


@as_root
def test_another_uid_is_refused_by_its_credentials() -> None:
    """Even past the directory's and the socket's modes (opened up here), the peer check refuses."""
    open_dir = Path(tempfile.mkdtemp(prefix="engine-peer-"))
    os.chmod(open_dir, 0o777)
    path = open_dir / "engine.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(os.fspath(path))
    os.chmod(path, 0o666)
    server.listen(1)
    server.settimeout(20)  # a front that never connects fails the test instead of hanging it
    try:
        proc = _as_nobody(f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r}); s.recv(1)")
        conn, _ = server.accept()
        with pytest.raises(runtime.PeerRefused, match=f"uid {NOBODY}"):
            runtime.check_peer(conn)
        conn.close()
        assert proc.wait(timeout=20) == 0
    finally:
        server.close()
        shutil.rmtree(open_dir)


@as_root
def test_another_uid_cannot_reach_the_real_socket(engine: runtime.EnginePaths) -> None:
    server = runtime.listen(engine.socket)
    try:
        proc = _as_nobody(
            "import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            f"try:\n    s.connect({str(engine.socket)!r})\n"
            "except PermissionError:\n    sys.exit(3)\n"
        )
        assert proc.wait(timeout=20) == 3
    finally:
        server.close()


def test_a_linked_start_lock_is_not_followed(engine: runtime.EnginePaths, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    Path(engine.lock).symlink_to(elsewhere)
    with pytest.raises(OSError, match="Too many levels of symbolic links"), runtime.start_lock(engine.lock):
        pass
    assert elsewhere.read_text() == "keep"


def test_racing_fronts_start_exactly_one_engine(engine: runtime.EnginePaths, tmp_path: Path) -> None:
    """Four processes attach at once; each start is logged to a file; one engine serves all four."""
    starts = tmp_path / "starts"
    front = textwrap.dedent(
        f"""
        import subprocess, sys
        from pathlib import Path
        from mcp_sidecar.engine import runtime

        paths = runtime.engine_paths()
        def start():
            with open({str(starts)!r}, "a") as log:
                log.write("start\\n")
            subprocess.Popen([sys.executable, "-c", {ENGINE!r}, str(paths.socket)], start_new_session=True)
        sock = runtime.connect_or_start(paths, start, timeout=20)
        sock.sendall(b"hello")
        assert sock.recv(5) == b"hello"
        """
    )
    fronts = [subprocess.Popen([sys.executable, "-c", front]) for _ in range(4)]
    try:
        assert [f.wait(timeout=60) for f in fronts] == [0, 0, 0, 0]
        assert starts.read_text().splitlines() == ["start"]
    finally:
        for f in fronts:
            f.kill()
        _stop_engine(engine)


ENGINE = textwrap.dedent(
    """
    import os, sys, threading
    from pathlib import Path
    from mcp_sidecar.engine import runtime

    server = runtime.listen(Path(sys.argv[1]))
    def echo(conn):
        data = conn.recv(5)
        if not data:  # a probe: connected and closed
            return
        if data == b"stop!":
            os._exit(0)
        conn.sendall(data)
    while True:
        conn, _ = server.accept()
        runtime.check_peer(conn)
        threading.Thread(target=echo, args=(conn,), daemon=True).start()
    """
)


def _stop_engine(engine: runtime.EnginePaths) -> None:
    if runtime.probe(engine.socket) == "live":
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(os.fspath(engine.socket))
        sock.sendall(b"stop!")
        sock.close()


def _as_nobody(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", code],
        cwd="/",
    )


def test_another_credential_session_gets_another_engine(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1/bus")
    first = runtime.engine_paths()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/other-bus")
    assert runtime.engine_paths().socket != first.socket


def test_an_engine_that_ends_before_it_listens_is_given_up_on_at_once(engine: runtime.EnginePaths) -> None:
    """Not after the whole wait (a minute, for a loaded machine's start-up): the front then runs in-process."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        started.append(subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"]))
        return started[0]

    with pytest.raises(runtime.EngineUnavailable, match="ended before it listened"):
        runtime.connect_or_start(engine, start, timeout=3600)
    assert started[0].wait() == 3
