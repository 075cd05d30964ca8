"""Private spill files: where a result too large to show is saved whole.

The directory is created 0700 and each file 0600 (created exclusively, never through a
path another user could have prepared). Every use (a write, `mcp/spill/list`,
`mcp/spill/clean`) opens the directory anew and checks it first: a symbolic link, something
other than a directory, or a directory owned by another user is refused (`directory_unsafe`),
so nothing is written there, listed or deleted. Work inside it goes through the checked
descriptor, never the path again. A write that fails part of the way (a full disk) removes
its partial file. Spill files are never deleted automatically; a user lists and removes them
with `mcp/spill/list` and `mcp/spill/clean`.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mcp_sidecar import fs
from mcp_sidecar.config import paths
from mcp_sidecar.protocol.errors import SidecarError, fail

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import Spill, SpillCleanResult, SpillFileInfo, SpillListResult

DIR_MODE = fs.PRIVATE_DIR_MODE
FILE_MODE = 0o600
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SUFFIXES = (".json", ".txt")


class SpillFailed(Exception):
    """The spill file could not be written (a full disk, a directory we do not own)."""


@dataclass(frozen=True, slots=True)
class SpillFile:
    path: Path
    bytes: int

    def to_json(self) -> Spill:
        return {"path": str(self.path), "bytes": self.bytes}


def spill_dir() -> Path:
    """`$MCP_SIDECAR_HOME/cache/spill`, else the user's cache dir for mcp-sidecar."""
    return paths.cache_dir() / "spill"


def refused(exc: fs.UnsafeDirectory, operation: str, outcome: str) -> SidecarError:
    return fail("directory_unsafe", operation, f"The spill directory {exc.path} {exc.why}; {outcome}.")


def _name(kind: str, label: str, suffix: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime())
    safe = _UNSAFE.sub("_", label)[:60].strip("_") or "result"
    return f"{stamp}-{kind}-{safe}-{secrets.token_hex(4)}{suffix}"


def _write(kind: str, label: str, suffix: str, fill: Callable[[IO[bytes]], object]) -> SpillFile:
    directory = spill_dir()
    name = _name(kind, label, suffix)
    try:
        with fs.private_directory(directory, create=True) as dir_fd:
            assert dir_fd is not None
            size = fs.write_new_file(dir_fd, name, fill, FILE_MODE)
    except fs.UnsafeDirectory as exc:
        raise SpillFailed(exc.why) from None
    except OSError as exc:
        raise SpillFailed(type(exc).__name__) from None
    return SpillFile(directory / name, size)


def write(kind: str, label: str, data: bytes, suffix: str = ".json") -> SpillFile:
    """Write `data` to a new private file; `kind` is call, read or complete."""
    return _write(kind, label, suffix, lambda handle: handle.write(data))


def write_json(kind: str, label: str, value: Any) -> SpillFile:
    """`value` as JSON, encoded in chunks straight to the file (no second copy of a large result)."""

    def fill(handle: IO[bytes]) -> None:
        for chunk in json.JSONEncoder(ensure_ascii=False).iterencode(value):
            handle.write(chunk.encode("utf-8"))

    return _write(kind, label, ".json", fill)


def _entries(dir_fd: int) -> list[tuple[str, os.stat_result]]:
    """Spill files in the checked directory: regular files (never links) with a spill suffix."""
    found: list[tuple[str, os.stat_result]] = []
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            if not entry.name.endswith(_SUFFIXES):
                continue
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode):
                found.append((entry.name, info))
    return sorted(found)


def list_files(operation: str = "spill") -> SpillListResult:
    directory = spill_dir()
    files: list[SpillFileInfo] = []
    try:
        with fs.private_directory(directory, create=False) as dir_fd:
            if dir_fd is not None:
                for name, info in _entries(dir_fd):
                    files.append({"path": str(directory / name), "bytes": info.st_size, "modified": info.st_mtime})
    except fs.UnsafeDirectory as exc:
        raise refused(exc, operation, "nothing was listed") from None
    return {"directory": str(directory), "files": files, "totalBytes": sum(f["bytes"] for f in files)}


def clean(older_than_days: float | None = None, operation: str = "spill") -> SpillCleanResult:
    """Remove spill files (only those last modified more than `older_than_days` ago, if given)."""
    cutoff = None if older_than_days is None else time.time() - older_than_days * 86_400
    directory = spill_dir()
    removed: list[str] = []
    kept = 0
    freed = 0
    try:
        with fs.private_directory(directory, create=False) as dir_fd:
            for name, info in _entries(dir_fd) if dir_fd is not None else []:
                if cutoff is not None and info.st_mtime > cutoff:
                    kept += 1
                    continue
                try:
                    os.unlink(name, dir_fd=dir_fd)  # a name in the checked directory: never a link's target
                except FileNotFoundError:
                    continue
                except OSError:
                    kept += 1
                    continue
                removed.append(str(directory / name))
                freed += info.st_size
    except fs.UnsafeDirectory as exc:
        raise refused(exc, operation, "nothing was removed") from None
    return {"directory": str(directory), "removed": removed, "freedBytes": freed, "kept": kept}
