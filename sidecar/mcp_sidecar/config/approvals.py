"""Which project server definitions the person approved to run.

Trusting a workspace is not trusting whatever its `.mcp.json` says tomorrow: a `git pull`
or a branch switch can rewrite a trusted definition's `command`, and that is new code. So
trust is bound to what was approved. For each project (by its real path) a private file in
the user's config directory records a hash of each approved definition's connection fields
(`command`, `args`, `env`, `url`, `headers`, `cwd`, as written, `${VAR}` references
unresolved). A project definition whose hash is not recorded stays disabled with the
diagnostic `trust_required` until the editor confirms it (`mcp/workspace/approve`).

What counts as approved without a question:
- the definitions present when trust is granted: `mcp/workspace/setTrusted`, the CLI's
  `--trust-project`, and the first time a trusted workspace is seen at all (no record yet);
- definitions written by the sidecar's own commands (`add`, `import`).

The file holds hashes and project paths only, never a value. It lives outside every project,
so a repository cannot ship its own approvals. Writes take the same per-file lock as
configuration edits and replace the file atomically (0600).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp_sidecar.config import edit, paths
from mcp_sidecar.fs import atomic_write

CONNECTION_FIELDS = ("command", "args", "env", "url", "headers", "cwd")
FORMAT_VERSION = 1
Change = Literal["new", "changed"]


def definition_hash(raw: Mapping[str, Any]) -> str:
    """Changes exactly when a field that decides what runs, or where it connects, changes."""
    fields = {key: raw[key] for key in CONNECTION_FIELDS if key in raw}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Pending:
    """A project definition waiting for the person's approval."""

    server: str
    change: Change
    definition_hash: str
    transport: str
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "change": self.change,
            "definitionHash": self.definition_hash,
            "transport": self.transport,
            "summary": self.summary,
        }


def project_key(workspace: Path) -> str:
    return os.path.realpath(workspace)


def _read(path: Path) -> dict[str, dict[str, str]]:
    """Every project's approvals; a missing or unreadable file approves nothing."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    projects = document.get("projects") if isinstance(document, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {
        key: {name: digest for name, digest in value.items() if isinstance(digest, str)}
        for key, value in projects.items()
        if isinstance(key, str) and isinstance(value, dict)
    }


def _write(path: Path, projects: dict[str, dict[str, str]]) -> None:
    text = json.dumps({"version": FORMAT_VERSION, "projects": projects}, indent=2, ensure_ascii=False) + "\n"
    try:
        atomic_write(path, text, edit.NEW_FILE_MODE)
    except OSError:
        raise edit.EditRefused("config_write_failed", f"{path}: cannot write the file.") from None


def approved(workspace: Path) -> dict[str, str] | None:
    """The project's approved hashes by server name, or None when it was never trusted here."""
    try:
        path = paths.approvals_path()
    except paths.InvalidHome:
        return {}
    return _read(path).get(project_key(workspace))


def record(workspace: Path, hashes: Mapping[str, str], *, only_if_new: bool = False) -> bool:
    """Add `hashes` to the project's approvals (a record is made even when `hashes` is empty).

    With `only_if_new`, nothing changes when the project already has a record. True when the
    file changed. Raises `edit.EditRefused` (`config_write_failed`) when it cannot be written.
    """
    try:
        path = paths.approvals_path()
    except paths.InvalidHome as exc:
        raise edit.EditRefused("configuration_invalid", str(exc)) from None
    key = project_key(workspace)
    try:
        path.parent.mkdir(parents=True, mode=edit.NEW_DIR_MODE, exist_ok=True)
    except OSError:
        raise edit.EditRefused("config_write_failed", f"{path.parent}: cannot create the directory.") from None
    with edit.locked(path):
        projects = _read(path)
        current = projects.get(key)
        if current is not None and only_if_new:
            return False
        merged = {**(current or {}), **hashes}
        if current == merged:
            return False
        projects[key] = dict(sorted(merged.items()))
        _write(path, projects)
        return True


def forget(workspace: Path, names: list[str]) -> None:
    """Drop removed servers' approvals, so a definition added again later is asked about again."""
    try:
        path = paths.approvals_path()
    except paths.InvalidHome:
        return
    if not path.is_file():
        return
    key = project_key(workspace)
    with edit.locked(path):
        projects = _read(path)
        current = projects.get(key)
        if current is None or not any(name in current for name in names):
            return
        projects[key] = {name: digest for name, digest in current.items() if name not in names}
        _write(path, projects)
