"""Read-modify-write of one configuration file, safely, for the editing commands.

- The raw JSON document is edited, so unrelated keys, their order and `${VAR}` references
  and secret commands stay as written; the file is rewritten as indented JSON.
- Symlinks are followed: the real file is replaced and the link stays a link.
- Writes are atomic: a temporary file in the same directory, fsync, rename, then fsync of
  the directory. A crash leaves the old file or the new one, never half of one.
- Existing permissions are kept; new files are 0600 and a created directory 0700.
- A file is written only when its content changed, so repeating an edit leaves it
  byte-for-byte unchanged; an emptied file is kept (`{"mcpServers": {}}`), never deleted.
- An advisory lock on a per-file lock in a private per-user directory (`lock_path`)
  serializes editors across processes:
  the read happens under the lock, so two sidecars editing at once both see their edits land.
- Scoped edits are refused when the global and project paths are one file, and an
  untrusted project file is neither read nor written.

Every function here does blocking file I/O: async callers run them in a thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcp_sidecar.config import paths
from mcp_sidecar.fs import atomic_write
from mcp_sidecar.protocol.errors import DiagnosticCode

if sys.platform != "win32":
    import fcntl

EditScope = Literal["global", "project"]
SCOPES: tuple[EditScope, ...] = ("global", "project")
LOCK_TIMEOUT_S = 10.0
NEW_FILE_MODE = 0o600
NEW_DIR_MODE = 0o700


class EditRefused(Exception):
    """An edit that cannot be made; nothing was changed. `code` is a diagnostic code."""

    def __init__(self, code: DiagnosticCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Target:
    scope: EditScope
    path: Path
    """The configured path (possibly a symlink)."""

    @property
    def real(self) -> Path:
        """The file actually read and replaced: symlinks followed, even a dangling one."""
        return Path(os.path.realpath(self.path))


def same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def target(scope: EditScope, workspace: Path | None, trusted: bool) -> Target:
    """The file a scoped edit writes, or EditRefused."""
    global_path = _global_path()
    project_path = paths.project_config_path(workspace) if workspace is not None else None
    if project_path is not None and same_file(global_path, project_path):
        raise EditRefused(
            "config_conflict",
            f"The global configuration ({global_path}) and the project configuration ({project_path}) are the "
            "same file; scoped edits are refused until they are separate files.",
        )
    if scope == "global":
        return Target("global", global_path)
    if project_path is None:
        raise EditRefused("project_untrusted", "No project directory is open, so there is no project configuration.")
    if not trusted:
        raise EditRefused(
            "project_untrusted",
            f"The workspace is not trusted, so its configuration ({project_path}) is neither read nor changed.",
        )
    return Target("project", project_path)


def _global_path() -> Path:
    try:
        return paths.global_config_path()
    except paths.InvalidHome as exc:
        raise EditRefused("configuration_invalid", str(exc)) from None


def readable_targets(workspace: Path | None, trusted: bool) -> dict[EditScope, Target]:
    """The files the sidecar may read: global always, the project only when trusted and separate."""
    out: dict[EditScope, Target] = {"global": Target("global", _global_path())}
    if workspace is not None and trusted:
        project = paths.project_config_path(workspace)
        if not same_file(out["global"].path, project):
            out["project"] = Target("project", project)
    return out


@dataclass(slots=True)
class Document:
    """One configuration file's JSON document, as read under the lock."""

    target: Target
    data: dict[str, Any]
    existed: bool
    changed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def servers(self) -> dict[str, Any]:
        servers = self.data.get("mcpServers")
        return servers if isinstance(servers, dict) else {}

    def has(self, name: str) -> bool:
        return name in self.servers

    def set_server(self, name: str, definition: dict[str, Any]) -> None:
        """Add or replace a whole definition; a replaced one keeps its place in the file."""
        servers = self.data.setdefault("mcpServers", {})
        if servers.get(name) != definition:
            servers[name] = definition
            self.changed = True

    def remove_server(self, name: str) -> None:
        del self.data["mcpServers"][name]
        self.changed = True

    def set_disabled(self, name: str, disabled: bool) -> bool:
        """Change only `disabled`; True when the file changes. Enabling drops the field."""
        definition = self.servers[name]
        if not isinstance(definition, dict):
            raise EditRefused(
                "configuration_invalid",
                f"{self.target.path}: server {name!r}: the definition must be a JSON object.",
            )
        current = definition.get("disabled", False) is True
        if current == disabled:
            return False
        if disabled:
            definition["disabled"] = True
        else:
            del definition["disabled"]
        self.changed = True
        return True


def parse_text(text: str, path: Path) -> dict[str, Any]:
    """The document of a configuration file, or EditRefused when it cannot be edited safely."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EditRefused(
            "configuration_invalid",
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}; fix it before editing.",
        ) from None
    if not isinstance(data, dict):
        raise EditRefused("configuration_invalid", f"{path}: the top level must be a JSON object.")
    if "mcpServers" in data and not isinstance(data["mcpServers"], dict):
        raise EditRefused("configuration_invalid", f"{path}: `mcpServers` must be a JSON object.")
    return data


def read(t: Target) -> Document:
    """Read without locking (for reporting the other scope); a missing file is an empty document."""
    real = t.real
    try:
        text = real.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Document(t, {}, existed=False)
    except (OSError, UnicodeDecodeError):
        raise EditRefused("configuration_invalid", f"{t.path}: the file cannot be read.") from None
    return Document(t, parse_text(text, t.path), existed=True)


@contextlib.contextmanager
def editing(t: Target, *, create: bool) -> Iterator[Document]:
    """Lock `t`, read it, yield its document, and write it back when the body changed it.

    With `create` False a missing directory is left alone (nothing to edit there); with it
    True the directory is created private. An exception in the body writes nothing.
    """
    real = t.real
    if not real.parent.is_dir():
        if not create:
            yield Document(t, {}, existed=False)
            return
        try:
            real.parent.mkdir(parents=True, mode=NEW_DIR_MODE, exist_ok=True)
        except OSError as exc:
            why = _why(exc)
            raise EditRefused("config_write_failed", f"{real.parent}: cannot create the directory ({why}).") from None
    with locked(real):
        doc = read(t)
        yield doc
        if doc.changed:
            text = json.dumps(doc.data, indent=2, ensure_ascii=False) + "\n"
            try:
                write_atomic(real, text)
            except OSError as exc:
                raise EditRefused("config_write_failed", f"{t.path}: cannot write the file ({_why(exc)}).") from None


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically, keeping its permissions (0600 when new)."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    _remove_abandoned_temporaries(path)
    atomic_write(path, text, mode)
    _fsync_directory(path.parent)


def _remove_abandoned_temporaries(path: Path) -> None:
    """Temporary copies of `path` left by a writer killed before its rename.

    Called under the edit lock, so no other writer of this file is between its temporary
    file and its rename; each copy is a whole configuration and would otherwise stay forever.
    """
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()


def _fsync_directory(directory: Path) -> None:
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def lock_path(real: Path) -> Path:
    """One lock per real file, in a private per-user directory, so no lock file appears in a
    project (where it would show in the editor's file tree and could be committed).

    Falls back to a sibling `.NAME.lock` when that directory is not safely ours (another user
    created it, or it is a symlink).
    """
    directory = _lock_dir()
    if directory is None:
        return real.with_name(f".{real.name}.lock")
    digest = hashlib.sha256(str(real).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return directory / f"{digest}.lock"


def _lock_dir() -> Path | None:
    mine = Path(tempfile.gettempdir()) / f"mcp-sidecar-{os.getuid()}"
    directory = mine / "locks"
    try:
        for part in (mine, directory):
            part.mkdir(mode=0o700, exist_ok=True)
            info = os.lstat(part)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                return None
            if info.st_mode & 0o077:
                os.chmod(part, 0o700)  # ours (checked above, not followed through a link)
    except OSError:
        return None
    return directory


@contextlib.contextmanager
def locked(real: Path) -> Iterator[None]:
    if sys.platform == "win32":
        yield
        return
    try:
        fd = os.open(lock_path(real), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, NEW_FILE_MODE)
    except OSError as exc:
        raise EditRefused("config_write_failed", f"{real}: cannot create its lock file ({_why(exc)}).") from None
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EditRefused(
                        "config_write_failed",
                        f"{real}: another process has held the configuration lock for {LOCK_TIMEOUT_S:.0f} s.",
                    ) from None
                time.sleep(0.01)  # blocking a worker thread, never the event loop
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
