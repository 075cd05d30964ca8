"""Configuration imports: server definitions from another client's file (VS Code, Claude, Cursor...).

A preview first (each candidate's fields, never a connection value); then, with an explicit
selection, the chosen definitions are written like any other edit (`config_edits.py`) and reloaded.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config import edit, import_values, imports, paths
from mcp_sidecar.config.edit import Document, EditRefused, EditScope, Target
from mcp_sidecar.protocol.errors import fail, invalid_params
from mcp_sidecar.services import approvals
from mcp_sidecar.services.config_edits import defines, edit_target, in_thread, other_target, refused

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import ConfigImportResult, ImportServer
    from mcp_sidecar.services.configuration import Configuration

HIDDEN = "hidden"


def hidden_connection(definition: dict[str, Any]) -> dict[str, Any]:
    """Field names only: any connection value can hold a credential."""
    out: dict[str, Any] = {}
    for key in ("command", "url", "cwd"):
        if key in definition:
            out[key] = HIDDEN
    if "args" in definition:
        out["args"] = f"{HIDDEN} ({len(definition['args'])} values)"
    for key in ("env", "headers"):
        if key in definition:
            out[key] = dict.fromkeys(definition[key], HIDDEN)
    return out


def _import_path(cfg: Configuration, file: str) -> Path:
    path = Path(file).expanduser()
    if not path.is_absolute():
        path = (cfg.workspace or Path.cwd()) / path
    return Path(os.path.abspath(path))


def _import_path_checked(cfg: Configuration, file: str, op: str) -> Path:
    """The file to import from; never the project's own file of an untrusted workspace."""
    path = _import_path(cfg, file)
    workspace = cfg.workspace
    if workspace is not None and not cfg.trusted and edit.same_file(path, paths.project_config_path(workspace)):
        raise fail(
            "project_untrusted", op, "The workspace is not trusted, so its configuration is neither read nor imported."
        )
    return path


async def _read_import(path: Path, op: str) -> imports.ImportSource:
    try:
        return await asyncio.to_thread(imports.read_import, path)
    except imports.ImportInvalid as exc:
        raise fail("import_invalid", op, exc.message) from None


def _check_selection(source: imports.ImportSource, select: tuple[str, ...] | None, op: str) -> None:
    unknown = [n for n in select or () if source.candidate(n) is None]
    if unknown:
        raise fail("import_invalid", op, f"The file defines no server named {', '.join(map(repr, unknown))}.")


def _importable(source: imports.ImportSource, select: tuple[str, ...], op: str) -> list[imports.Candidate]:
    """The selected candidates (all exist: checked before), refusing the first that cannot be imported."""
    chosen = [c for c in (source.candidate(n) for n in select) if c is not None]
    blocked = [c for c in chosen if not c.importable]
    if blocked:
        first = blocked[0]
        raise fail("import_invalid", op, f"Server {first.name!r} cannot be imported: {' '.join(first.problems)}")
    return chosen


def _defined_in(name: str, doc: Document | None, scope: EditScope, other: Target | None) -> list[str]:
    """The scopes that define `name` already: `doc` (the target file) and the other scope's file."""
    scopes: list[str] = []
    if doc is not None and doc.has(name):
        scopes.append(scope)
    if defines(other, name):
        scopes.append("project" if scope == "global" else "global")
    return scopes


def _write_imports(
    cfg: Configuration,
    target: Target,
    chosen: list[imports.Candidate],
    scope: EditScope,
    other: Target | None,
    replace: bool,
) -> list[str]:
    """Write the chosen definitions under the file lock (blocking); refuse names taken unless `replace`."""
    with edit.editing(target, create=True) as doc:
        if not replace:
            taken = [c.name for c in chosen if _defined_in(c.name, doc, scope, other)]
            if taken:
                raise EditRefused(
                    "server_exists",
                    f"Already defined in the global or project configuration: {', '.join(map(repr, taken))}; "
                    "pass --replace to replace or override them.",
                )
        if scope == "project":
            approvals.record_own_edit(cfg, {c.name: c.definition for c in chosen if c.definition is not None})
        for candidate in chosen:
            assert candidate.definition is not None
            doc.set_server(candidate.name, candidate.definition)
    return [c.name for c in chosen]


def _preview(candidate: imports.Candidate, select: tuple[str, ...] | None, existing: list[str]) -> ImportServer:
    definition = candidate.definition or {}
    return {
        "name": candidate.name,
        "transport": candidate.transport,
        "importable": candidate.importable,
        "selected": select is not None and candidate.name in select,
        "connection": hidden_connection(definition),
        "disabled": definition.get("disabled", False) is True,
        "inlineValues": import_values.inline_values(definition),
        "placeholders": [p.to_json() for p in candidate.placeholders],
        "problems": candidate.problems,
        "notes": candidate.notes,
        "alreadyDefined": existing,
    }


class ConfigImports:
    """Import server definitions from another client's file, previewing them first."""

    def __init__(self, configuration: Configuration) -> None:
        self._configuration = configuration

    async def import_servers(
        self,
        file: str,
        scope: EditScope,
        select: tuple[str, ...] | None,
        confirm: bool,
        replace: bool,
    ) -> ConfigImportResult:
        op = "import"
        self._configuration.ensure_loaded()  # so the reload summary says what this edit changed
        if confirm and not select:
            raise invalid_params(op, "Importing needs an explicit selection (`select`, --select NAME[,NAME...]).")
        path = _import_path_checked(self._configuration, file, op)
        target = edit_target(self._configuration, scope, op, None)
        other = other_target(self._configuration, scope)
        source = await _read_import(path, op)

        def defined_in(name: str, doc: Document | None) -> list[str]:
            return _defined_in(name, doc, scope, other)

        _check_selection(source, select, op)
        if not confirm:
            try:
                current = await asyncio.to_thread(edit.read, target)
            except EditRefused as exc:
                raise refused(exc, op, None) from None
            servers = [_preview(c, select, defined_in(c.name, current)) for c in source.candidates]
            return {
                "file": str(path),
                "format": source.format,
                "formatLabel": imports.FORMAT_LABELS[source.format],
                "scope": scope,
                "path": str(target.path),
                "written": False,
                "servers": servers,
                "imported": [],
            }
        assert select is not None
        chosen = _importable(source, select, op)

        def write() -> list[str]:
            return _write_imports(self._configuration, target, chosen, scope, other, replace)

        imported = await in_thread(write, op, None)
        summary = await self._configuration.reload()
        servers = [_preview(c, select, []) for c in source.candidates if c.name in imported]
        return {
            "file": str(path),
            "format": source.format,
            "formatLabel": imports.FORMAT_LABELS[source.format],
            "scope": scope,
            "path": str(target.path),
            "written": True,
            "servers": servers,
            "imported": imported,
            "reload": summary.to_json(),
        }
