"""The fronts' saved-sessions files an engine sweeps when it starts, and the ones it keeps."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mcp_sidecar import fs
from mcp_sidecar.engine import resume

DAY = 24 * 3600.0


def saved_file(directory: Path, name: str, age: float) -> Path:
    with fs.private_directory(directory, create=True) as dir_fd:
        assert dir_fd is not None
        fs.atomic_write_at(dir_fd, name, b'{"sessions": {}}')
    path = directory / name
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_files_no_front_came_back_for_are_swept_and_recent_ones_kept(tmp_path: Path) -> None:
    fronts = tmp_path / "fronts"
    old_editor = saved_file(fronts, "0123456789abcdef.json", 8 * DAY)
    old_gateway = saved_file(fronts, "front-0123456789abcdef.json", 8 * DAY)
    recent = saved_file(fronts, "fedcba9876543210.json", DAY)
    other = fronts / "notes.txt"
    other.write_text("not a session file")
    os.utime(other, (0, 0))

    assert resume.sweep(fronts) == 2
    assert not old_editor.exists()
    assert not old_gateway.exists()
    assert recent.exists()
    assert other.exists()


def test_an_attaching_front_keeps_its_old_file_from_the_sweep(tmp_path: Path) -> None:
    fronts = tmp_path / "fronts"
    kept = saved_file(fronts, "0123456789abcdef.json", 8 * DAY)
    resume.touch(fronts, kept.name)
    resume.touch(fronts, "missing.json")  # nothing to touch: no error
    assert resume.sweep(fronts) == 0
    assert kept.exists()


def test_a_missing_or_foreign_directory_is_left_alone(tmp_path: Path) -> None:
    assert resume.sweep(tmp_path / "absent") == 0
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "x.json").write_text("{}")
    os.utime(target / "x.json", (0, 0))
    (tmp_path / "linked").symlink_to(target)
    assert resume.sweep(tmp_path / "linked") == 0
    assert (target / "x.json").exists()
