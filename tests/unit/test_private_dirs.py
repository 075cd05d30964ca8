"""Private directories checked on every use (fs.private_directory), spill files and the log file."""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_sidecar import fs, logs
from mcp_sidecar.output import spill
from mcp_sidecar.protocol.errors import SidecarError

NOBODY = 65534


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


# -- fs.private_directory ---------------------------------------------------------------------


def test_a_new_directory_is_created_0700(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with fs.private_directory(tmp_path / "a" / "b", create=True) as fd:
            assert fd is not None
    finally:
        os.umask(old)
    assert mode(tmp_path / "a" / "b") == 0o700


def test_an_absent_directory_is_none_unless_created(tmp_path: Path) -> None:
    with fs.private_directory(tmp_path / "absent", create=False) as fd:
        assert fd is None
    assert not (tmp_path / "absent").exists()


def test_an_open_directory_of_ours_is_made_private(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir(mode=0o777)
    os.chmod(tmp_path / "d", 0o777)
    with fs.private_directory(tmp_path / "d", create=False):
        pass
    assert mode(tmp_path / "d") == 0o700


@pytest.mark.parametrize("create", [True, False])
def test_a_symlink_is_refused_and_its_target_left_alone(tmp_path: Path, create: bool) -> None:
    target = tmp_path / "target"
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(fs.UnsafeDirectory) as caught, fs.private_directory(tmp_path / "link", create=create):
        pass
    assert (caught.value.path, caught.value.why) == (tmp_path / "link", "is a symbolic link")
    assert mode(target) == 0o755


def test_a_dangling_symlink_is_refused_not_created_through(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with (
        pytest.raises(fs.UnsafeDirectory, match="is a symbolic link"),
        fs.private_directory(tmp_path / "link", create=True),
    ):
        pass
    assert not (tmp_path / "nowhere").exists()


def test_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with (
        pytest.raises(fs.UnsafeDirectory, match="is not a directory"),
        fs.private_directory(tmp_path / "file", create=True),
    ):
        pass


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to another user")
def test_a_directory_of_another_user_is_refused_and_not_chmodded(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chmod(theirs, 0o755)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(fs.UnsafeDirectory, match="is owned by another user"), fs.private_directory(theirs, create=True):
        pass
    assert mode(theirs) == 0o755


def test_write_new_file_removes_a_partial_file(tmp_path: Path) -> None:
    def fill(handle: object) -> None:
        assert hasattr(handle, "write")
        handle.write(b"x" * 100_000)
        raise OSError(28, "No space left on device")

    with fs.private_directory(tmp_path / "d", create=True) as fd:
        assert fd is not None
        with pytest.raises(OSError, match="No space left"):
            fs.write_new_file(fd, "partial.json", fill)
    assert list((tmp_path / "d").iterdir()) == []


# -- spill files ------------------------------------------------------------------------------


def victim(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "mine.json").write_text("{}", encoding="utf-8")
    (path / "mine.txt").write_text("keep", encoding="utf-8")
    return path


def test_spill_list_and_clean_refuse_a_symlinked_directory(home: Path, tmp_path: Path) -> None:
    target = victim(tmp_path / "victim")
    (home / "cache").mkdir(parents=True)
    (home / "cache" / "spill").symlink_to(target)
    for call, outcome in ((spill.list_files, "nothing was listed"), (spill.clean, "nothing was removed")):
        with pytest.raises(SidecarError) as caught:
            call()
        diag = caught.value.diagnostic
        assert (diag.code, diag.operation) == ("directory_unsafe", "spill")
        assert diag.message == f"The spill directory {home / 'cache' / 'spill'} is a symbolic link; {outcome}."
    with pytest.raises(spill.SpillFailed):
        spill.write("call", "s.t", b"data")
    assert sorted(p.name for p in target.iterdir()) == ["mine.json", "mine.txt"]


def test_spill_lists_and_cleans_only_regular_files_never_links(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    saved = spill.write_json("call", "s.t", {"a": "é" * 10})
    assert saved.path.read_text(encoding="utf-8") == '{"a": "' + "é" * 10 + '"}'
    assert saved.bytes == saved.path.stat().st_size
    (saved.path.parent / "link.json").symlink_to(outside)
    listed = spill.list_files()
    assert [f["path"] for f in listed["files"]] == [str(saved.path)]
    cleaned = spill.clean()
    assert cleaned["removed"] == [str(saved.path)]
    assert outside.exists()
    assert [p.name for p in saved.path.parent.iterdir()] == ["link.json"]


def test_an_absent_spill_directory_lists_nothing_and_is_not_created(home: Path) -> None:
    assert spill.list_files()["files"] == []
    assert spill.clean()["removed"] == []
    assert not (home / "cache" / "spill").exists()


def test_a_spill_write_that_fails_midway_leaves_nothing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(self: object, value: object) -> Iterator[str]:
        yield '{"a": "' + "x" * 200_000
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json.JSONEncoder, "iterencode", full_disk)
    with pytest.raises(spill.SpillFailed, match="OSError"):
        spill.write_json("call", "s.t", {"a": 1})
    assert list((home / "cache" / "spill").iterdir()) == []


# -- the log file -----------------------------------------------------------------------------


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_the_log_file_is_created_0600(tmp_path: Path, restore_logging: None) -> None:
    old = os.umask(0o022)
    try:
        logs.setup(1, str(tmp_path / "logs" / "sidecar.log"))
    finally:
        os.umask(old)
    logging.getLogger("mcp_sidecar.test").info("hello")
    assert mode(tmp_path / "logs" / "sidecar.log") == 0o600
    assert "hello" in (tmp_path / "logs" / "sidecar.log").read_text(encoding="utf-8")


def test_a_symlinked_log_file_is_refused(
    tmp_path: Path, restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target"
    target.write_text("keep\n", encoding="utf-8")
    (tmp_path / "sidecar.log").symlink_to(target)
    logs.setup(1, str(tmp_path / "sidecar.log"))
    logging.getLogger("mcp_sidecar.test").info("hello")
    assert target.read_text(encoding="utf-8") == "keep\n"
    assert f"not logging to the file: {tmp_path / 'sidecar.log'} is a symbolic link" in capsys.readouterr().err
