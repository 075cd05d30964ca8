"""`--expose auto|search|all`: whether a gateway's hosts list every tool of its servers from the start.

`auto` (the default) lists every tool of the enabled servers (the profile's, with `--profile`) natively,
beside `mcp_tools`, while they cost the model at most `--expose-budget` tokens together
(`services/exposure.py`), and leaves them to the search above it; `all` always lists them, `search` never.
The cost is measured again whenever it may have moved: a configuration reload (a server added, removed,
redefined), a profile change, a server's `list_changed`, a catalog fetched or counted. When what the hosts
list changes, each host that listed its tools is told (`tools/list_changed`); when the rule's answer flips,
one log line says why (the totals before and after, what changed, the budget).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from mcp_sidecar import tasks
from mcp_sidecar.catalog.context_budget import DEFAULT_BUDGET, ExposeMode
from mcp_sidecar.events import CatalogInvalidated, ProfileChanged, Reconciled, RowMayHaveChanged
from mcp_sidecar.services.exposure import Measure, lists_all, what_changed

if TYPE_CHECKING:
    from mcp_sidecar.gateway.hosts import Hosts
    from mcp_sidecar.services.app import Sidecar

log = logging.getLogger(__name__)

Exposed = dict[str, tuple[str, dict[str, Any], str]]
"""Tool id → (server, descriptor, canonical text) of the tools listed because every tool is."""


class Exposing:
    """One gateway's rule, for all its hosts (they share its servers and its profile)."""

    def __init__(self, app: Sidecar, hosts: Hosts, mode: ExposeMode = "search", budget: int = DEFAULT_BUDGET) -> None:
        self._app = app
        self._hosts = hosts
        self.mode = mode
        self.budget = budget
        self.measure: Measure | None = None
        """The last measure (None before the first, and always with `search`)."""
        self.every = False
        """Whether every tool is listed now."""
        self._tools: Exposed = {}
        """The tools listed because every tool is, as the last measure found them (a catalog fetched since is
        listed once measured: what the hosts list is always what was counted)."""
        self._dirty = False
        self._running: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._started = False
        self._last: dict[str, str] = {}
        """What the last measure listed (id → canonical text): hosts are told only when it changes."""
        if mode == "search":
            self._ready.set()

    def start(self) -> None:
        """Measure now, and again whenever the cost may have moved (once: later calls do nothing)."""
        if self._started or self.mode == "search":
            return
        self._started = True
        hub = self._app.hub
        hub.subscribe(Reconciled, lambda event: self.soon())
        hub.subscribe(ProfileChanged, lambda event: self.soon())
        hub.subscribe(CatalogInvalidated, lambda event: self.soon() if event.kind == "tools" else None)
        hub.subscribe(RowMayHaveChanged, lambda event: self.soon())
        self.soon()

    def soon(self) -> None:
        """Measure again in the background; measures are never run two at once (the last request wins)."""
        self._dirty = True
        if self._running is None or self._running.done():
            self._running = tasks.spawn(self._run(), "gateway-expose")

    async def ready(self, within_s: float) -> None:
        """Wait (a while) for the first measure, so a host's first `tools/list` follows the rule."""
        if not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), within_s)
            except TimeoutError:
                log.warning(
                    "gateway --expose %s: not measured within %.0f s: searched until it is", self.mode, within_s
                )

    async def _run(self) -> None:
        while self._dirty:
            self._dirty = False
            await self._evaluate()

    async def _evaluate(self) -> None:
        measured = await self._app.exposure.measure()
        every = lists_all(self.mode, measured.tokens, self.budget)
        before, was = self.measure, self.every
        self.measure, self.every = measured, every
        found = self._app.exposure.tools() if every else []
        self._tools = {f"{server}.{d['name']}": (server, d, canonical) for server, d, canonical in found}
        if before is None:
            log.info("gateway --expose %s: %s", self.mode, self._describe(measured, every))
        elif was != every:
            log.info(
                "gateway --expose %s: %s → %s tokens (%s): %s; hosts told their tools changed",
                self.mode,
                f"{before.tokens:,}",
                f"{measured.tokens:,}",
                what_changed(before, measured),
                self._describe(measured, every),
            )
        self._ready.set()
        now = _key(self._tools)
        if now == self._last:
            return
        self._last = now
        for host in self._hosts:
            if host.listings and _key(host.exposed) != now:
                self._hosts.tell(host)

    def _describe(self, measured: Measure, every: bool) -> str:
        counted = f"{measured.tools} tools of {len(measured.servers)} servers cost {measured.tokens:,} tokens"
        by = f"counted by {measured.counted_by}"
        missing = f", {', '.join(measured.unavailable)} unavailable" if measured.unavailable else ""
        if self.mode == "all":
            return f"{counted} ({by}{missing}): every tool listed natively (--expose all)"
        verdict = "within" if every else "over"
        then = "every tool listed natively" if every else "tools found with mcp_tools query"
        return f"{counted} ({by}{missing}), {verdict} the budget of {self.budget:,}: {then}"

    def tools(self) -> Exposed:
        """The tools every host lists now because every tool is (none when they are searched)."""
        return dict(self._tools)


def _key(exposed: Exposed) -> dict[str, str]:
    return {tool_id: canonical for tool_id, (_, _, canonical) in exposed.items()}
