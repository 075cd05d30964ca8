"""Safe configuration writes: preserved content, symlinks, permissions, atomicity, locking, scopes."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import tempfile
from pathlib import Path

import pytest

from mcp_sidecar.config import edit
from mcp_sidecar.config.edit import EditRefused, Target


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(path))
    return path


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


ORIGINAL = """{
  "zeta": {"keep": [1, 2, 3]},
  "mcpServers": {
    "b": {"command": "node", "env": {"TOKEN": "${TOKEN}", "OTHER": "!op read 'op://x/y'"}},
    "a": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer $DOCS_TOKEN"}}
  },
  "alpha": "unrelated"
}
"""


def test_edits_keep_unrelated_keys_order_and_references(home: Path) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text(ORIGINAL, encoding="utf-8")
    with edit.editing(Target("global", path), create=True) as doc:
        doc.set_server("new", {"command": "x"})
        assert doc.set_disabled("a", True)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["zeta", "mcpServers", "alpha"]
    assert data["zeta"] == {"keep": [1, 2, 3]}
    assert data["alpha"] == "unrelated"
    assert list(data["mcpServers"]) == ["b", "a", "new"]
    assert data["mcpServers"]["b"] == {"command": "node", "env": {"TOKEN": "${TOKEN}", "OTHER": "!op read 'op://x/y'"}}
    assert data["mcpServers"]["a"] == {
        "url": "https://example.test/mcp",
        "headers": {"Authorization": "Bearer $DOCS_TOKEN"},
        "disabled": True,
    }
    assert path.read_text(encoding="utf-8").endswith("}\n")  # indented JSON with a final newline
    assert '\n  "zeta": {\n' in path.read_text(encoding="utf-8")


def test_repeating_a_toggle_leaves_the_file_byte_for_byte_unchanged(home: Path) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text(ORIGINAL, encoding="utf-8")
    target = Target("global", path)
    with edit.editing(target, create=True) as doc:
        assert not doc.set_disabled("b", False)  # already enabled
    assert path.read_text(encoding="utf-8") == ORIGINAL  # not even reformatted
    with edit.editing(target, create=True) as doc:
        assert doc.set_disabled("b", True)
    after_disable = path.read_bytes()
    before = path.stat()
    with edit.editing(target, create=True) as doc:
        assert not doc.set_disabled("b", True)
    assert path.read_bytes() == after_disable
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    with edit.editing(target, create=True) as doc:
        assert doc.set_disabled("b", False)
    assert "disabled" not in json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["b"]


def test_symlinked_file_is_followed_and_stays_a_link(home: Path, tmp_path: Path) -> None:
    home.mkdir()
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "mcp-real.json"
    real.write_text('{"mcpServers": {}}', encoding="utf-8")
    os.chmod(real, 0o640)
    link = home / "mcp.json"
    link.symlink_to(real)
    with edit.editing(Target("global", link), create=True) as doc:
        doc.set_server("x", {"command": "x"})
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert json.loads(real.read_text(encoding="utf-8")) == {"mcpServers": {"x": {"command": "x"}}}
    assert mode_of(real) == 0o640
    # The temporary file lived beside the real file, not the link; the lock follows the real file.
    assert sorted(p.name for p in dotfiles.iterdir()) == ["mcp-real.json"]
    assert sorted(p.name for p in home.iterdir()) == ["mcp.json"]
    assert edit.lock_path(link.resolve()).exists()


def test_dangling_symlink_creates_its_target(home: Path, tmp_path: Path) -> None:
    home.mkdir()
    real = tmp_path / "elsewhere.json"
    (home / "mcp.json").symlink_to(real)
    with edit.editing(Target("global", home / "mcp.json"), create=True) as doc:
        doc.set_server("x", {"url": "https://e.test/mcp"})
    assert (home / "mcp.json").is_symlink()
    assert json.loads(real.read_text(encoding="utf-8"))["mcpServers"] == {"x": {"url": "https://e.test/mcp"}}
    assert mode_of(real) == 0o600


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o660, 0o400])
def test_existing_permissions_are_kept(home: Path, mode: int) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text('{"mcpServers": {}}', encoding="utf-8")
    os.chmod(path, mode)
    with edit.editing(Target("global", path), create=True) as doc:
        doc.set_server("x", {"command": "x"})
    assert mode_of(path) == mode
    assert "x" in json.loads(path.read_text(encoding="utf-8"))["mcpServers"]


def test_new_files_are_private_and_the_directory_too(home: Path) -> None:
    path = home / "nested" / "mcp.json"
    with edit.editing(Target("global", path), create=True) as doc:
        doc.set_server("x", {"command": "x"})
    assert mode_of(path) == 0o600
    assert mode_of(home / "nested") == 0o700
    assert mode_of(edit.lock_path(path)) == 0o600
    assert mode_of(edit.lock_path(path).parent) == 0o700
    assert sorted(p.name for p in (home / "nested").iterdir()) == ["mcp.json"]  # no lock file beside it


def test_nothing_is_created_when_nothing_changes(home: Path) -> None:
    with edit.editing(Target("global", home / "mcp.json"), create=False) as doc:
        assert not doc.existed
        assert not doc.has("x")
    assert not home.exists()


def test_a_crash_between_write_and_rename_leaves_the_old_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text(ORIGINAL, encoding="utf-8")

    def crash(src: str, dst: str) -> None:
        assert Path(src).read_text(encoding="utf-8").startswith('{\n  "zeta"')  # the new text was written
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(EditRefused) as caught, edit.editing(Target("global", path), create=True) as doc:
        doc.set_server("new", {"command": "x"})
    assert caught.value.code == "config_write_failed"
    assert caught.value.message == f"{path}: cannot write the file (No space left on device)."
    assert path.read_text(encoding="utf-8") == ORIGINAL
    assert sorted(p.name for p in home.iterdir()) == ["mcp.json"]  # no temporary file left


def test_a_failing_body_writes_nothing(home: Path) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text(ORIGINAL, encoding="utf-8")

    def failing_edit() -> None:
        with edit.editing(Target("global", path), create=True) as doc:
            doc.set_server("new", {"command": "x"})
            raise RuntimeError("validation failed")

    with pytest.raises(RuntimeError):
        failing_edit()
    assert path.read_text(encoding="utf-8") == ORIGINAL


def test_empty_files_are_kept_and_edited(home: Path) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text("\n", encoding="utf-8")
    target = Target("global", path)
    with edit.editing(target, create=True) as doc:
        assert doc.existed
        assert doc.servers == {}
        doc.set_server("x", {"command": "x"})
    with edit.editing(target, create=True) as doc:
        doc.remove_server("x")
    assert path.exists()
    assert json.loads(path.read_text(encoding="utf-8")) == {"mcpServers": {}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {', "invalid JSON at line 1, column 17; fix it before editing."),
        ("[1, 2]", "the top level must be a JSON object."),
        ('{"mcpServers": []}', "`mcpServers` must be a JSON object."),
    ],
)
def test_invalid_files_are_never_rewritten(home: Path, text: str, message: str) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EditRefused) as caught, edit.editing(Target("global", path), create=True) as doc:
        doc.set_server("x", {"command": "x"})
    assert (caught.value.code, caught.value.message) == ("configuration_invalid", f"{path}: {message}")
    assert path.read_text(encoding="utf-8") == text


def test_scoped_edits_are_refused_when_global_and_project_are_one_file(home: Path, tmp_path: Path) -> None:
    home.mkdir()
    (home / "mcp.json").write_text("{}", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").symlink_to(home / "mcp.json")
    for scope in ("global", "project"):
        with pytest.raises(EditRefused) as caught:
            edit.target(scope, project, trusted=True)
        assert caught.value.code == "config_conflict"
        assert "are the same file" in caught.value.message
    assert list(edit.readable_targets(project, trusted=True)) == ["global"]


def test_untrusted_projects_are_neither_read_nor_written(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with pytest.raises(EditRefused) as caught:
        edit.target("project", project, trusted=False)
    assert caught.value.code == "project_untrusted"
    assert caught.value.message == (
        f"The workspace is not trusted, so its configuration ({project / '.mcp.json'}) is neither read nor changed."
    )
    assert list(edit.readable_targets(project, trusted=False)) == ["global"]
    assert edit.target("project", project, trusted=True).path == project / ".mcp.json"
    assert list(edit.readable_targets(project, trusted=True)) == ["global", "project"]


def _writer(path: str, worker: int, count: int) -> None:
    for i in range(count):
        with edit.editing(Target("global", Path(path)), create=True) as doc:
            doc.set_server(f"w{worker}-{i}", {"command": "x", "args": [str(worker), str(i)]})


def test_parallel_writers_in_separate_processes_lose_nothing(home: Path) -> None:
    home.mkdir()
    path = home / "mcp.json"
    path.write_text(ORIGINAL, encoding="utf-8")
    workers, count = 4, 25
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_writer, args=(str(path), w, count)) for w in range(workers)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(60)
        assert p.exitcode == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    names = set(data["mcpServers"])
    assert names == {"a", "b"} | {f"w{w}-{i}" for w in range(workers) for i in range(count)}
    assert data["alpha"] == "unrelated"
    assert sorted(p.name for p in home.iterdir()) == ["mcp.json"]


def test_the_lock_falls_back_beside_the_file_when_the_private_directory_is_not_ours(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    (shared / f"mcp-sidecar-{os.getuid()}").symlink_to(tmp_path)  # planted by someone else
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(shared))
    path = home / "mcp.json"
    assert edit.lock_path(path) == home / ".mcp.json.lock"
    with edit.editing(Target("global", path), create=True) as doc:
        doc.set_server("x", {"command": "x"})
    assert sorted(p.name for p in home.iterdir()) == [".mcp.json.lock", "mcp.json"]
