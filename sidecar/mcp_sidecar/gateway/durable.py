"""Durable gateway sessions (`mcp-sidecar mcp --session NAME`): the activated ids survive a restart.

The file holds the exact ids active in the session, nothing else (no schema, no credential),
in the private cache directory: `<cache>/gateway-sessions/NAME.json`, 0600. It is rewritten
whenever the session's tools change, and kept when the host disconnects. On the next start the
ids are activated again against the live catalogs: a tool that went or changed meanwhile is
activated in its current form or not at all, exactly as a fresh activation would.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from mcp_sidecar import fs
from mcp_sidecar.config import paths

log = logging.getLogger(__name__)

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A session name is a file name: no separator, no leading dot, at most 64 characters."""
MAX_IDS = 500
"""Ten full activations; more in a file means it was not written by us (and the rest are not kept)."""
MAX_BYTES = 64 * 1024


def valid_name(name: str) -> bool:
    return bool(NAME.match(name)) and not name.endswith(".")


class DurableSession:
    def __init__(self, name: str, directory: Path | None = None) -> None:
        if not valid_name(name):
            raise ValueError("a session name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
        self.name = name
        self._dir = directory or paths.cache_dir() / "gateway-sessions"
        self._saved: list[str] | None = None

    @property
    def _file(self) -> str:
        return f"{self.name}.json"

    def load(self) -> list[str]:
        """The ids saved last; none when there is no file or it is not ours (logged, never raised)."""
        try:
            with fs.private_directory(self._dir, create=False) as dir_fd:
                if dir_fd is None:
                    return []
                data = json.loads(fs.read_private_file(dir_fd, self._file, MAX_BYTES))
        except FileNotFoundError:
            return []
        except (OSError, ValueError, fs.UnsafeDirectory) as exc:
            log.warning(
                "gateway session %s: its file is not usable (%s); starting empty", self.name, type(exc).__name__
            )
            return []
        ids = data.get("ids") if isinstance(data, dict) else None
        if not isinstance(ids, list) or len(ids) > MAX_IDS or not all(isinstance(i, str) for i in ids):
            log.warning("gateway session %s: its file does not hold a list of tool ids; starting empty", self.name)
            return []
        self._saved = list(ids)
        return list(ids)

    def save(self, ids: list[str]) -> None:
        """Keep `ids` (sorted); a failure is logged: the session still works, it just will not survive."""
        ids = sorted(ids)[:MAX_IDS]
        if ids == self._saved:
            return
        try:
            with fs.private_directory(self._dir, create=True) as dir_fd:
                assert dir_fd is not None  # created
                fs.atomic_write_at(dir_fd, self._file, json.dumps({"ids": ids}).encode("utf-8"))
        except (OSError, fs.UnsafeDirectory) as exc:
            log.warning("gateway session %s: not saved (%s)", self.name, type(exc).__name__)
            return
        self._saved = ids
