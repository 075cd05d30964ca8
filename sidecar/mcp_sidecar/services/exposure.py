"""What the tools of a client's servers would cost its model, against a budget: list them all, or search.

Issue 34's rule for hosts and chat tools: when every tool of the enabled servers (the profile's, with
`--profile`) costs little, a model is better served by having them all from the start than by a search
step; above the budget, the search keeps the context small. The cost is the sum of each server's visible
tools' estimates (`catalog/token_count.py`, docs/context.md); without the tokenizer, a tool's definition
counts one token per four characters of its compact JSON (`FALLBACK`). Servers whose catalog cannot be
had (failed, waiting for a login) cost nothing: nothing of theirs can be listed either.

Nothing here tells anyone: the gateway (`gateway/exposure.py`) decides when to measure and whom to tell.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_sidecar.catalog import token_count
from mcp_sidecar.protocol.errors import SidecarError

if TYPE_CHECKING:
    from mcp_sidecar.catalog.context_budget import ExposeMode
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.services.catalogs import Catalogs
    from mcp_sidecar.services.configuration import Configuration

FALLBACK = "characters/4"
"""How a definition is counted without the tokenizer: its compact JSON's characters, divided by 4."""
OPERATION = "expose"


@dataclass(frozen=True, slots=True)
class ServerCost:
    server: str
    tools: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Measure:
    """The visible tools of the counted servers, together, and how they were counted."""

    servers: tuple[ServerCost, ...]
    unavailable: tuple[str, ...]
    """Servers counted as nothing: their catalog could not be had."""
    counted_by: str
    """`token_count.TOKENIZER`, or `FALLBACK` when a catalog was counted without the tokenizer."""

    @property
    def tokens(self) -> int:
        return sum(cost.tokens for cost in self.servers)

    @property
    def tools(self) -> int:
        return sum(cost.tools for cost in self.servers)

    def cost_of(self, server: str) -> ServerCost | None:
        return next((cost for cost in self.servers if cost.server == server), None)


def fallback_tokens(descriptor: dict[str, Any]) -> int:
    """A definition's estimate without the tokenizer: characters of its compact JSON / 4, rounded up."""
    return math.ceil(len(token_count.definition_text(descriptor)) / 4)


def lists_all(mode: ExposeMode, tokens: int, budget: int) -> bool:
    """Whether every tool is listed: always (`all`), never (`search`), or when they cost at most `budget`."""
    return mode == "all" or (mode == "auto" and tokens <= budget)


def what_changed(before: Measure, after: Measure) -> str:
    """Why a total moved, in a few words: the servers that came, went, or whose tools changed."""
    parts: list[str] = []
    for cost in after.servers:
        old = before.cost_of(cost.server)
        if old is None:
            parts.append(f"{cost.server} added ({cost.tools} tools, {cost.tokens:,} tokens)")
        elif old.tokens != cost.tokens or old.tools != cost.tools:
            parts.append(f"{cost.server} now {cost.tools} tools ({cost.tokens - old.tokens:+,} tokens)")
    parts += [f"{cost.server} gone" for cost in before.servers if after.cost_of(cost.server) is None]
    return "; ".join(parts) or "no server changed"


class ToolExposure:
    """Measures a client's searched servers' tools (fetching a catalog not cached, counting one not counted)."""

    def __init__(self, configuration: Configuration, registry: ServerRegistry, catalogs: Catalogs) -> None:
        self._configuration = configuration
        self._registry = registry
        self._catalogs = catalogs
        self.chat_budget: int | None = None
        """The client's chat tools' budget (`initializationOptions.chatExposeBudget`): while every tool costs at
        most that, its `mcp_call` calls any tool without an activation. None (the default): never."""

    def counted(self) -> list[ServerConnection]:
        """The servers whose tools count: enabled, and searched by the client's profile."""
        self._configuration.ensure_loaded()
        return [c for c in self._registry if not c.config.disabled and self._configuration.searches(c.name)]

    async def measure(self) -> Measure:
        """Every counted server's visible tools and their estimate (catalogs fetched in parallel, within
        the discovery slots)."""
        conns = self.counted()
        found = await asyncio.gather(*(self._cost(conn) for conn in conns))
        costs = tuple(cost for cost, _ in found if cost is not None)
        unavailable = tuple(conn.name for conn, (cost, _) in zip(conns, found, strict=True) if cost is None)
        fallback = any(by_fallback for cost, by_fallback in found if cost is not None)
        return Measure(costs, unavailable, FALLBACK if fallback else token_count.TOKENIZER)

    async def _cost(self, conn: ServerConnection) -> tuple[ServerCost | None, bool]:
        try:
            catalog = await self._catalogs.tool_catalog(conn, OPERATION)
        except SidecarError:
            return None, False
        visible = catalog.visible(conn.config)
        tokens = await self._catalogs.tool_tokens(conn, catalog)
        if tokens is not None:
            return ServerCost(conn.name, len(visible), sum(tokens.get(name, 0) for name in visible)), False
        return ServerCost(conn.name, len(visible), sum(fallback_tokens(d) for d in visible.values())), True

    async def chat_within(self) -> Measure | None:
        """The measure when the client set a chat budget and every tool of the counted servers costs at most
        that (its chat's `mcp_call` then calls any of them without an activation), else None."""
        if self.chat_budget is None:
            return None
        measured = await self.measure()
        return measured if lists_all("auto", measured.tokens, self.chat_budget) else None

    def tools(self) -> list[tuple[str, dict[str, Any], str]]:
        """(server, descriptor, canonical text) of every visible tool of the counted servers whose catalog is
        at hand (memory or disk; nothing is fetched), in server then catalog order."""
        listed: list[tuple[str, dict[str, Any], str]] = []
        for conn in self.counted():
            catalog = self._catalogs.cached_tools(conn)
            if catalog is None:
                continue
            listed += [(conn.name, d, catalog.canonical_of(d)) for d in catalog.visible(conn.config).values()]
        return listed
