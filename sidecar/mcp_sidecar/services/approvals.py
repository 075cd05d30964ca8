"""Project definitions run only as approved: the gate between `.mcp.json` and a connection.

Every configuration load passes through `gate`: a trusted project's definitions whose
hashes are not recorded as approved (`config/approvals.py`) stay disabled with
`trust_required`, and the editor is told once per change (`mcp/approvalRequired`) with a
one-line summary of what would run (`output/approval_summary.py`). `approve` records exactly
what the person saw: an entry whose definition changed again since is refused and asked about anew.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config import approvals, loader
from mcp_sidecar.config.approvals import Approval, Change, Pending, changed_fields
from mcp_sidecar.config.edit import EditRefused
from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.profiles import Profile, approval_key, profile_of_key
from mcp_sidecar.output.approval_summary import profile_summary, summary
from mcp_sidecar.protocol.errors import fail

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import ApproveResult, NotApproved, PendingApproval
    from mcp_sidecar.services.configuration import Configuration

log = logging.getLogger(__name__)


def gate(cfg: Configuration, config: EffectiveConfig) -> EffectiveConfig:
    """`config` with every unapproved project definition disabled (and every unapproved project
    profile marked, not usable); sets `cfg.pending`.

    A grant of trust (`cfg.take_grant()`) approves the definitions present now; nothing else
    approves a definition that the person did not see (see `config/approvals.py`). A project
    profile is a definition too (keyed `profile:NAME`): it decides what a model is shown and
    which tools start active.
    """
    cfg.pending = {}
    if cfg.workspace is None or not cfg.trusted:
        return config
    project = {name: s for name, s in config.servers.items() if s.scope == "project"}
    project_profiles = {approval_key(n): p for n, p in config.profiles.items() if p.scope == "project"}
    current = {name: Approval.of(s.raw) for name, s in project.items()}
    current.update({key: Approval.of(p.raw) for key, p in project_profiles.items()})
    approved = {**approvals.approved(cfg.workspace), **cfg.approved_here}
    if cfg.take_grant():
        # Said once where the grant came from (the CLI prints it): nothing is approved unseen.
        cfg.granted = [
            _pending(key, project.get(key) or project_profiles[key], approved.get(key), current[key])
            for key in current
            if approved.get(key) is None or approved[key].definition_hash != current[key].definition_hash
        ]
        _record(cfg, current)
        approved.update(current)
    servers = dict(config.servers)
    profiles = dict(config.profiles)
    for key, now in current.items():
        before = approved.get(key)
        if before is not None and before.definition_hash == now.definition_hash:
            continue
        definition = project.get(key) or project_profiles[key]
        cfg.pending[key] = _pending(key, definition, before, now)
        if isinstance(definition, Profile):
            profiles[definition.name] = dataclasses.replace(definition, approval_required=True)
        else:
            servers[key] = dataclasses.replace(definition, disabled=True, approval_required=True)
    return dataclasses.replace(config, servers=servers, profiles=profiles)


def _pending(key: str, definition: ServerConfig | Profile, before: Approval | None, now: Approval) -> Pending:
    change: Change = "changed" if before is not None else "new"
    fields = changed_fields(before.fields, now.fields) if before is not None else []
    if isinstance(definition, Profile):
        return Pending(key, change, now.definition_hash, "profile", profile_summary(definition, fields), tuple(fields))
    return Pending(key, change, now.definition_hash, definition.transport, summary(definition, fields), tuple(fields))


def _record(cfg: Configuration, entries: dict[str, Approval]) -> None:
    """Save approvals (blocking); when the file cannot be written they hold for this process."""
    assert cfg.workspace is not None
    cfg.approved_here.update(entries)
    try:
        approvals.record(cfg.workspace, entries)
    except EditRefused as exc:
        log.warning("project approvals cannot be saved (%s); they hold for this session only", exc.code)
        return
    for name in entries:
        cfg.approved_here.pop(name, None)


def pending_json(cfg: Configuration) -> list[PendingApproval]:
    return [p.to_json() for p in cfg.pending.values()]


def record_own_edit(cfg: Configuration, names_to_definitions: dict[str, dict[str, Any]]) -> None:
    """Definitions the sidecar itself writes to the project file are approved (blocking: call in a thread)."""
    if cfg.workspace is not None and names_to_definitions:
        _record(cfg, {name: Approval.of(definition) for name, definition in names_to_definitions.items()})


def forget_removed(cfg: Configuration, names: list[str]) -> None:
    """A removed project definition added again later is asked about again (blocking)."""
    if cfg.workspace is None:
        return
    for name in names:
        cfg.approved_here.pop(name, None)
    try:
        approvals.forget(cfg.workspace, names)
    except EditRefused as exc:
        log.warning("project approvals cannot be saved (%s)", exc.code)


class Approvals:
    """`mcp/approve`: the person's approval of project definitions, recorded for the workspace."""

    def __init__(self, configuration: Configuration) -> None:
        self._configuration = configuration

    async def approve(self, entries: list[tuple[str, str]]) -> ApproveResult:
        """Approve `(server, definitionHash)` pairs that still match the project file, then reload."""
        op = "approve"
        self._configuration.ensure_loaded()
        if self._configuration.workspace is None or not self._configuration.trusted:
            raise fail(
                "project_untrusted",
                op,
                "The workspace is not trusted, so its server definitions are neither read nor approved.",
            )
        workspace = self._configuration.workspace
        # The valid definitions can be approved beside an invalid one (at start they load on their own).
        config = (await asyncio.to_thread(loader.load_report, workspace, True)).config
        current = {name: Approval.of(s.raw) for name, s in config.servers.items() if s.scope == "project"}
        current.update(
            {approval_key(n): Approval.of(p.raw) for n, p in config.profiles.items() if p.scope == "project"}
        )
        approved: dict[str, Approval] = {}
        not_approved: list[NotApproved] = []
        for server, digest in entries:
            if server not in current:
                what = "profile" if profile_of_key(server) is not None else "server"
                not_approved.append({"server": server, "reason": f"The project configuration defines no such {what}."})
            elif current[server].definition_hash != digest:
                not_approved.append(
                    {"server": server, "reason": "The definition changed again since it was shown; review it again."}
                )
            else:
                approved[server] = current[server]
        if approved:
            await asyncio.to_thread(_record, self._configuration, approved)
        summary_ = await self._configuration.reload()
        return {"approved": sorted(approved), "notApproved": not_approved, "reload": summary_.to_json()}
