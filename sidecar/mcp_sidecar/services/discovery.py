"""Discovery: ranked local search over every server's tool, resource, template and prompt metadata.

Discovery reads metadata only: it never reads resource content, never activates a tool and
never starts OAuth. A server that cannot be searched is reported in `unavailable` with its
diagnostic, never mistaken for an empty catalog, and healthy servers' candidates are still
returned. Cached tool metadata (memory or the 24-hour disk cache) is searched without
connecting; anything else is fetched with at most four server discoveries in flight.

Entries a catalog refused (invalid names, URIs with control characters) are never
candidates; `refused` lists those of the catalogs searched. Nor is a tool whose model name
another server's tool has too (`a.b__c` and `a__b.c`), which activation would refuse: the
check is activation's own (`model_name_owners`), and `refused` lists such tools with the ids
they collide with. Structured fields keep the server's data as it came; the `text` rendering
shows every server string sanitised, each on one line (`output/discovery_text.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

from mcp_sidecar.catalog import hybrid, kinds, names, rewrite
from mcp_sidecar.catalog.candidates import Scored
from mcp_sidecar.catalog.index import EXACT_BOOST, Hit, Index
from mcp_sidecar.catalog.kinds import Group
from mcp_sidecar.catalog.stored_index import StoredIndexDamaged
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.output import discovery_text
from mcp_sidecar.output.wording import EDITOR, Wording
from mcp_sidecar.protocol.errors import SidecarError, outside_profile, refused_disabled
from mcp_sidecar.protocol.params import RANKED_QUERY_CHARS
from mcp_sidecar.services.activation import tool_refs
from mcp_sidecar.services.sessions import ActiveTool

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        Candidate,
        DiscoverResult,
        Match,
        RefusedEntry,
        ToolCandidate,
        Unavailable,
    )
    from mcp_sidecar.services.activation import Activation
    from mcp_sidecar.services.catalogs import Catalogs
    from mcp_sidecar.services.configuration import Configuration
    from mcp_sidecar.services.sessions import Sessions


@dataclass(frozen=True, slots=True)
class _Request:
    query: str
    kind: str
    server: str | None
    limit: int
    session_id: str
    for_model: bool
    wording: Wording


def ranked_query(query: str) -> tuple[str, bool]:
    """The part of `query` ranking reads: all of it, or its first `RANKED_QUERY_CHARS` cut at a space."""
    if len(query) <= RANKED_QUERY_CHARS:
        return query, False
    head = query[:RANKED_QUERY_CHARS]
    at_space = head.rstrip().rsplit(None, 1)[0] if not query[RANKED_QUERY_CHARS].isspace() else head
    # A very long first word is cut where it is rather than dropped.
    return (at_space if len(at_space) >= RANKED_QUERY_CHARS // 2 else head).rstrip(), True


PROMPT_KINDS = frozenset(k.name for k in kinds.KINDS if k.for_people)
USABLE_KINDS = frozenset(k.name for k in kinds.KINDS if not k.for_people)


def _ranked_hits(
    indexes: list[Index],
    query: str,
    limit: int,
    hidden: set[tuple[str, str]],
    *,
    prompts_last: bool,
    model: Any,
    encoder: Any = None,
    rewrite_query: bool = False,
) -> list[Hit]:
    """The best `limit` hits; with `prompts_last`, prompts only fill what tools and resources leave."""

    def offered(kinds: frozenset[str] | None, wanted: int) -> list[Hit]:
        # Colliding tools are ranked but not offered: ask for as many more hits as there are of them.
        hits = hybrid.search(
            indexes,
            query,
            kinds=kinds,
            limit=wanted + len(hidden),
            model=model,
            encoder=encoder,
            rewrite_query=rewrite_query,
        )
        kept = [h for h in hits if h.document.kind != "tool" or (h.document.server, h.document.key) not in hidden]
        return kept[:wanted]

    if not prompts_last:
        return offered(None, limit)
    usable = offered(USABLE_KINDS, limit)
    return usable + (offered(PROMPT_KINDS, limit - len(usable)) if len(usable) < limit else [])


class _Ranking(TypedDict, total=False):
    match: Match
    weak: Literal[True]


def _ranking(hit: Hit) -> _Ranking:
    out: _Ranking = {}
    if hit.keyword is not None or hit.semantic is not None:
        out["match"] = match(hit)
    if hit.weak:
        out["weak"] = True
    return out


def match(hit: Hit) -> Match:
    """Which signal put the hit where it is: an exact name, keywords, meaning, or both."""
    signals: list[Literal["exact", "keyword", "semantic"]] = []
    if hit.score >= EXACT_BOOST and hit.keyword is not None:
        signals.append("exact")
    out: Match = {"signals": signals}
    if hit.keyword is not None:
        signals.append("keyword")
        out["keywordRank"] = hit.keyword
    if hit.semantic is not None:
        signals.append("semantic")
        out["semanticRank"] = hit.semantic
    if hit.similarity is not None:
        out["similarity"] = round(hit.similarity, 4)
    return out


def candidate(hit: Hit, active: Mapping[str, ActiveTool]) -> Candidate:
    """The wire candidate of a ranked entry, as its kind builds it (`catalog/kinds.py`)."""
    scored: Scored = {"score": round(hit.score, 4), **_ranking(hit)}
    return kinds.of(hit.document.kind).candidate(hit.document, active, scored)


class Discovery:
    """Ranked search over every server's catalogs, metadata only."""

    def __init__(
        self,
        configuration: Configuration,
        registry: ServerRegistry,
        catalogs: Catalogs,
        sessions: Sessions,
        activation: Activation,
    ) -> None:
        self._configuration = configuration
        self._registry = registry
        self._catalogs = catalogs
        self._sessions = sessions
        self._activation = activation
        """Its check of colliding model names (a tool activation would refuse is never offered)."""

    async def _server_indexes(
        self, conn: ServerConnection, groups: tuple[Group, ...], operation: str
    ) -> tuple[list[Index], list[Unavailable], list[dict[str, Any]]]:
        catalogs = self._catalogs
        indexes: list[Index] = []
        unavailable: list[Unavailable] = []
        refused: list[dict[str, Any]] = []

        async def one(group: Group) -> None:
            try:
                source = await catalogs.catalog(conn, group, operation)
            except SidecarError as exc:
                unavailable.append({"server": conn.name, "kind": group, "diagnostic": exc.diagnostic.to_json()})
                return
            indexes.append(await catalogs.index(conn, group, source))
            refused.extend({"server": conn.name, **r} for r in source.refused)

        needs_fetch = any(not catalogs.at_hand(conn, g) for g in groups)
        if needs_fetch:
            async with catalogs.slot(catalogs.key_of(conn)):
                await asyncio.gather(*(one(g) for g in groups))
        else:
            await asyncio.gather(*(one(g) for g in groups))
        refused.sort(key=lambda r: kinds.order(r["kind"]))
        return indexes, unavailable, refused

    async def discover(
        self,
        query: str,
        kind: str = "all",
        server: str | None = None,
        limit: int = 5,
        session_id: str = "default",
        *,
        for_model: bool = False,
        wording: Wording = EDITOR,
    ) -> DiscoverResult:
        """Rank every searched server's metadata for `query`.

        `for_model` (`mcp_tools`): prompts, which only a person can run, come after every tool and
        resource instead of ranking among them (with `kind: "prompts"` they are all there is).
        """
        op = "discover"
        self._configuration.ensure_loaded()
        await self._catalogs.ready_to_rank()
        if server is not None:
            conn = self._configuration.connection(server, op)
            if conn.config.disabled:
                raise refused_disabled(op, server, conn.config.approval_required)
            if not self._configuration.searches(server):
                raise outside_profile(op, server, self._configuration.profile_name)
            conns = [conn]
        else:
            conns = [c for c in self._registry if not c.config.disabled and self._configuration.searches(c.name)]
        request = _Request(query, kind, server, limit, session_id, for_model, wording)
        for _ in range(len(conns)):
            try:
                return await self._discover(conns, request)
            except StoredIndexDamaged as exc:
                # A planted or damaged index file: that server's catalog is read and indexed again.
                self._catalogs.discard_stored_index(self._configuration.connection(exc.server, op))
        return await self._discover(conns, request)

    async def _discover(self, conns: list[ServerConnection], request: _Request) -> DiscoverResult:
        op = "discover"
        query, kind, server, limit = request.query, request.kind, request.server, request.limit
        for_model, session_id, wording = request.for_model, request.session_id, request.wording
        groups = kinds.SEARCHED[kind]
        outcomes = await asyncio.gather(*(self._server_indexes(c, groups, op) for c in conns))
        indexes = [ix for found, _, _ in outcomes for ix in found]
        unavailable = [u for _, missing, _ in outcomes for u in missing]
        if server is None:
            # Waiting for the person's approval: say so, or a model concludes the capability does not exist.
            waiting = [c for c in self._registry if c.config.approval_required and self._configuration.searches(c.name)]
            unavailable += [
                {"server": c.name, "kind": "all", "diagnostic": refused_disabled(op, c.name, True).diagnostic.to_json()}
                for c in waiting
            ]
        unavailable += [u for u in self._broken() if server is None or u["server"] == server]
        unavailable.sort(key=lambda u: (u["server"], u["kind"]))
        collided = await self._collisions(indexes, op) if kinds.TOOL.group in groups else []
        refused = sorted(
            [*(r for _, _, left_out in outcomes for r in left_out), *collided],
            key=lambda r: (r["server"], kinds.order(r["kind"])),
        )
        hidden = {(r["server"], r["name"]) for r in collided}
        ranked, cut = ranked_query(query)
        model = self._catalogs.model()
        # A model writes whole words: its last word is not a prefix still being typed ("tea" is not "team").
        words = ranked + " " if for_model and ranked and not ranked[-1].isspace() else ranked
        encoder = self._catalogs.encodings.encoder()
        prompts_last = for_model and kind == "all"
        hits = _ranked_hits(
            indexes,
            words,
            limit,
            hidden,
            prompts_last=prompts_last,
            model=model,
            encoder=encoder,
            rewrite_query=rewrite.enabled_by_environment(),
        )
        active = self._sessions.active(session_id)
        candidates = [candidate(hit, active) for hit in hits]
        await self._add_tokens(hits, candidates)
        result: DiscoverResult = {
            "query": query,
            "kind": kind,
            "session": session_id,
            "candidates": candidates,
            "unavailable": unavailable,
            # Refusals come from the catalogs, keyed by kind (catalog/names.py): dicts until typed there.
            "refused": cast("list[RefusedEntry]", refused),
            "text": discovery_text.render(
                query,
                candidates,
                unavailable,
                refused,
                ranked_chars=len(ranked) if cut else None,
                wording=wording,
                scope=discovery_text.Scope(server, kind, hybrid.is_judged(words)),
            ),
        }
        if cut:
            result["rankedQuery"] = ranked
        return result

    async def _add_tokens(self, hits: list[Hit], candidates: list[Candidate]) -> None:
        """Each tool candidate's token estimate (what activating it adds): its catalog's, in memory or
        kept beside its disk copy, else counted now for the candidates alone (a few definitions, in a
        worker thread; a catalog read with its stored index keeps its other descriptors unparsed).
        None without the tokenizer; the process's first count waits for the counter to load (about
        0.1 s, in a worker thread)."""
        missing: list[tuple[ToolCandidate, dict[str, Any]]] = []
        for hit, found in zip(hits, candidates, strict=True):
            if found["kind"] != "tool":
                continue
            conn = self._registry.get(found["server"])
            catalog = self._catalogs.tools_in_memory(conn) if conn is not None else None
            known = self._catalogs.known_tokens(conn, catalog) if conn is not None and catalog is not None else None
            if known is not None and found["name"] in known:
                found["tokens"] = known[found["name"]]
                continue
            missing.append((found, hit.document.payload))
        counted = await self._catalogs.definition_tokens([payload for _, payload in missing]) if missing else None
        for (found, _), tokens in zip(missing, counted or (), strict=False):
            found["tokens"] = tokens

    def _broken(self) -> list[Unavailable]:
        """Configured but unusable: each invalid definition, and each file whose servers are unknown (`server` "")."""
        rows: list[Unavailable] = [
            {"server": name, "kind": "all", "diagnostic": diag.to_json()}
            for name, diag in self._registry.broken().items()
            if self._configuration.searches(name)
        ]
        rows += [
            {"server": "", "kind": "all", "diagnostic": problem.to_json()}
            for problem in self._registry.problems
            if problem.server is None
        ]
        return rows

    async def _collisions(self, indexes: list[Index], operation: str) -> list[dict[str, Any]]:
        """Refusals of the searched tools whose `mcp__server__tool` name another server's tool has too."""
        servers = self._registry.names()
        # Two readings of one model name need two server names that meet at `__` (`a` and `a__b`):
        # only those servers' tools can collide, so most configurations check no tool at all.
        meeting = {s for s in servers for t in servers if s != t and (t.startswith(s + "__") or s.startswith(t + "__"))}
        if not meeting:
            return []
        searched = {
            (d.server, d.key) for ix in indexes if ix.server in meeting for d in ix.documents if d.kind == "tool"
        }
        models = {f"mcp__{server}__{tool}" for server, tool in searched}
        models = {m for m in models if len(tool_refs(m, servers)) > 1}
        if not models:
            return []
        owners = await self._activation.model_name_owners(sorted(models), operation)
        refused = []
        for tools in owners.values():
            if len(tools) < 2:
                continue
            for ref in tools:
                if (ref.server, ref.tool) in searched:
                    others = [o.id for o in tools if o != ref]
                    refused.append({"server": ref.server, **names.collision(ref.server, ref.tool, others)})
        return refused
