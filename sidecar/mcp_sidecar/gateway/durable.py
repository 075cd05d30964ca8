"""Durable gateway sessions (`mcp-sidecar mcp --session NAME`): the activated ids survive a restart.

The file holds the exact ids active in the session and a digest of each tool's definition as
activated, nothing else (no schema, no credential), in the private cache directory:
`<cache>/gateway-sessions/NAME.json`, 0600. It is rewritten whenever the session's tools change,
and kept when the host disconnects. On the next start the ids are activated again against the
live catalogs; a tool whose definition changed meanwhile is not restored (the model was never
shown its new schema: calling it says to activate it again), and one that went is not either.
Two gateways sharing one NAME at once overwrite each other's file: the last change wins.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import TypeGuard

from mcp_sidecar import fs
from mcp_sidecar.config import paths

log = logging.getLogger(__name__)

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
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
        self._saved: dict[str, str] | None = None

    @property
    def _file(self) -> str:
        return f"{self.name}.json"

    def load(self) -> dict[str, str]:
        """Id → definition digest as saved last; none when there is no file or it is not ours (logged)."""
        try:
            with fs.private_directory(self._dir, create=False) as dir_fd:
                if dir_fd is None:
                    return {}
                data = json.loads(fs.read_private_file(dir_fd, self._file, MAX_BYTES))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, fs.UnsafeDirectory) as exc:
            why = type(exc).__name__
            log.warning("gateway session %s: its file is not usable (%s); starting empty", self.name, why)
            return {}
        tools = data.get("tools") if isinstance(data, dict) else None
        if not _is_tools(tools):
            log.warning("gateway session %s: its file does not hold tool ids; starting empty", self.name)
            return {}
        self._saved = dict(tools)
        return dict(tools)

    def save(self, tools: dict[str, str]) -> None:
        """Keep `tools` (id → digest); a failure is logged: the session works, it just will not survive."""
        kept = dict(sorted(tools.items())[:MAX_IDS])
        if kept == self._saved:
            return
        try:
            with fs.private_directory(self._dir, create=True) as dir_fd:
                assert dir_fd is not None  # created
                fs.atomic_write_at(dir_fd, self._file, json.dumps({"tools": kept}).encode("utf-8"))
        except (OSError, fs.UnsafeDirectory) as exc:
            log.warning("gateway session %s: not saved (%s)", self.name, type(exc).__name__)
            return
        self._saved = kept

    def remove(self) -> None:
        """Forget the session (a front of the engine that ended normally); a failure is logged."""
        try:
            fs.remove_private_file(self._dir, self._file)
        except (OSError, fs.UnsafeDirectory) as exc:
            log.warning("gateway session %s: not removed (%s)", self.name, type(exc).__name__)
        self._saved = None


def digest(canonical: str) -> str:
    """What a durable file keeps of a tool's definition: enough to tell it changed, nothing to read."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _is_tools(value: object) -> TypeGuard[dict[str, str]]:
    return (
        isinstance(value, dict)
        and len(value) <= MAX_IDS
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    )
