"""What a front gets back when it attaches to a new engine: its sessions' activated ids.

The engine keeps, for every attached editor front, the ids active in each of its sessions and a
digest of each tool's definition as activated (nothing else: no schema, no credential), in the
private runtime directory: `<runtime>/fronts/<front id>.json`, 0600, rewritten after a request
that changed them. When the engine dies and the front attaches again with `resume`, the new engine
activates them again against the live catalogs (`Activation.restore`: a tool whose definition
changed meanwhile is not restored, as for durable gateway sessions, whose files the gateway
fronts keep in `<runtime>/fronts/` too). A front that ends normally has its file removed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

from mcp_sidecar import fs
from mcp_sidecar.gateway.durable import MAX_BYTES, MAX_IDS, digest

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar

log = logging.getLogger(__name__)

FRONT_ID = re.compile(r"^[0-9a-f]{16}\Z")
MAX_SESSIONS = 64
STALE_SECONDS = 7 * 24 * 3600.0
"""A saved-sessions file untouched this long belongs to no living front (an engine and its fronts
killed together leave theirs): an engine removes it when it starts. An attached front's file is
touched whenever it attaches."""

Saved = dict[str, dict[str, str]]
"""Session id → (tool id → digest of its definition as activated)."""


def fronts_dir(runtime_dir: Path) -> Path:
    return runtime_dir / "fronts"


def sweep(directory: Path, older_than: float = STALE_SECONDS) -> int:
    """Remove the saved-sessions files (editor fronts' and gateway fronts') nobody touched for
    `older_than` seconds; how many went. Never raises: a directory that is not ours is left alone."""
    removed = 0
    try:
        with fs.private_directory(directory, create=False) as dir_fd:
            if dir_fd is None:
                return 0
            now = time.time()
            for entry in os.scandir(dir_fd):
                if not entry.name.endswith(".json") or not entry.is_file(follow_symlinks=False):
                    continue
                if now - entry.stat(follow_symlinks=False).st_mtime > older_than:
                    os.unlink(entry.name, dir_fd=dir_fd)
                    removed += 1
    except (OSError, fs.UnsafeDirectory) as exc:
        log.warning("old front session files were not swept (%s)", type(exc).__name__)
    if removed:
        log.info("removed %d front session file(s) no front came back for", removed)
    return removed


def touch(directory: Path, name: str) -> None:
    """Mark a front's file as in use (`sweep` keeps it); a missing file is fine."""
    try:
        with fs.private_directory(directory, create=False) as dir_fd:
            if dir_fd is not None:
                os.utime(name, dir_fd=dir_fd, follow_symlinks=False)
    except (OSError, fs.UnsafeDirectory, NotImplementedError):
        pass


def gateway_session_name(front: str) -> str:
    """The durable session a gateway front continues when it attaches again (`--session` absent)."""
    return f"front-{front}"


class FrontSessions:
    """One editor front's saved sessions."""

    def __init__(self, directory: Path, front: str) -> None:
        if not FRONT_ID.match(front):
            raise ValueError("a front id is 16 hexadecimal digits")
        self._dir = directory
        self._file = f"{front}.json"
        self._saved: Saved = {}

    def snapshot(self, app: Sidecar) -> Saved:
        sessions = {}
        for session in list(app.sessions)[:MAX_SESSIONS]:
            active = app.sessions.active(session)
            sessions[session] = {tool_id: digest(tool.canonical) for tool_id, tool in list(active.items())[:MAX_IDS]}
        return sessions

    def save(self, app: Sidecar) -> None:
        """Write the sessions when they changed since the last write; a failure is logged, nothing more."""
        current = self.snapshot(app)
        if current == self._saved:
            return
        try:
            with fs.private_directory(self._dir, create=True) as dir_fd:
                assert dir_fd is not None  # created
                fs.atomic_write_at(dir_fd, self._file, json.dumps({"sessions": current}).encode("utf-8"))
        except (OSError, fs.UnsafeDirectory) as exc:
            log.warning("a front's sessions were not saved (%s)", type(exc).__name__)
            return
        self._saved = current

    def load(self) -> Saved:
        try:
            with fs.private_directory(self._dir, create=False) as dir_fd:
                if dir_fd is None:
                    return {}
                data = json.loads(fs.read_private_file(dir_fd, self._file, MAX_BYTES))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, fs.UnsafeDirectory) as exc:
            log.warning("a front's saved sessions are not usable (%s); starting empty", type(exc).__name__)
            return {}
        sessions = data.get("sessions") if isinstance(data, dict) else None
        if not _is_saved(sessions):
            log.warning("a front's saved sessions file does not hold sessions; starting empty")
            return {}
        self._saved = sessions
        return sessions

    def remove(self) -> None:
        try:
            fs.remove_private_file(self._dir, self._file)
        except (OSError, fs.UnsafeDirectory) as exc:
            log.warning("a front's saved sessions were not removed (%s)", type(exc).__name__)

    async def restore(self, app: Sidecar, saved: Saved) -> list[str]:
        """Each saved session's ids, active again where their definitions did not change; the ids not restored."""
        lost: list[str] = []
        for session, tools in saved.items():
            if tools:
                lost += await app.activation.restore(session, tools, digest, "resume")
        self._saved = self.snapshot(app)
        return lost


def _is_saved(value: object) -> TypeGuard[Saved]:
    return (
        isinstance(value, dict)
        and len(value) <= MAX_SESSIONS
        and all(
            isinstance(session, str)
            and isinstance(tools, dict)
            and len(tools) <= MAX_IDS
            and all(isinstance(k, str) and isinstance(v, str) for k, v in tools.items())
            for session, tools in value.items()
        )
    )
