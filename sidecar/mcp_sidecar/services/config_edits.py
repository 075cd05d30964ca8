"""Configuration edits: add, remove, enable/disable, reload and trust (imports: `config_imports.py`).

Every edit validates first, writes one file through `config.edit` (locked, atomic, in a
worker thread), then reloads through `Configuration.reload`, so the sidecar applies exactly what
the files say, the same way a file change made elsewhere is applied. Edits never connect a
server, run a secret command, open a browser or activate a tool.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_sidecar.config import edit, import_values
from mcp_sidecar.config.edit import EditRefused, EditScope, Target
from mcp_sidecar.config.interpolate import MissingVariable, resolve
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.validate import SERVER_NAME, ConfigProblems, parse_server
from mcp_sidecar.protocol.errors import SidecarError, fail
from mcp_sidecar.services import approvals
from mcp_sidecar.services.command_line import CommandLineError, parse_target

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        AddOutcome,
        AddProblem,
        ConfigAddDryRunResult,
        ConfigAddResult,
        ConfigRemoveResult,
        ConfigSetEnabledResult,
        ReloadSummary,
    )
    from mcp_sidecar.services.configuration import Configuration

T = TypeVar("T")
HIDDEN = "hidden"
_HTTP_URL = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)


def refused(exc: EditRefused, operation: str, server: str | None) -> SidecarError:
    return fail(exc.code, operation, exc.message, server)


async def in_thread(work: Callable[[], T], operation: str, server: str | None) -> T:
    try:
        return await asyncio.to_thread(work)
    except EditRefused as exc:
        raise refused(exc, operation, server) from None


def edit_target(cfg: Configuration, scope: EditScope, operation: str, server: str | None) -> Target:
    try:
        return edit.target(scope, cfg.workspace, cfg.trusted)
    except EditRefused as exc:
        raise refused(exc, operation, server) from None


def other_target(cfg: Configuration, scope: EditScope) -> Target | None:
    """The other readable scope's file: the project only when trusted."""
    other: EditScope = "project" if scope == "global" else "global"
    return edit.readable_targets(cfg.workspace, cfg.trusted).get(other)


def defines(t: Target | None, name: str) -> bool:
    if t is None:
        return False
    try:
        return edit.read(t).has(name)
    except EditRefused:
        return False  # an unreadable file defines nothing we can see; reload reports it


def _literal_notes(definition: dict[str, Any]) -> list[str]:
    return [
        f"`{field}` holds a literal value; prefer a ${{VAR}} reference or a secret command (!command) for credentials."
        for field in import_values.inline_values(definition)
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


def definition_from_target(target: str, operation: str) -> dict[str, Any]:
    """An `add` target string (an http(s) URL or a stdio command line) as the definition to save."""
    try:
        return parse_target(target)
    except CommandLineError as exc:
        raise fail("command_invalid", operation, exc.message) from None


AddField = Literal["target", "server", "definition", "scope"]


class ConfigEdits:
    """Add, remove, enable and disable servers in the configuration files, reload them, and take trust."""

    def __init__(self, configuration: Configuration, registry: ServerRegistry) -> None:
        self._configuration = configuration
        self._registry = registry

    def validate_definition(
        self, name: str, definition: dict[str, Any], operation: str, scope: EditScope = "global"
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
            resolved = resolve(config, self._configuration.workspace, self._configuration.environ)
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
                "configuration_invalid",
                operation,
                f"server {name!r}: field `url` must resolve to an http(s) URL.",
                name,
            )
        return config

    async def add(self, scope: EditScope, name: str, definition: dict[str, Any], replace: bool) -> ConfigAddResult:
        op = "add"
        self._configuration.ensure_loaded()  # so the reload summary says what this edit changed
        self.validate_definition(name, definition, op, scope)
        target = edit_target(self._configuration, scope, op, name)
        other = other_target(self._configuration, scope)

        def write() -> AddOutcome:
            with edit.editing(target, create=True) as doc:
                outcome = _add_outcome(name, scope, doc.has(name), defines(other, name), replace)
                if scope == "project":
                    approvals.record_own_edit(
                        self._configuration, {name: definition}
                    )  # before the file watcher can see it
                doc.set_server(name, definition)
                return outcome

        outcome = await in_thread(write, op, name)
        notes = _literal_notes(definition)
        if outcome["overriddenBy"]:
            notes.append(
                f"The project definition of {name!r} takes precedence; this global one applies only without it."
            )
        summary = await self._configuration.reload()
        return {
            "server": name,
            "scope": scope,
            "path": str(target.path),
            **outcome,
            "notes": notes,
            "reload": summary.to_json(),
        }

    async def remove(self, scope: EditScope, name: str) -> ConfigRemoveResult:
        op = "remove"
        self._configuration.ensure_loaded()  # so the reload summary says what this edit changed
        target = edit_target(self._configuration, scope, op, name)
        other = other_target(self._configuration, scope)

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
                    approvals.forget_removed(self._configuration, [name])
            return "http" if isinstance(definition, dict) and "url" in definition else "stdio"

        transport = await in_thread(write, op, name)
        remaining = ("project" if scope == "global" else "global") if defines(other, name) else None
        summary = await self._configuration.reload()
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

    async def set_enabled(self, name: str, enabled: bool) -> ConfigSetEnabledResult:
        """Change only `disabled`: in the trusted project file when it defines the server, else the global one."""
        op = "enable" if enabled else "disable"
        self._configuration.ensure_loaded()  # so the reload summary says what this edit changed
        edit_target(self._configuration, "global", op, name)  # refuses when the global and project paths are one file
        readable = edit.readable_targets(self._configuration.workspace, self._configuration.trusted)
        order = [t for t in (readable.get("project"), readable["global"]) if t is not None]

        def write() -> tuple[Target, bool] | None:
            for target in order:
                with edit.editing(target, create=False) as doc:
                    if doc.has(name):
                        return target, doc.set_disabled(name, not enabled)
            return None

        outcome = await in_thread(write, op, name)
        if outcome is None:
            self._configuration.ensure_loaded()
            conn = self._registry.get(name)
            if conn is not None and conn.config.scope == "builtin":
                message = f"Server {name!r} is built in, not defined in a configuration file."
                raise fail("server_not_found", op, message, name)
            raise fail("server_not_found", op, f"No configuration file defines a server named {name!r}.", name)
        target, changed = outcome
        summary = await self._configuration.reload()
        deactivated = sorted({i for d in summary.deactivated for i in d["removed"] if i.startswith(f"{name}.")})
        return {
            "server": name,
            "scope": target.scope,
            "path": str(target.path),
            "enabled": enabled,
            "changed": changed,
            "approvalRequired": name in self._configuration.pending,
            "deactivated": deactivated,
            "reload": summary.to_json(),
        }

    async def reload(self) -> ReloadSummary:
        """An explicit reload: every connection closes (they reopen on demand)."""
        summary = await self._configuration.reload(close_all=True)
        if not summary.applied:
            problems = [d["message"] for d in summary.diagnostics]
            raise fail(
                "configuration_invalid",
                "reload",
                "The configuration is invalid; the previous setup stays in use: " + " ".join(problems),
            )
        return summary.to_json()

    async def set_trusted(self, trusted: bool) -> ReloadSummary:
        """The editor granted (or withdrew) workspace trust: the project file is read, or dropped, now.

        A grant approves the project's definitions as they are now (see services/approvals.py).
        """
        if trusted and not self._configuration.trusted:
            self._configuration.grant_trust()  # a grant, not a repeat: a client saying "still trusted" approves nothing
        elif not trusted:
            self._configuration.trusted = False
        summary = await self._configuration.reload()
        return summary.to_json()

    async def _dry_outcome(
        self, scope: EditScope, name: str, replace: bool, problem: Callable[[AddField, SidecarError], None]
    ) -> tuple[str | None, AddOutcome | None]:
        """The target file's path and what the add would do there, reading the files only."""
        op = "add"
        try:
            where = edit_target(self._configuration, scope, op, name)
        except SidecarError as exc:
            problem("scope", exc)
            return None, None
        other = other_target(self._configuration, scope)

        def check() -> AddOutcome:
            return _add_outcome(name, scope, edit.read(where).has(name), defines(other, name), replace)

        try:
            return str(where.path), await in_thread(check, op, name)
        except SidecarError as exc:
            problem("server" if exc.diagnostic.code == "server_exists" else "scope", exc)
            return str(where.path), None

    async def add_dry_run(
        self,
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
        self._configuration.ensure_loaded()
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
            self.validate_definition(name, definition if definition is not None else {}, op, scope)
        except SidecarError as exc:
            if not named or definition is not None:
                problem("definition" if named else "server", exc)
        path, outcome = await self._dry_outcome(scope, name, replace, problem)
        notes = _literal_notes(definition) if definition is not None else []
        if outcome is not None and outcome["overriddenBy"]:
            notes.append(
                f"The project definition of {name!r} takes precedence; this global one applies only without it."
            )
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
