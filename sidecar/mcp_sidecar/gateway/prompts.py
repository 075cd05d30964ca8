"""The gateway's prompts: every enabled server's prompts as `<server>__<prompt>`, for a host's commands.

`prompts/list` never waits for servers to start: until the gateway has listed them for real in
this process, it answers what it listed last time (`prompt_snapshot.py`), or nothing, and lists
them in the background; when that differs from what it answered, every host is told
`prompts/list_changed`. From then on it lists them as before (the servers' prompt catalogs,
five minutes in memory). `prompts/get` goes through the same checks and sanitising as a prompt
preview: a host turns prompts into commands a person chooses.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS

from mcp_sidecar import tasks
from mcp_sidecar.gateway import entries, native
from mcp_sidecar.operations.table import PROMPT_PREVIEW, PROMPT_USE
from mcp_sidecar.protocol.params import PreviewIdParams, PromptPreviewParams

if TYPE_CHECKING:
    from mcp_sidecar.gateway.prompt_snapshot import PromptSnapshot
    from mcp_sidecar.operations.row import Run
    from mcp_sidecar.services.prompts import Prompts as PromptFeature

log = logging.getLogger(__name__)


class Prompts:
    def __init__(self, prompts: PromptFeature, run: Run, snapshot: PromptSnapshot, changed: Callable[[], None]) -> None:
        """`prompts`: the servers' prompts; `run`: runs a row of the operation table (a preview and its use,
        as `mcp/prompt/preview` and `mcp/prompt/use` do); `changed`: tells every host its prompts changed."""
        self._prompts = prompts
        self._run = run
        self._snapshot = snapshot
        self._changed = changed
        self.names: dict[str, tuple[str, str]] = {}
        """Native prompt name → (server, prompt), as last listed for real."""
        self.news = False
        """The real list differed from the snapshot the gateway answered with first."""
        self._refresh: asyncio.Task[None] | None = None

    async def listed(self, version: str) -> list[dict[str, Any]]:
        """The prompts for a host speaking `version`."""
        if self._refresh is None or not self._refresh.done():
            self.refresh_soon()
            return self._snapshot.listed(version in MODERN_PROTOCOL_VERSIONS)
        return await self._list(version)

    def refresh_soon(self) -> None:
        """List them for real once, in the background (the servers start for it, off every host's path)."""
        if self._refresh is None:
            self._refresh = tasks.spawn(self._refreshed(), "gateway-prompts")

    async def _refreshed(self) -> None:
        news = False
        for version in (LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION):
            before = self._snapshot.listed(version in MODERN_PROTOCOL_VERSIONS)
            listed = await self._list(version)
            news = news or listed != before
        if news:
            self.news = True
            self._changed()

    async def _list(self, version: str) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = []
        names: dict[str, tuple[str, str]] = {}
        for server, items in await self._prompts.enabled_prompts("gateway"):
            for p in items:
                name = native.native_name(server, p["name"], names)
                entry = entries.prompt_entry(name, server, p, version)
                if entry is not None:
                    names[name] = (server, p["name"])
                    listed.append(entry)
        self.names = names
        self._snapshot.save("modern" if version in MODERN_PROTOCOL_VERSIONS else "handshake", listed)
        return listed

    async def target(self, name: str, version: str) -> tuple[str, str] | None:
        """(server, prompt) of a listed name; the prompts are listed for real first when it is unknown."""
        if name not in self.names:
            await self._list(version)
        return self.names.get(name)

    def command(self, server: str, name: str) -> str:
        """How a person runs a server's prompt beside this host."""
        listed = next((n for n, target in self.names.items() if target == (server, name)), None)
        return f"{listed or native.native_name(server, name, set())} from this host's prompts"

    async def get(self, server: str, name: str, arguments: dict[str, Any], session: str) -> dict[str, Any]:
        """`prompts/get`: the labelled snapshot, as one user message (a server's "assistant" turn is data
        for the model to read, never words put in its mouth). Raises SidecarError."""
        previewed = await self._run(PROMPT_PREVIEW, PromptPreviewParams(server, name, arguments, session))
        used = await self._run(PROMPT_USE, PreviewIdParams(previewed["previewId"]))
        out: dict[str, Any] = {"messages": [{"role": "user", "content": {"type": "text", "text": used["text"]}}]}
        if used.get("description"):
            out["description"] = used["description"]
        return out
