"""The workspace, its trust, and the configuration files: reading, approving, reloading, watching.

`ensure_loaded` reads the files once, lazily; `reload` reads them again and reconciles the
registry (invalid files keep the previous setup; without a valid one, the valid definitions
load and the invalid ones are reported). Project definitions pass the approval gate
(`services/approvals.py`) before the registry sees them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_sidecar import tasks
from mcp_sidecar.config import loader, paths
from mcp_sidecar.config.approvals import Approval, HeldApprovals, Pending
from mcp_sidecar.config.budget import Budget
from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.profiles import Profile
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.connections.registry import ServerRegistry
from mcp_sidecar.events import EventHub, ProfileChanged, ToolsDeactivated
from mcp_sidecar.protocol.errors import Diagnostic, DiagnosticJson, diagnostic
from mcp_sidecar.services import approvals
from mcp_sidecar.services.config_watch import ConfigWatcher, Signature, signature

if TYPE_CHECKING:
    from mcp_sidecar.protocol import results
    from mcp_sidecar.protocol.results import ActiveToolsChanged

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReloadSummary:
    """What a reload changed. `applied` is False when the files were invalid and a valid setup stayed
    (nothing changed); an applied one lists in `diagnostics` the invalid definitions it left out."""

    applied: bool
    added: list[str]
    removed: list[str]
    changed: list[str]
    unchanged: list[str]
    deactivated: list[ActiveToolsChanged]
    """The `mcp/activeToolsChanged` payloads sent."""
    diagnostics: list[DiagnosticJson]

    @classmethod
    def not_applied(cls, diagnostics: list[DiagnosticJson]) -> ReloadSummary:
        return cls(False, [], [], [], [], [], diagnostics)

    def to_json(self) -> results.ReloadSummary:
        return {
            "applied": self.applied,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "deactivated": self.deactivated,
            "diagnostics": self.diagnostics,
        }

    def describe(self) -> str:
        if not self.applied:
            return f"not applied: {len(self.diagnostics)} configuration problem(s); the previous setup stays in use"
        parts = [f"{len(getattr(self, k))} {k}" for k in ("added", "removed", "changed", "unchanged")]
        tools = sum(len(d["removed"]) for d in self.deactivated)
        left_out = f"; {len(self.diagnostics)} configuration problem(s) left out" if self.diagnostics else ""
        return ", ".join(parts) + f"; {tools} active tool(s) deactivated{left_out}"


class Configuration:
    def __init__(
        self,
        registry: ServerRegistry,
        hub: EventHub,
        *,
        workspace: Path | None,
        trusted: bool,
        interactive: bool,
        watch_files: bool,
        grant: bool,
        held: HeldApprovals | None = None,
    ) -> None:
        """`held`: the user's approvals that could not be saved (a new, empty set when not given)."""
        self._registry = registry
        self._hub = hub
        self.workspace = workspace
        self.trusted = trusted
        self.interactive = interactive
        self.pending: dict[str, Pending] = {}
        """Project definitions waiting for the person's approval (see services/approvals.py)."""
        self._held = held or HeldApprovals()
        self.granted: list[Pending] = []
        """What the last grant of trust approved that was not approved before (the CLI reports it)."""
        self._grant = grant and trusted
        """Trust was just granted (the CLI's --trust-project): the definitions present are approved."""
        self._loaded = False
        self._valid_in_use = False
        """The setup in use was read from valid files: invalid files then leave it as it is."""
        self._watch_files = watch_files
        self._watcher: ConfigWatcher | None = None
        self._reload_lock = asyncio.Lock()
        self.profiles: dict[str, Profile] = {}
        """The valid profiles of the setup in use (a project one waiting for approval is marked)."""
        self.profile_problems: list[Diagnostic] = []
        """The files' invalid profiles (each left out), from the last read."""
        self.profile_name: str | None = None
        """The profile this client chose (`initializationOptions.profile`, `--profile`, `/mcp profile`)."""
        self.profile_left_out: list[Diagnostic] = []
        """The chosen profile's tools that did not activate when it was chosen, each naming the tool."""
        self.budget_setting = Budget()
        """This client's own session budget (`--max-active-tools`, `initializationOptions.sessionBudget`), over
        the files' field by field (0: off)."""
        self.budget_problems: list[Diagnostic] = []
        """The files' invalid `sessionBudget` fields (each off), from the last read."""

    @property
    def environ(self) -> Mapping[str, str]:
        """The client's environment, which its definitions resolve in (its registry's)."""
        return self._registry.environ

    @property
    def approved_here(self) -> dict[str, Approval]:
        """The workspace's approvals that could not be saved: they hold for this process only."""
        return self._held.of(self.workspace)

    # -- the editor's answer and trust -------------------------------------------------------

    def configure(self, workspace: Path | None, trusted: bool, interactive: bool, granted: bool = False) -> None:
        """Apply the editor's `initialize` answer; a configuration already loaded is reloaded lazily.

        `granted` (`initializationOptions.trustGranted`): the person granted trust just now, so
        the project's definitions as they are count as approved.
        """
        changed = (workspace, trusted) != (self.workspace, self.trusted)
        self.workspace, self.trusted, self.interactive = workspace, trusted, interactive
        self._grant = granted and trusted
        if changed and self._loaded:
            self._loaded = False

    def grant_trust(self) -> None:
        """The person granted trust just now: the next load approves the project's definitions."""
        self.trusted = True
        self._grant = True

    def take_grant(self) -> bool:
        grant, self._grant = self._grant, False
        return grant

    def run_dir(self, server: ServerConfig) -> Path:
        """Where a stdio server and secret commands run: the workspace only when it is trusted.

        An untrusted workspace's files are never on a server's path: a global `python -m pkg`
        would import its `./pkg.py`, `npx` its `node_modules`, a `git` secret command its
        `.git/config`. The bundled demo never needs the workspace.
        """
        if server.scope != "builtin" and self.trusted and self.workspace is not None:
            return self.workspace
        return paths.neutral_dir()

    # -- the client's profile ------------------------------------------------------------------

    def profile(self) -> Profile | None:
        """The chosen profile when it is defined, valid and approved; None: every server is searched."""
        self.ensure_loaded()
        found = self.profiles.get(self.profile_name) if self.profile_name is not None else None
        return found if found is not None and not found.approval_required else None

    def searches(self, server: str) -> bool:
        """Whether this client searches and lists `server`: every server unless its profile leaves it out."""
        chosen = self.profile()
        return chosen is None or chosen.searches(server)

    def profile_diagnostics(self) -> list[Diagnostic]:
        """What is wrong with the profiles: the files' invalid ones, a chosen one that is not defined or
        waits for approval (every server is searched meanwhile: never a silent empty set), and the chosen
        one's tools that did not activate."""
        self.ensure_loaded()
        found = list(self.profile_problems)
        name = self.profile_name
        if name is not None and name not in self.profiles:
            found.append(
                diagnostic(
                    "profile_not_found",
                    "profile",
                    f"Profile {name!r} is not defined (or is invalid), so every server is searched.",
                )
            )
        elif name is not None and self.profiles[name].approval_required:
            found.append(
                diagnostic(
                    "trust_required",
                    "profile",
                    f"Project profile {name!r} waits for approval, so every server is searched until it is approved.",
                )
            )
        return found + self.profile_left_out

    # -- the session budget ----------------------------------------------------------------------

    def budget(self) -> Budget:
        """The session budget this client's sessions keep to: its own setting over the files' (off by default)."""
        self.ensure_loaded()
        files = self._registry.config.budget if self._registry.config is not None else Budget()
        return self.budget_setting.over(files)

    # -- loading -----------------------------------------------------------------------------

    def connection(self, name: str, operation: str) -> ServerConnection:
        """The named server's connection, once the configuration is loaded; a diagnostic when there is none."""
        self.ensure_loaded()
        return self._registry.connection(name, operation)

    def ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            seen = signature(self.watched_files())
            _, closing = self._apply(*self._read())
            for conn in closing:
                tasks.spawn(conn.close(), f"close:{conn.name}")
            self._start_watching(seen)

    async def reload(self, *, close_all: bool = False) -> ReloadSummary:
        """Read the configuration files again and reconcile; invalid files keep the previous setup.

        Connections of changed, removed or disabled definitions close (all of them with
        `close_all`, an explicit reload); they reopen on demand. Tools of those definitions
        are deactivated; unchanged active tools stay.
        """
        async with self._reload_lock:
            self.ensure_loaded()  # so a first reload compares against what the files said before
            seen = signature(self.watched_files())
            summary, closing = self._apply(*self._read(), close_all=close_all)
            self._start_watching(seen)
            await asyncio.gather(*(conn.close() for conn in closing), return_exceptions=True)
            return summary

    def watched_files(self) -> list[Path]:
        try:
            files = [paths.global_config_path()]
        except paths.InvalidHome:
            files = []
        if self.workspace is not None and self.trusted:
            files.append(paths.project_config_path(self.workspace))
        return files

    def _read(self) -> tuple[EffectiveConfig | None, list[Diagnostic]]:
        """The configuration to apply and the problems of the files; None to keep the setup in use.

        Invalid definitions (and files that are not JSON objects) keep a setup read from valid
        files. Without one (at start, or while the files have never been valid) the valid
        definitions apply and the invalid ones are reported, so a broken definition never
        looks like an empty catalog.
        """
        report = loader.load_report(self.workspace, self.trusted)
        problems = [diagnostic("configuration_invalid", "configuration", p.message, p.server) for p in report.problems]
        self.profile_problems = [diagnostic("configuration_invalid", "profile", p) for p in report.profile_problems]
        self.budget_problems = [diagnostic("configuration_invalid", "configuration", p) for p in report.budget_problems]
        if problems:
            log.warning("configuration invalid: %d problem(s)", len(problems))
            if self._valid_in_use:
                problems += _not_loaded(report.config, self._registry.names())
                self._registry.reject(problems)
                return None, problems
        self._registry.problems = problems  # whatever the approval gate does next
        return approvals.gate(self, report.config), problems

    def _apply(
        self, config: EffectiveConfig | None, problems: list[Diagnostic], *, close_all: bool = False
    ) -> tuple[ReloadSummary, tuple[ServerConnection, ...]]:
        """Reconcile the registry with `config`; returns the summary and the connections to close."""
        if config is None:
            return ReloadSummary.not_applied([d.to_json() for d in problems]), ()
        name = self.profile_name
        before = self.profiles.get(name) if name is not None else None
        self.profiles = dict(config.profiles)
        with self._hub.collect(ToolsDeactivated) as deactivated:
            done = self._registry.reconcile(config, self.run_dir, close_all=close_all, problems=problems)
            if name is not None and not done.first_load and before != self.profiles.get(name):
                self._hub.publish(ProfileChanged(name))  # its tools outside it go (collected above)
        self._valid_in_use = not problems
        summary = ReloadSummary(
            True,
            list(done.added),
            list(done.removed),
            list(done.changed),
            list(done.unchanged),
            [event.to_json() for event in deactivated],
            [d.to_json() for d in problems],
        )
        return summary, done.closing

    # -- watching the files ------------------------------------------------------------------

    def _start_watching(self, seen: Signature) -> None:
        """Start the file watcher once the configuration is loaded (never without an event loop)."""
        if not self._watch_files:
            return
        if self._watcher is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return
            self._watcher = ConfigWatcher(self.watched_files, self._reload_after_change)
            self._watcher.start()
        self._watcher.mark_loaded(seen)

    async def _reload_after_change(self) -> None:
        summary = await self.reload()
        log.info("configuration reloaded after a file change: %s", summary.describe())

    async def stop_watching(self) -> None:
        if self._watcher is not None:
            await self._watcher.stop()


def _not_loaded(config: EffectiveConfig, in_use: list[str]) -> list[Diagnostic]:
    """Valid definitions new in files that are not applied: configured, yet unusable until the files are fixed."""
    return [
        diagnostic(
            "configuration_invalid",
            "configuration",
            f"Server {name!r} is not loaded: the configuration has invalid definitions, so the previous setup "
            "stays in use.",
            name,
        )
        for name in config.servers
        if name not in in_use
    ]
