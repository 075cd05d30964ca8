"""Tool catalogs cached on disk, privately, for 24 hours.

One JSON file per server, named by a hash of the server's name, its definition as written
(its `${VAR}` references, never their values) and the working directory: two servers with
the same definition keep files of their own, so one's change notice never drops the
other's. Files hold tool descriptors only, never a credential or an interpolated value. The
directory is 0700 and files 0600; writes are atomic (temporary file in the same directory,
fsync, rename), so a crash leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from mcp_sidecar.fs import atomic_write

log = logging.getLogger(__name__)

TTL_SECONDS = 24 * 3600
FORMAT_VERSION = 1


def cache_key(server: str, fingerprint: str, workspace: Path | None) -> str:
    material = json.dumps({"v": FORMAT_VERSION, "name": server, "server": fingerprint, "cwd": str(workspace or "")})
    return hashlib.sha256(material.encode()).hexdigest()[:40]


class ToolCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / f"tools-{key}.json"

    def load(self, key: str, now: float | None = None) -> tuple[list[dict[str, Any]], float] | None:
        """The cached descriptors and when they were fetched, or None when absent, expired or unreadable."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            log.warning("ignoring an unreadable tool cache file")
            return None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION or data.get("key") != key:
            return None
        fetched_at = data.get("fetchedAt")
        tools = data.get("tools")
        if not isinstance(fetched_at, int | float) or not isinstance(tools, list):
            return None
        age = (time.time() if now is None else now) - fetched_at
        if age < 0 or age > TTL_SECONDS:
            return None
        if not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
            return None
        return tools, float(fetched_at)

    def store(self, key: str, server: str, tools: list[dict[str, Any]], fetched_at: float) -> None:
        payload = {"version": FORMAT_VERSION, "key": key, "server": server, "fetchedAt": fetched_at, "tools": tools}
        try:
            self._ensure_directory()
            atomic_write(self._path(key), json.dumps(payload, separators=(",", ":"), ensure_ascii=False))
        except OSError as exc:
            log.warning("could not write the tool cache: %s", type(exc).__name__)

    def invalidate(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(key).unlink()

    def _ensure_directory(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.directory.stat().st_mode & 0o077:
            os.chmod(self.directory, 0o700)
