"""Which project server definitions the person approved to run.

Trusting a workspace is not trusting whatever its `.mcp.json` says tomorrow: a `git pull`
or a branch switch can rewrite a trusted definition's `command`, and that is new code. So
trust is bound to what was approved. For each project (by its real path) a private file in
the user's config directory records a hash of each approved definition: every field as
written (`${VAR}` references unresolved) except `disabled`, which changes nothing that runs
or is sent. (`description` counts: the model reads it in the `mcp_tools` server directory, so
a repository must not be able to rewrite what an approved server tells the model.) It also
keeps one hash per field (per entry of `env` and `headers`), so a later change can say which
fields changed without keeping any value.

A project definition whose hash is not recorded stays disabled with the diagnostic
`trust_required` until the person approves it (`mcp/workspace/approve`). Nothing is
approved because it merely exists, not even on the first sight of a trusted workspace: a
repository cloned under an already-trusted folder, a worktree or a copy would otherwise
run unasked. What counts as approved without a question:
- the definitions present when the person grants trust: `mcp/workspace/setTrusted` from
  untrusted to trusted, `initializationOptions.trustGranted`, the CLI's `--trust-project`;
- definitions written by the sidecar's own commands (`add`, `import`).

The file holds hashes and project paths only, never a value. It lives outside every project,
so a repository cannot ship its own approvals. Writes take the same per-file lock as
configuration edits and replace the file atomically (0600). A file that exists but cannot be
read or parsed approves nothing and is never rewritten (fail closed): approvals made then
hold for the running process only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.config import edit, paths
from mcp_sidecar.fs import atomic_write

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import PendingApproval

UNHASHED_FIELDS = frozenset({"disabled"})
"""Fields that change neither what runs nor what is sent; `enable`/`disable` need no approval.

Not `description`: it is sent to the model (the server directory of `mcp_tools`)."""
FORMAT_VERSION = 1
Change = Literal["new", "changed"]


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def definition_hash(raw: Mapping[str, Any]) -> str:
    """Changes exactly when a field that decides what runs, or what is sent, changes."""
    return _digest({key: value for key, value in raw.items() if key not in UNHASHED_FIELDS})


def field_hashes(raw: Mapping[str, Any]) -> dict[str, str]:
    """One hash per field (`env.NAME` and `headers.Name` one per entry), in definition order."""
    out: dict[str, str] = {}
    for key, value in raw.items():
        if key in UNHASHED_FIELDS:
            continue
        if key in ("env", "headers") and isinstance(value, Mapping):
            out.update({f"{key}.{name}": _digest(entry) for name, entry in value.items()})
        else:
            out[key] = _digest(value)
    return out


def changed_fields(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The fields whose hashes differ (`env.X (removed)` for a dropped entry)."""
    changed = [name for name, digest in after.items() if before.get(name) != digest]
    return changed + [f"{name} (removed)" for name in before if name not in after]


@dataclass(frozen=True, slots=True)
class Approval:
    """What was approved of one definition: its hash, and per-field hashes to name changes."""

    definition_hash: str
    fields: dict[str, str]

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Approval:
        return cls(definition_hash(raw), field_hashes(raw))

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.definition_hash, "fields": self.fields}


@dataclass(frozen=True, slots=True)
class Pending:
    """A project definition waiting for the person's approval."""

    server: str
    change: Change
    definition_hash: str
    transport: str
    summary: str
    changed_fields: tuple[str, ...] = ()
    """For a changed definition: which fields differ from the approved one."""

    def to_json(self) -> PendingApproval:
        return {
            "server": self.server,
            "change": self.change,
            "definitionHash": self.definition_hash,
            "transport": self.transport,
            "summary": self.summary,
            "changedFields": list(self.changed_fields),
        }


def project_key(workspace: Path) -> str:
    return os.path.realpath(workspace)


class Unreadable(Exception):
    """The approvals file exists but cannot be read or parsed: it approves nothing, and stays."""


Projects = dict[str, dict[str, Approval]]


def _entry(value: Any) -> Approval | None:
    if isinstance(value, dict) and isinstance(value.get("hash"), str):
        fields = value.get("fields")
        kept = {k: v for k, v in fields.items() if isinstance(v, str)} if isinstance(fields, dict) else {}
        return Approval(value["hash"], kept)
    return None


def _read(path: Path) -> Projects:
    """Every project's approvals; {} when there is no file; `Unreadable` when it is not ours to trust."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise Unreadable() from exc
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise Unreadable() from exc
    projects = document.get("projects") if isinstance(document, dict) else None
    if not isinstance(projects, dict):
        raise Unreadable()
    out: Projects = {}
    for key, value in projects.items():
        if isinstance(key, str) and isinstance(value, dict):
            entries = {name: _entry(entry) for name, entry in value.items()}
            out[key] = {name: entry for name, entry in entries.items() if entry is not None}
    return out


def _write(path: Path, projects: Projects) -> None:
    document = {
        "version": FORMAT_VERSION,
        "projects": {
            key: {name: entry.to_json() for name, entry in sorted(entries.items())} for key, entries in projects.items()
        },
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        atomic_write(path, text, edit.NEW_FILE_MODE)
    except OSError:
        raise edit.EditRefused("config_write_failed", f"{path}: cannot write the file.") from None


def approved(workspace: Path) -> dict[str, Approval]:
    """The project's approvals by server name; nothing when the file is missing or unreadable."""
    try:
        return _read(paths.approvals_path()).get(project_key(workspace), {})
    except (paths.InvalidHome, Unreadable):
        return {}


def _update(workspace: Path, change: Any) -> None:
    """Read-modify-write the project's record under the lock; `change(record) -> record | None`."""
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
        try:
            projects = _read(path)
        except Unreadable:
            raise edit.EditRefused("config_write_failed", f"{path}: the file cannot be read; it is kept.") from None
        current = projects.get(key, {})
        updated = change(current)
        if updated is None or updated == current:
            return
        projects[key] = updated
        _write(path, projects)


def record(workspace: Path, approvals: Mapping[str, Approval]) -> None:
    """Add `approvals` to the project's record. Raises `edit.EditRefused` when it cannot be written."""
    _update(workspace, lambda current: {**current, **approvals})


def forget(workspace: Path, names: list[str]) -> None:
    """Drop removed servers' approvals, so a definition added again later is asked about again."""
    _update(workspace, lambda current: {n: a for n, a in current.items() if n not in names})


class HeldApprovals:
    """Approvals that could not be saved (the file is unreadable or unwritable), per project: they
    hold for this process only, for every client of that project (the user's, not one client's)."""

    def __init__(self) -> None:
        self._by_project: dict[Path, dict[str, Approval]] = {}

    def of(self, workspace: Path | None) -> dict[str, Approval]:
        """The project's held approvals, to read and update; a throwaway one without a workspace."""
        if workspace is None:
            return {}
        return self._by_project.setdefault(workspace, {})
