"""Exact activation of tools into a session, and calls re-validated against the live catalog.

Activation never guesses: an id that does not name a catalog tool exactly is `not loaded`,
with nearby exact names to retry with. Calls refuse tools that are not active in the
session, and tools whose live definition changed or disappeared since activation.

Ids are compared after NFC normalisation. A `mcp__server__tool` id can name two tools when
server names meet at `__` (`mcp__a__b__c` is tool `b__c` of server `a` and tool `c` of server
`a__b`): when both exist, neither is activated, by any spelling, since a client registering
them by model name could not tell them apart; a call resolves an id only among the tools
active in its session. `model_name_owners` is that check, for discovery too (it never offers
such a tool). A refused or colliding tool's result carries a `catalog_entry_invalid` diagnostic.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from mcp_sidecar import tasks
from mcp_sidecar.catalog import apps, names
from mcp_sidecar.catalog.documents import canonical
from mcp_sidecar.catalog.names import nfc
from mcp_sidecar.catalog.tools import ToolCatalog, tool_view
from mcp_sidecar.output import activation_text
from mcp_sidecar.output.shaping import shape_tool_result
from mcp_sidecar.output.wording import EDITOR, Wording
from mcp_sidecar.protocol.errors import (
    Diagnostic,
    DiagnosticCode,
    SidecarError,
    diagnostic,
    fail,
    outside_profile,
    refused_disabled,
)
from mcp_sidecar.services import budget
from mcp_sidecar.services.sessions import ActiveTool, Sessions

if TYPE_CHECKING:
    from mcp_sidecar.config.budget import Budget
    from mcp_sidecar.connections.content_requests import ProgressSink
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        ActivateResult,
        ActivationEntry,
        ActivationOutcome,
        ActivationTokens,
        ActiveToolsResult,
        CallToolResult,
        ToolDefinition,
        UrlStep,
    )
    from mcp_sidecar.services.catalogs import Catalogs
    from mcp_sidecar.services.configuration import Configuration

MAX_NEARBY = 5


@dataclass(frozen=True, slots=True)
class ToolRef:
    server: str
    tool: str

    @property
    def id(self) -> str:
        return f"{self.server}.{self.tool}"


def tool_refs(tool_id: str, servers: list[str]) -> list[ToolRef]:
    """Every reading of `server.tool` or `mcp__server__tool` by a configured server name, longest first."""
    if tool_id.startswith("mcp__"):
        rest, sep = tool_id[len("mcp__") :], "__"
    else:
        rest, sep = tool_id, "."
    refs = []
    for server in sorted(servers, key=len, reverse=True):
        prefix = server + sep
        if rest.startswith(prefix) and len(rest) > len(prefix):
            refs.append(ToolRef(server, rest[len(prefix) :]))
    return refs


def parse_tool_id(tool_id: str, servers: list[str]) -> ToolRef | None:
    """`server.tool` or `mcp__server__tool`; server names are matched exactly, longest first."""
    refs = tool_refs(tool_id, servers)
    return refs[0] if refs else None


def model_name(ref: ToolRef) -> str:
    return f"mcp__{ref.server}__{ref.tool}"


def _nearby(word: str, choices: list[str]) -> list[str]:
    return difflib.get_close_matches(word, choices, n=MAX_NEARBY, cutoff=0.5)


def _not_loaded(tool_id: str, server: str, reason: str) -> ActivationOutcome:
    """A tool the catalog refused (or that collides): the reason, and the diagnostic whose hint says who can fix it."""
    diag = diagnostic(names.CODE, "activate", reason, server)
    return {"id": tool_id, "status": "not loaded", "reason": reason, "diagnostic": diag.to_json(), "nearby": []}


def _collision(tool_id: str, refs: list[ToolRef]) -> ActivationOutcome:
    named = " and ".join(repr(r.id) for r in refs)
    reason = (
        f"{named} have the same model name {model_name(refs[0])!r} (their mcp__server__tool forms "
        "collide), so neither is activated."
    )
    return _not_loaded(tool_id, refs[0].server, reason)


def _disabled(ref: ToolRef, approval_required: bool) -> ActivationOutcome:
    return {
        "id": ref.id,
        "status": "not loaded",
        "reason": (
            f"Server {ref.server!r} waits for approval: its project definition is new or changed."
            if approval_required
            else f"Server {ref.server!r} is disabled."
        ),
        "nearby": [],
    }


def _absent(ref: ToolRef, catalog: ToolCatalog, visible: list[str]) -> ActivationOutcome:
    """Why the catalog has no visible tool of that name: refused, filtered out, or none."""
    refused = catalog.refused_entry(ref.tool)
    if refused is not None:
        return _not_loaded(ref.id, ref.server, refused["diagnostic"]["message"])
    if ref.tool in catalog.all_names():
        reason = f"Tool {ref.tool!r} is excluded by the server's tool filters."
        if any(d["name"] == ref.tool and not apps.for_model(d) for d in catalog.accepted()):
            reason = f"Tool {ref.tool!r} is for the server's app only (_meta.ui.visibility), not for the model."
    else:
        reason = f"Server {ref.server!r} has no tool named {ref.tool!r}."
    return {
        "id": ref.id,
        "status": "not loaded",
        "reason": reason,
        "nearby": [f"{ref.server}.{n}" for n in _nearby(ref.tool, visible)],
    }


class NotActivated(SidecarError):
    """`mcp/callTool` with `activate`: the id was `not loaded`; `activation` is `mcp/activate`'s result."""

    def __init__(self, diag: Diagnostic, activation: ActivateResult) -> None:
        super().__init__(diag)
        self.activation = activation


class Activation:
    """Activating tools into sessions and calling them, re-validated against the live catalogs."""

    def __init__(
        self, configuration: Configuration, registry: ServerRegistry, catalogs: Catalogs, sessions: Sessions
    ) -> None:
        self._configuration = configuration
        self._registry = registry
        self._catalogs = catalogs
        self._sessions = sessions

    async def _visible_names(self, server: str, operation: str) -> frozenset[str] | None:
        """The tools of `server`'s filtered catalog (none when not configured or disabled); None when
        it cannot be asked now, so it may well have the tool."""
        conn = self._registry.get(server)
        if conn is None or conn.config.disabled:
            return frozenset()
        try:
            catalog = await self._catalogs.tool_catalog(conn, operation)
        except SidecarError:
            return None
        return frozenset(catalog.visible(conn.config))

    async def model_name_owners(self, models: Iterable[str], operation: str) -> dict[str, list[ToolRef]]:
        """For each `mcp__server__tool` name, the tools it names, longest server name first: two or more collide.

        Only servers whose names meet at `__` can collide; each server's catalog is asked once. A
        server that cannot be asked (down, failing) counts as an owner: activating the other one
        would let a model name mean a tool that server may have too, once it is back.
        """
        servers = self._registry.names()
        readings = {m: tool_refs(m, servers) for m in models}
        wanted = sorted({r.server for refs in readings.values() for r in refs})
        found = await asyncio.gather(*(self._visible_names(s, operation) for s in wanted))
        visible = dict(zip(wanted, found, strict=True))
        return {
            m: [r for r in refs if (names_of := visible[r.server]) is None or r.tool in names_of]
            for m, refs in readings.items()
        }

    async def _resolve(self, tool_id: str, servers: list[str]) -> ToolRef | ActivationOutcome:
        """The one tool an id names, or why it names none (no such server, a collision)."""
        refs = tool_refs(tool_id, servers)
        if len(refs) > 1:
            # Server names meeting at `__`: several servers could be meant. Each is asked.
            owners = (await self.model_name_owners([tool_id], "activate"))[tool_id]
            if len(owners) > 1:
                return _collision(tool_id, owners)
            refs = owners or refs[:1]
        if refs:
            return refs[0]
        broken = self._registry.broken()
        named = tool_refs(tool_id, list(broken))
        if named:
            # Configured, but its definition is invalid: say so, never "no such server".
            diag = broken[named[0].server].to_json()
            reason = f"Server {named[0].server!r} is configured but not loaded."
            return {"id": tool_id, "status": "not loaded", "reason": reason, "diagnostic": diag, "nearby": []}
        head = tool_id.removeprefix("mcp__").split("__" if tool_id.startswith("mcp__") else ".")[0]
        outcome: ActivationOutcome = {
            "id": tool_id,
            "status": "not loaded",
            "reason": "The id does not start with a configured server name.",
            "nearby": self._known_ids_like(tool_id) or [f"{s}." for s in _nearby(head, servers)],
        }
        unread = next((p for p in self._registry.problems if p.server is None), None)
        if unread is not None:  # a file whose servers are unknown may well define it
            outcome["diagnostic"] = unread.to_json()
        return outcome

    def _known_ids_like(self, tool_id: str) -> list[str]:
        """Exact ids of tools in memory whose name is like the id's tool part (`echo`, `Basic.echo`).

        Only catalogs already fetched are looked at: a typo never starts a server."""
        word = tool_id.removeprefix("mcp__").replace("__", ".").rsplit(".", 1)[-1]
        by_name: dict[str, list[str]] = {}
        for conn in self._registry:
            catalog = self._catalogs.tools_in_memory(conn)
            if catalog is None or conn.config.disabled:
                continue
            for name in catalog.visible(conn.config):
                by_name.setdefault(name, []).append(f"{conn.name}.{name}")
        names = difflib.get_close_matches(word, list(by_name), n=MAX_NEARBY, cutoff=0.6)
        return [tool for name in names for tool in by_name[name]][:MAX_NEARBY]

    async def _activate_one(self, tool_id: str, session_id: str) -> ActivationOutcome:
        servers = self._registry.names()
        ref = await self._resolve(nfc(tool_id), servers)
        if not isinstance(ref, ToolRef):
            return ref
        conn = self._registry.connection(ref.server, "activate")
        if conn.config.disabled:
            return _disabled(ref, conn.config.approval_required)
        if not self._configuration.searches(ref.server):
            diag = outside_profile("activate", ref.server, self._configuration.profile_name).diagnostic
            return {
                "id": ref.id,
                "status": "not loaded",
                "reason": diag.message,
                "diagnostic": diag.to_json(),
                "nearby": [],
            }
        try:
            catalog = await self._catalogs.tool_catalog(conn, "activate")
        except SidecarError as exc:
            return {
                "id": ref.id,
                "status": "not loaded",
                "reason": "The server's tool catalog is unavailable.",
                "diagnostic": exc.diagnostic.to_json(),
                "nearby": [],
            }
        visible = catalog.visible(conn.config)
        descriptor = visible.get(ref.tool)
        if descriptor is None:
            return _absent(ref, catalog, list(visible))
        # The same model name from another server's tool (`a.b__c` and `a__b.c`): neither loads.
        model = model_name(ref)
        if len(tool_refs(model, servers)) > 1:
            clashing = [r for r in (await self.model_name_owners([model], "activate"))[model] if r != ref]
            if clashing:
                return _collision(ref.id, [ref, *clashing])
        known = self._catalogs.tokens_at_hand(conn, catalog)  # else counted after, with the others
        tokens = known.get(ref.tool) if known is not None else None
        text = canonical(descriptor)
        existing = self._sessions.get(session_id, ref.id)
        if existing is not None and existing.canonical == text:
            self._sessions.touch(session_id, ref.id)  # asked for again: used now, as far as the budget goes
            return {"id": ref.id, "status": "already loaded", "tool": tool_view(ref.server, descriptor, tokens)}
        tool = ActiveTool(ref.server, ref.tool, descriptor, text, conn.config.fingerprint(), tokens)
        self._sessions.activate(session_id, ref.id, tool)
        return {"id": ref.id, "status": "loaded", "tool": tool_view(ref.server, descriptor, tokens)}

    async def activate(self, ids: tuple[str, ...], session_id: str, wording: Wording = EDITOR) -> ActivateResult:
        self._configuration.ensure_loaded()
        self._sessions.open(session_id)
        # Catalog fetches are bounded by the app's discovery slots; ids resolve concurrently.
        outcomes = await asyncio.gather(*(self._activate_one(i, session_id) for i in ids))
        results: list[ActivationEntry] = []
        tools: list[ToolDefinition] = []
        seen: set[str] = set()
        for outcome in outcomes:
            tool = outcome.pop("tool", None)
            if tool is not None and tool["id"] not in seen:
                seen.add(tool["id"])
                tools.append(tool)
            if outcome["status"] != "not loaded" and outcome["id"] in {r["id"] for r in results}:
                continue  # `server.tool` and `mcp__server__tool` spellings of one tool
            results.append(outcome)
        self._sessions.activated({tool["server"] for tool in tools})  # the Loaded column counts active tools
        await self._count_missing(tools, session_id)
        limits = self._configuration.budget()
        asked = {r["id"] for r in results if r["status"] != "not loaded"}
        evicted = self._keep_to_budget(session_id, limits, asked)
        tokens = self._activation_tokens(results, tools, session_id)
        over = not budget.fits(limits, len(self._sessions.active(session_id)), self._sessions.tokens(session_id))
        result: ActivateResult = {
            "session": session_id,
            "results": results,
            "tools": tools,
            "text": "",
            "tokens": tokens,
            "evicted": evicted,
            "budget": budget.to_json(limits),
            "overBudget": over,
        }
        result["text"] = activation_text.render_result(result, wording)
        return result

    def _keep_to_budget(self, session_id: str, limits: Budget, asked: set[str]) -> list[str]:
        """Deactivate the session's least recently used tools, other than `asked`, until it fits `limits`."""
        active = self._sessions.active(session_id)
        uses = budget.uses(self._sessions.last_used(session_id), {i: t.tokens for i, t in active.items()})
        gone = budget.evictions(limits, uses, asked)
        return self._sessions.evict(session_id, gone) if gone else []

    async def _count_missing(self, tools: list[ToolDefinition], session_id: str) -> None:
        """Count the tools whose catalog's estimates were not at hand (in a worker thread, at once), and
        record them in the session."""
        missing = [tool for tool in tools if "tokens" not in tool]
        counted = await self._catalogs.definition_tokens(cast("list[dict[str, Any]]", missing)) if missing else None
        for tool, tokens in zip(missing, counted or (), strict=False):
            tool["tokens"] = tokens
            self._sessions.set_tokens(session_id, tool["id"], tokens)

    def _activation_tokens(
        self, results: list[ActivationEntry], tools: list[ToolDefinition], session_id: str
    ) -> ActivationTokens | None:
        """The estimates of the tools this activation loaded, and of the session's now; None when one is
        not known (no tokenizer)."""
        session = self._sessions.tokens(session_id)
        loaded = {r["id"] for r in results if r["status"] == "loaded"}
        added = [t.get("tokens") for t in tools if t["id"] in loaded]
        if session is None or any(n is None for n in added):
            return None
        return {"added": sum(n for n in added if n is not None), "session": session}

    def connect_soon(self, done: ActivateResult) -> None:
        """Start connecting, in the background and in parallel, the servers of tools just loaded from a
        cached catalog: their first call needs the live catalog, and a host calls right after activating
        (six servers started one call at a time cost 5 to 7 s). A failure waits for that call to report it."""
        self.connect_servers_soon({tool["server"] for tool in done["tools"]})

    def connect_servers_soon(self, servers: Iterable[str]) -> None:
        """Start connecting `servers` (those neither connected nor connecting), in the background, each
        fetching its live tool catalog."""
        for server in sorted(servers):
            conn = self._registry.get(server)
            if conn is not None and not conn.config.disabled and conn.state not in ("connected", "connecting"):
                tasks.spawn(self._connected(conn), f"activate-connect:{server}")

    async def _connected(self, conn: ServerConnection) -> None:
        with contextlib.suppress(SidecarError):
            await self._catalogs.tool_catalog(conn, "activate", live=True)

    def active_tools(self, session_id: str) -> ActiveToolsResult:
        session = self._sessions.active(session_id)
        return {
            "session": session_id,
            "tools": [tool_view(t.server, t.descriptor, t.tokens) for t in session.values()],
            "tokens": self._sessions.tokens(session_id),
            "budget": budget.to_json(self._configuration.budget()),
        }

    async def call_tool(
        self, tool_id: str, arguments: dict[str, Any], session_id: str, progress: ProgressSink | None = None
    ) -> CallToolResult:
        op = "call"
        self._configuration.ensure_loaded()
        refs = tool_refs(nfc(tool_id), self._registry.names())
        if not refs:
            raise fail("tool_not_found", op, f"{tool_id!r} does not name a configured server's tool.")
        session = self._sessions.active(session_id)
        # An id that several servers could own means the one active in this session.
        ref = next((r for r in refs if r.id in session), refs[0])
        active = session.get(ref.id)
        if active is None and self._sessions.evicted(session_id, ref.id):
            why = f"Tool {ref.id!r} was deactivated by the session budget (least recently used): activate it again."
            raise fail("tool_not_active", op, why, ref.server)
        if active is None:
            raise fail("tool_not_active", op, f"Tool {ref.id!r} is not active in session {session_id!r}.", ref.server)
        self._sessions.touch(session_id, ref.id)
        conn = self._configuration.connection(ref.server, op)
        if conn.config.disabled:
            raise refused_disabled(op, ref.server, conn.config.approval_required)
        catalog = await self._catalogs.tool_catalog(conn, op, live=True)
        live = catalog.visible(conn.config).get(ref.tool)
        if live is None:
            raise fail("tool_changed", op, f"Tool {ref.id!r} was removed or filtered out since activation.", ref.server)
        if catalog.canonical_of(live) != active.canonical:
            raise fail("tool_changed", op, f"Tool {ref.id!r} changed since activation.", ref.server)
        answer = await conn.call_tool(ref.tool, arguments, op, progress)
        # Output limits: a preview within them, the whole result in a private spill file.
        shaped = shape_tool_result(answer.result, ref.server, f"{ref.server}.{ref.tool}")
        # The MCP result's own keys pass through; `activation` is added by activate_and_call alone.
        result = cast("CallToolResult", {"id": ref.id, "server": ref.server, "tool": ref.tool, **shaped})
        if answer.diagnostic is not None:
            result["diagnostic"] = answer.diagnostic.to_json()  # a failed tool: `tool_error`, content as sent
        if answer.elicitations:
            result["elicitations"] = cast("list[UrlStep]", list(answer.elicitations))
        if answer.redacted:
            result["redacted"] = answer.redacted  # the server's own secrets, replaced by `***` in what it sent
        return result

    async def call_listed_tool(
        self, tool_id: str, arguments: dict[str, Any], session_id: str, progress: ProgressSink | None = None
    ) -> CallToolResult:
        """`call_tool` for a client that lists the session's tools as its own (a gateway host): a tool refused
        as changed leaves the session too, so that list never shows a stale schema (an editor keeps it,
        which discovery marks changed)."""
        try:
            return await self.call_tool(tool_id, arguments, session_id, progress)
        except SidecarError as exc:
            if exc.diagnostic.code == "tool_changed":
                self._sessions.deactivate(session_id, [tool_id], "tool changed")
            raise

    async def deactivate_changed(self, conn: ServerConnection, sessions: Iterable[str], operation: str) -> None:
        """Drop `conn`'s tools whose live definition changed or went from each of `sessions`; nothing when
        the server cannot say now (a call re-validates, and refuses a changed tool)."""
        try:
            catalog = await self._catalogs.tool_catalog(conn, operation, live=True)
        except SidecarError:
            return
        visible = catalog.visible(conn.config)
        for session in sessions:
            stale = [
                tool_id
                for tool_id, tool in self._sessions.active(session).items()
                if tool.server == conn.name
                and ((live := visible.get(tool.name)) is None or catalog.canonical_of(live) != tool.canonical)
            ]
            if stale:
                self._sessions.deactivate(session, stale, "tool changed")

    async def restore(
        self, session_id: str, saved: Mapping[str, str], fingerprint: Callable[[str], str], operation: str
    ) -> list[str]:
        """Activate the `saved` ids (id → `fingerprint` of the definition activated) again, each against its
        server's live catalog (fetched first); one whose definition changed since is dropped again, as a
        changed tool is. The ids not restored: those not loaded, then those changed."""
        servers = {ref.server for i in saved if (ref := parse_tool_id(i, self._registry.names()))}
        for server in sorted(servers):
            conn = self._registry.get(server)
            if conn is not None and not conn.config.disabled:
                with contextlib.suppress(SidecarError):  # not loaded then, with its reason in the result
                    await self._catalogs.tool_catalog(conn, operation, live=True)
        done = await self.activate(tuple(saved), session_id)
        active = self._sessions.active(session_id)
        changed = [i for i, tool in active.items() if i in saved and fingerprint(tool.canonical) != saved[i]]
        self._sessions.deactivate(session_id, changed, "tool changed")
        return [r["id"] for r in done["results"] if r["status"] == "not loaded"] + changed

    def in_cached_catalog(self, ref: ToolRef) -> bool:
        """Whether a tool catalog in memory (or on disk) has the tool: a guessed name is not a tool."""
        conn = self._registry.get(ref.server)
        if conn is None:
            return False
        catalog = self._catalogs.cached_tools(conn)
        return catalog is not None and ref.tool in catalog.visible(conn.config)

    def _activation_diagnostic(self, row: ActivationEntry) -> Diagnostic:
        """The row's own diagnostic when it has one, else one whose message is the row's reason."""
        nearby = tuple(row.get("nearby") or ())
        given = row.get("diagnostic")
        if given is not None:
            return Diagnostic(
                code=given["code"],
                operation="activate",  # the step that failed, whichever request's connection attempt it shared
                message=given["message"],
                server=given.get("server"),
                hint=given["hint"],
                nearby=nearby,
            )
        ref = parse_tool_id(row["id"], self._registry.names())
        conn = self._registry.get(ref.server) if ref is not None else None
        code: DiagnosticCode = "tool_not_found"
        if conn is not None and conn.config.disabled:
            code = "trust_required" if conn.config.approval_required else "server_disabled"
        diag = diagnostic(code, "activate", row["reason"], ref.server if ref is not None else None)
        return Diagnostic(diag.code, diag.operation, diag.message, diag.server, diag.hint, nearby=nearby)

    async def activate_and_call(
        self, tool_id: str, arguments: dict[str, Any], session_id: str, progress: ProgressSink | None = None
    ) -> CallToolResult:
        """Activate exactly as `mcp/activate` does, then call; NotActivated when the id did not load."""
        activated = await self.activate((tool_id,), session_id)
        row = activated["results"][0]
        if row["status"] == "not loaded":
            raise NotActivated(self._activation_diagnostic(row), activated)
        result = await self.call_tool(row["id"], arguments, session_id, progress)
        status: Literal["loaded", "already loaded"] = "loaded" if row["status"] == "loaded" else "already loaded"
        return {**result, "activation": {"id": row["id"], "status": status}}
