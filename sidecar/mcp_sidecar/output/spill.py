"""Private spill files: where a result too large to show is saved whole.

The directory is created 0700 and each file 0600 (created exclusively, never through a
path another user could have prepared). Spill files are never deleted automatically; a
user lists and removes them with `mcp/spill/list` and `mcp/spill/clean`.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_sidecar.config import paths

DIR_MODE = 0o700
FILE_MODE = 0o600
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SUFFIXES = (".json", ".txt")


class SpillFailed(Exception):
    """The spill file could not be written (a full disk, a directory we do not own)."""


@dataclass(frozen=True, slots=True)
class SpillFile:
    path: Path
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "bytes": self.bytes}


def spill_dir() -> Path:
    """`$MCP_SIDECAR_HOME/cache/spill`, else the user's cache dir for mcp-sidecar."""
    return paths.cache_dir() / "spill"


def _private_dir() -> Path:
    directory = spill_dir()
    directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    info = directory.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise SpillFailed(f"{directory} is not a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != DIR_MODE:
        os.chmod(directory, DIR_MODE)  # an existing directory from a looser umask
    return directory


def _name(kind: str, label: str, suffix: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime())
    safe = _UNSAFE.sub("_", label)[:60].strip("_") or "result"
    return f"{stamp}-{kind}-{safe}-{secrets.token_hex(4)}{suffix}"


def _create(kind: str, label: str, suffix: str) -> tuple[Path, int]:
    path = _private_dir() / _name(kind, label, suffix)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    return path, fd


def write(kind: str, label: str, data: bytes, suffix: str = ".json") -> SpillFile:
    """Write `data` to a new private file; `kind` is call, read or complete."""
    try:
        path, fd = _create(kind, label, suffix)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise SpillFailed(type(exc).__name__) from None
    return SpillFile(path, len(data))


def write_json(kind: str, label: str, value: Any) -> SpillFile:
    """`value` as JSON, encoded in chunks straight to the file (no second copy of a large result)."""
    try:
        path, fd = _create(kind, label, ".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, ensure_ascii=False)
            handle.flush()
            size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        raise SpillFailed(type(exc).__name__) from None
    return SpillFile(path, size)


def list_files() -> dict[str, Any]:
    directory = spill_dir()
    files: list[dict[str, Any]] = []
    if directory.is_dir():
        for entry in sorted(directory.iterdir()):
            if entry.suffix not in _SUFFIXES or not entry.is_file() or entry.is_symlink():
                continue
            info = entry.stat()
            files.append({"path": str(entry), "bytes": info.st_size, "modified": info.st_mtime})
    return {"directory": str(directory), "files": files, "totalBytes": sum(f["bytes"] for f in files)}


def clean(older_than_days: float | None = None) -> dict[str, Any]:
    """Remove spill files (only those last modified more than `older_than_days` ago, if given)."""
    cutoff = None if older_than_days is None else time.time() - older_than_days * 86_400
    removed: list[str] = []
    kept = 0
    freed = 0
    for item in list_files()["files"]:
        if cutoff is not None and item["modified"] > cutoff:
            kept += 1
            continue
        try:
            os.unlink(item["path"])
        except FileNotFoundError:
            continue
        except OSError:
            kept += 1
            continue
        removed.append(item["path"])
        freed += item["bytes"]
    return {"directory": str(spill_dir()), "removed": removed, "freedBytes": freed, "kept": kept}
