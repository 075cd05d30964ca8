"""Project definitions run only as approved: the gate between `.mcp.json` and a connection.

Every configuration load passes through `gate`: a trusted project's definitions whose
connection fields are not recorded as approved (`config/approvals.py`) stay disabled with
`trust_required`, and the editor is told once per change (`mcp/approvalRequired`) with a
one-line summary of what would run. `approve` records exactly what the person saw: an entry
whose definition changed again since is refused and asked about anew.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config import approvals, loader
from mcp_sidecar.config.approvals import Change, Pending, definition_hash
from mcp_sidecar.config.edit import EditRefused
from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.validate import ConfigProblems
from mcp_sidecar.output.command_text import quote_word
from mcp_sidecar.output.sanitize import strip_controls
from mcp_sidecar.protocol.errors import fail

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar

log = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 2000


def summary(server: ServerConfig) -> str:
    """What the definition runs or connects to, on one line, as written (`${VAR}` unresolved).

    Environment and header values are never shown, only their names: they can hold credentials.
    Control, bidi and invisible characters are removed, so what a person approves is what they see.
    """
    raw = server.raw
    if server.transport == "stdio":
        words = [str(raw.get("command", "")), *(str(a) for a in raw.get("args", []) or [])]
        text = " ".join(quote_word(word) for word in words)
        extras = []
        if isinstance(raw.get("cwd"), str):
            extras.append(f"cwd: {quote_word(raw['cwd'])}")
        if isinstance(raw.get("env"), dict) and raw["env"]:
            extras.append("env: " + ", ".join(map(str, raw["env"])))
    else:
        text = str(raw.get("url", ""))
        extras = ["headers: " + ", ".join(map(str, raw["headers"]))] if raw.get("headers") else []
    if extras:
        text += f" ({'; '.join(extras)})"
    text = " ".join(strip_controls(text).split())
    if len(text) > MAX_SUMMARY_CHARS:
        text = text[:MAX_SUMMARY_CHARS] + f"… ({len(text) - MAX_SUMMARY_CHARS} more characters)"
    return text


def gate(app: Sidecar, config: EffectiveConfig) -> EffectiveConfig:
    """`config` with every unapproved project definition disabled; sets `app.pending`.

    A grant of trust (`app.take_grant()`) approves the definitions present now; otherwise
    only a workspace never seen trusted before has them approved (its first record).
    """
    app.pending = {}
    if app.workspace is None or not app.trusted:
        return config
    project = {name: s for name, s in config.servers.items() if s.scope == "project"}
    hashes = {name: definition_hash(s.raw) for name, s in project.items()}
    grant = app.take_grant()
    record = approvals.approved(app.workspace)
    if grant or (record is None and not app.approved_here):
        try:
            approvals.record(app.workspace, hashes, only_if_new=not grant)
        except EditRefused as exc:
            log.warning("project approvals cannot be saved (%s); they hold for this session only", exc.code)
            app.approved_here.update(hashes)
        record = approvals.approved(app.workspace)
    approved = {**(record or {}), **app.approved_here}
    servers = dict(config.servers)
    for name, server in project.items():
        if approved.get(name) == hashes[name]:
            continue
        change: Change = "changed" if name in approved else "new"
        app.pending[name] = Pending(name, change, hashes[name], server.transport, summary(server))
        servers[name] = dataclasses.replace(server, disabled=True, approval_required=True)
    return EffectiveConfig(servers=servers, files=config.files, shadowed=config.shadowed)


def pending_json(app: Sidecar) -> list[dict[str, Any]]:
    return [p.to_json() for p in app.pending.values()]


async def approve(app: Sidecar, entries: list[tuple[str, str]]) -> dict[str, Any]:
    """Approve `(server, definitionHash)` pairs that still match the project file, then reload."""
    op = "approve"
    app.ensure_loaded()
    if app.workspace is None or not app.trusted:
        raise fail(
            "project_untrusted",
            op,
            "The workspace is not trusted, so its server definitions are neither read nor approved.",
        )
    workspace = app.workspace
    try:
        config = await asyncio.to_thread(loader.load, workspace, True)
    except ConfigProblems as exc:
        raise fail("configuration_invalid", op, " ".join(exc.problems)) from None
    current = {name: definition_hash(s.raw) for name, s in config.servers.items() if s.scope == "project"}
    approved: dict[str, str] = {}
    not_approved: list[dict[str, str]] = []
    for server, digest in entries:
        if server not in current:
            not_approved.append({"server": server, "reason": "The project configuration defines no such server."})
        elif current[server] != digest:
            not_approved.append(
                {"server": server, "reason": "The definition changed again since it was shown; review it again."}
            )
        else:
            approved[server] = digest
    if approved:
        try:
            await asyncio.to_thread(approvals.record, workspace, approved)
        except EditRefused as exc:
            log.warning("project approvals cannot be saved (%s); they hold for this session only", exc.code)
            app.approved_here.update(approved)
    summary_ = await app.reload()
    return {"approved": sorted(approved), "notApproved": not_approved, "reload": summary_.to_json()}


def record_own_edit(app: Sidecar, names_to_definitions: dict[str, dict[str, Any]]) -> None:
    """Definitions the sidecar itself writes to the project file are approved (blocking: call in a thread)."""
    if app.workspace is None or not names_to_definitions:
        return
    hashes = {name: definition_hash(definition) for name, definition in names_to_definitions.items()}
    try:
        approvals.record(app.workspace, hashes)
    except EditRefused as exc:
        log.warning("project approvals cannot be saved (%s); they hold for this session only", exc.code)
        app.approved_here.update(hashes)


def forget_removed(app: Sidecar, names: list[str]) -> None:
    """A removed project definition added again later is asked about again (blocking)."""
    if app.workspace is None:
        return
    for name in names:
        app.approved_here.pop(name, None)
    try:
        approvals.forget(app.workspace, names)
    except EditRefused as exc:
        log.warning("project approvals cannot be saved (%s)", exc.code)
