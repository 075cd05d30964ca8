"""Configuration edits: add, remove, enable/disable, import, and reload.

Every edit validates first, writes one file through `config.edit` (locked, atomic, in a
worker thread), then reloads through `Sidecar.reload`, so the sidecar applies exactly what
the files say, the same way a file change made elsewhere is applied. Edits never connect a
server, run a secret command, open a browser or activate a tool.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_sidecar.config import edit, imports, paths
from mcp_sidecar.config.edit import Document, EditRefused, EditScope, Target
from mcp_sidecar.config.interpolate import MissingVariable, resolve
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.validate import SERVER_NAME, ConfigProblems, parse_server
from mcp_sidecar.protocol.errors import SidecarError, fail, invalid_params
from mcp_sidecar.services import approvals
from mcp_sidecar.services.command_line import CommandLineError, parse_target

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        AddOutcome,
        AddProblem,
        ConfigAddDryRunResult,
        ConfigAddResult,
        ConfigImportResult,
        ConfigRemoveResult,
        ConfigSetEnabledResult,
        ImportServer,
        ReloadSummary,
    )
    from mcp_sidecar.services.app import Sidecar

T = TypeVar("T")
HIDDEN = "hidden"
_HTTP_URL = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)


def _refused(exc: EditRefused, operation: str, server: str | None) -> SidecarError:
    return fail(exc.code, operation, exc.message, server)


async def _in_thread(work: Callable[[], T], operation: str, server: str | None) -> T:
    try:
        return await asyncio.to_thread(work)
    except EditRefused as exc:
        raise _refused(exc, operation, server) from None


def _target(app: Sidecar, scope: EditScope, operation: str, server: str | None) -> Target:
    try:
        return edit.target(scope, app.configuration.workspace, app.configuration.trusted)
    except EditRefused as exc:
        raise _refused(exc, operation, server) from None


def _other(app: Sidecar, scope: EditScope) -> Target | None:
    """The other readable scope's file: the project only when trusted."""
    other: EditScope = "project" if scope == "global" else "global"
    return edit.readable_targets(app.configuration.workspace, app.configuration.trusted).get(other)


def _defines(t: Target | None, name: str) -> bool:
    if t is None:
        return False
    try:
        return edit.read(t).has(name)
    except EditRefused:
        return False  # an unreadable file defines nothing we can see; reload reports it


def validate_definition(
    app: Sidecar, name: str, definition: dict[str, Any], operation: str, scope: EditScope = "global"
) -> ServerConfig:
    """The same rules as the files (of `scope`: a project file takes no literal client secret), plus
    the resolved values: every `${VAR}` must be defined now.

    The references are what gets saved; their values are only checked, never stored or shown.
    Secret commands are not run.
    """
    try:
        config = parse_server(name, definition, scope)
    except ConfigProblems as exc:
        raise fail("configuration_invalid", operation, " ".join(exc.problems), name) from None
    try:
        resolved = resolve(config, app.configuration.workspace)
    except MissingVariable as exc:
        raise fail(
            "configuration_invalid",
            operation,
            f"Environment variable {exc.variable} (used in `{exc.field_name}`) is not set; define it first "
            "(the reference is saved, never its value).",
            name,
        ) from None
    if resolved.url is not None and not _HTTP_URL.match(resolved.url):
        raise fail(
            "configuration_invalid", operation, f"server {name!r}: field `url` must resolve to an http(s) URL.", name
        )
    return config


def _literal_notes(definition: dict[str, Any]) -> list[str]:
    return [
        f"`{field}` holds a literal value; prefer a ${{VAR}} reference or a secret command (!command) for credentials."
        for field in imports.inline_values(definition)
    ]


def _add_outcome(name: str, scope: EditScope, in_target: bool, in_other: bool, replace: bool) -> AddOutcome:
    """What adding `name` does given where it is defined already; `server_exists` unless `replace`."""
    if (in_target or in_other) and not replace:
        where = scope if in_target else ("project" if scope == "global" else "global")
        raise EditRefused(
            "server_exists",
            f"A server named {name!r} is already defined in the {where} configuration; "
            "pass --replace to replace it" + (" (or override it)." if not in_target else "."),
        )
    return {
        "action": "replaced" if in_target else "added",
        "overrides": "global" if scope == "project" and in_other else None,
        "overriddenBy": "project" if scope == "global" and in_other else None,
    }


async def add(app: Sidecar, scope: EditScope, name: str, definition: dict[str, Any], replace: bool) -> ConfigAddResult:
    op = "add"
    app.ensure_loaded()  # so the reload summary says what this edit changed
    validate_definition(app, name, definition, op, scope)
    target = _target(app, scope, op, name)
    other = _other(app, scope)

    def write() -> AddOutcome:
        with edit.editing(target, create=True) as doc:
            outcome = _add_outcome(name, scope, doc.has(name), _defines(other, name), replace)
            if scope == "project":
                approvals.record_own_edit(app.configuration, {name: definition})  # before the file watcher can see it
            doc.set_server(name, definition)
            return outcome

    outcome = await _in_thread(write, op, name)
    notes = _literal_notes(definition)
    if outcome["overriddenBy"]:
        notes.append(f"The project definition of {name!r} takes precedence; this global one applies only without it.")
    summary = await app.configuration.reload()
    return {
        "server": name,
        "scope": scope,
        "path": str(target.path),
        **outcome,
        "notes": notes,
        "reload": summary.to_json(),
    }


async def remove(app: Sidecar, scope: EditScope, name: str) -> ConfigRemoveResult:
    op = "remove"
    app.ensure_loaded()  # so the reload summary says what this edit changed
    target = _target(app, scope, op, name)
    other = _other(app, scope)

    def write() -> str | None:
        with edit.editing(target, create=False) as doc:
            if not doc.has(name):
                raise EditRefused(
                    "server_not_found",
                    f"No server named {name!r} in the {scope} configuration ({target.path}); nothing was changed.",
                )
            definition = doc.servers[name]
            doc.remove_server(name)
            if scope == "project":
                approvals.forget_removed(app.configuration, [name])
        return "http" if isinstance(definition, dict) and "url" in definition else "stdio"

    transport = await _in_thread(write, op, name)
    remaining = ("project" if scope == "global" else "global") if _defines(other, name) else None
    summary = await app.configuration.reload()
    notes = []
    if transport == "http":
        notes.append(f"OAuth credentials are kept; run `logout {name}` to remove them.")
    return {
        "server": name,
        "scope": scope,
        "path": str(target.path),
        "remaining": remaining,
        "notes": notes,
        "reload": summary.to_json(),
    }


async def set_enabled(app: Sidecar, name: str, enabled: bool) -> ConfigSetEnabledResult:
    """Change only `disabled`: in the trusted project file when it defines the server, else the global one."""
    op = "enable" if enabled else "disable"
    app.ensure_loaded()  # so the reload summary says what this edit changed
    _target(app, "global", op, name)  # refuses when the global and project paths are one file
    readable = edit.readable_targets(app.configuration.workspace, app.configuration.trusted)
    order = [t for t in (readable.get("project"), readable["global"]) if t is not None]

    def write() -> tuple[Target, bool] | None:
        for target in order:
            with edit.editing(target, create=False) as doc:
                if doc.has(name):
                    return target, doc.set_disabled(name, not enabled)
        return None

    outcome = await _in_thread(write, op, name)
    if outcome is None:
        app.ensure_loaded()
        conn = app.registry.get(name)
        if conn is not None and conn.config.scope == "builtin":
            message = f"Server {name!r} is built in, not defined in a configuration file."
            raise fail("server_not_found", op, message, name)
        raise fail("server_not_found", op, f"No configuration file defines a server named {name!r}.", name)
    target, changed = outcome
    summary = await app.configuration.reload()
    deactivated = sorted({i for d in summary.deactivated for i in d["removed"] if i.startswith(f"{name}.")})
    return {
        "server": name,
        "scope": target.scope,
        "path": str(target.path),
        "enabled": enabled,
        "changed": changed,
        "approvalRequired": name in app.configuration.pending,
        "deactivated": deactivated,
        "reload": summary.to_json(),
    }


async def reload(app: Sidecar) -> ReloadSummary:
    """An explicit reload: every connection closes (they reopen on demand)."""
    summary = await app.configuration.reload(close_all=True)
    if not summary.applied:
        problems = [d["message"] for d in summary.diagnostics]
        raise fail(
            "configuration_invalid",
            "reload",
            "The configuration is invalid; the previous setup stays in use: " + " ".join(problems),
        )
    return summary.to_json()


async def set_trusted(app: Sidecar, trusted: bool) -> ReloadSummary:
    """The editor granted (or withdrew) workspace trust: the project file is read, or dropped, now.

    A grant approves the project's definitions as they are now (see services/approvals.py).
    """
    if trusted and not app.configuration.trusted:
        app.configuration.grant_trust()  # a grant, not a repeat: a client saying "still trusted" approves nothing
    elif not trusted:
        app.configuration.trusted = False
    summary = await app.configuration.reload()
    return summary.to_json()


# -- imports -----------------------------------------------------------------------------------


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


def _import_path(app: Sidecar, file: str) -> Path:
    path = Path(file).expanduser()
    if not path.is_absolute():
        path = (app.configuration.workspace or Path.cwd()) / path
    return Path(os.path.abspath(path))


def _import_path_checked(app: Sidecar, file: str, op: str) -> Path:
    """The file to import from; never the project's own file of an untrusted workspace."""
    path = _import_path(app, file)
    workspace = app.configuration.workspace
    if (
        workspace is not None
        and not app.configuration.trusted
        and edit.same_file(path, paths.project_config_path(workspace))
    ):
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
    if _defines(other, name):
        scopes.append("project" if scope == "global" else "global")
    return scopes


def _write_imports(
    app: Sidecar,
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
            approvals.record_own_edit(
                app.configuration, {c.name: c.definition for c in chosen if c.definition is not None}
            )
        for candidate in chosen:
            assert candidate.definition is not None
            doc.set_server(candidate.name, candidate.definition)
    return [c.name for c in chosen]


async def import_servers(
    app: Sidecar,
    file: str,
    scope: EditScope,
    select: tuple[str, ...] | None,
    confirm: bool,
    replace: bool,
) -> ConfigImportResult:
    op = "import"
    app.ensure_loaded()  # so the reload summary says what this edit changed
    if confirm and not select:
        raise invalid_params(op, "Importing needs an explicit selection (`select`, --select NAME[,NAME...]).")
    path = _import_path_checked(app, file, op)
    target = _target(app, scope, op, None)
    other = _other(app, scope)
    source = await _read_import(path, op)

    def defined_in(name: str, doc: Document | None) -> list[str]:
        return _defined_in(name, doc, scope, other)

    _check_selection(source, select, op)
    if not confirm:
        try:
            current = await asyncio.to_thread(edit.read, target)
        except EditRefused as exc:
            raise _refused(exc, op, None) from None
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
        return _write_imports(app, target, chosen, scope, other, replace)

    imported = await _in_thread(write, op, None)
    summary = await app.configuration.reload()
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


def _preview(candidate: imports.Candidate, select: tuple[str, ...] | None, existing: list[str]) -> ImportServer:
    definition = candidate.definition or {}
    return {
        "name": candidate.name,
        "transport": candidate.transport,
        "importable": candidate.importable,
        "selected": select is not None and candidate.name in select,
        "connection": hidden_connection(definition),
        "disabled": definition.get("disabled", False) is True,
        "inlineValues": imports.inline_values(definition),
        "placeholders": [p.to_json() for p in candidate.placeholders],
        "problems": candidate.problems,
        "notes": candidate.notes,
        "alreadyDefined": existing,
    }


def definition_from_target(target: str, operation: str) -> dict[str, Any]:
    """An `add` target string (an http(s) URL or a stdio command line) as the definition to save."""
    try:
        return parse_target(target)
    except CommandLineError as exc:
        raise fail("command_invalid", operation, exc.message) from None


AddField = Literal["target", "server", "definition", "scope"]


async def _dry_outcome(
    app: Sidecar, scope: EditScope, name: str, replace: bool, problem: Callable[[AddField, SidecarError], None]
) -> tuple[str | None, AddOutcome | None]:
    """The target file's path and what the add would do there, reading the files only."""
    op = "add"
    try:
        where = _target(app, scope, op, name)
    except SidecarError as exc:
        problem("scope", exc)
        return None, None
    other = _other(app, scope)

    def check() -> AddOutcome:
        return _add_outcome(name, scope, edit.read(where).has(name), _defines(other, name), replace)

    try:
        return str(where.path), await _in_thread(check, op, name)
    except SidecarError as exc:
        problem("server" if exc.diagnostic.code == "server_exists" else "scope", exc)
        return str(where.path), None


async def add_dry_run(
    app: Sidecar,
    scope: EditScope,
    name: str,
    definition: dict[str, Any] | None,
    target: str | None,
    replace: bool,
) -> ConfigAddDryRunResult:
    """What `add` would write, and every refusal it would meet, in its order; writes nothing.

    Each problem names the field to fix (`target`, `server`, `definition` or `scope`); the
    first is the error the real add answers with.
    """
    op = "add"
    app.ensure_loaded()
    problems: list[AddProblem] = []

    def problem(field: AddField, exc: SidecarError) -> None:
        problems.append({"field": field, "diagnostic": exc.diagnostic.to_json()})

    if target is not None:
        try:
            definition = definition_from_target(target, op)
        except SidecarError as exc:
            problem("target", exc)
    named = SERVER_NAME.match(name) is not None
    try:
        # Without a definition, `{}` still reports a bad name (the name is checked first).
        validate_definition(app, name, definition if definition is not None else {}, op, scope)
    except SidecarError as exc:
        if not named or definition is not None:
            problem("definition" if named else "server", exc)
    path, outcome = await _dry_outcome(app, scope, name, replace, problem)
    notes = _literal_notes(definition) if definition is not None else []
    if outcome is not None and outcome["overriddenBy"]:
        notes.append(f"The project definition of {name!r} takes precedence; this global one applies only without it.")
    return {
        "dryRun": True,
        "valid": not problems,
        "server": name,
        "scope": scope,
        "path": path,
        "definition": definition,
        "action": outcome["action"] if outcome else None,
        "overrides": outcome["overrides"] if outcome else None,
        "overriddenBy": outcome["overriddenBy"] if outcome else None,
        "notes": notes,
        "problems": problems,
    }
