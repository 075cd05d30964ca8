"""Starting `mcp-sidecar mcp` as a real subprocess and connecting the SDK's `Client` to it."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters


@dataclass
class Changes:
    """The `tools/list_changed` notices a host received, to wait for the next one."""

    count: int = 0
    event: asyncio.Event = field(default_factory=asyncio.Event)
    prompts: Changes | None = None
    """The `prompts/list_changed` notices, counted the same way."""

    def seen(self) -> None:
        self.count += 1
        self.event.set()

    async def next(self, since: int, timeout: float = 30) -> None:
        """Wait until more than `since` notices arrived."""
        async with asyncio.timeout(timeout):
            while self.count <= since:
                self.event.clear()
                await self.event.wait()


def gateway_params(home: Path, *args: str, project: Path | None = None) -> StdioServerParameters:
    argv = ["-m", "mcp_sidecar", "-v", "--log-file", str(home / "gateway.log"), "mcp", *args]
    if project is not None:
        argv += ["--project", str(project)]
    return StdioServerParameters(command=sys.executable, args=argv, env={**os.environ, "MCP_SIDECAR_HOME": str(home)})


@asynccontextmanager
async def gateway(
    home: Path, *args: str, legacy: bool = True, project: Path | None = None, relists: bool = True, **client: Any
) -> AsyncIterator[tuple[Client, Changes]]:
    """A host connected to a gateway over stdio: `legacy` the handshake era, else 2026-07-28 (its
    change notices then come through `subscriptions/listen`, held open in the background).

    `relists`: like Claude Code and Gemini CLI, it lists its tools again on each notice (an
    activation's answer waits for that); without it, like Codex by default, it never does."""
    changes = Changes(prompts=Changes())
    holder: list[Client] = []
    relisting: set[asyncio.Task[Any]] = set()

    def seen() -> None:
        changes.seen()
        if relists and holder:
            task = asyncio.ensure_future(holder[0].list_tools())
            relisting.add(task)
            task.add_done_callback(relisting.discard)

    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            seen()
        if isinstance(message, types.PromptListChangedNotification) and changes.prompts is not None:
            changes.prompts.seen()

    params = gateway_params(home, *args, project=project)
    mode: Any = "legacy" if legacy else "auto"
    async with Client(params, message_handler=handler, read_timeout_seconds=60, mode=mode, **client) as host:
        holder.append(host)
        if legacy:
            yield host, changes
            return
        async with host.listen(tools_list_changed=True, prompts_list_changed=True) as sub:

            async def pump() -> None:
                async for event in sub:
                    if isinstance(event, types.PromptListChangedNotification) and changes.prompts is not None:
                        changes.prompts.seen()
                    else:
                        seen()

            task = asyncio.create_task(pump())
            try:
                yield host, changes
            finally:
                task.cancel()
                for pending in list(relisting):
                    pending.cancel()


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def tool_names(host: Client) -> list[str]:
    return [t.name for t in (await host.list_tools()).tools]
