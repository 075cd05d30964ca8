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

from support.expose import searched


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
    argv = ["-m", "mcp_sidecar", "-v", "--log-file", str(home / "gateway.log"), "mcp", *searched(args)]
    if project is not None:
        argv += ["--project", str(project)]
    return StdioServerParameters(command=sys.executable, args=argv, env={**os.environ, "MCP_SIDECAR_HOME": str(home)})


@dataclass
class _Notices:
    """What a test host does with the gateway's notices: counts them, and lists again when it relists."""

    changes: Changes
    relists: bool
    host: Client | None = None
    relisting: set[asyncio.Task[Any]] = field(default_factory=set)

    def tools(self) -> None:
        self.changes.seen()
        if self.relists and self.host is not None:
            task = asyncio.ensure_future(self.host.list_tools())
            self.relisting.add(task)
            task.add_done_callback(self.relisting.discard)

    def prompts(self) -> None:
        if self.changes.prompts is not None:
            self.changes.prompts.seen()

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools()
        if isinstance(message, types.PromptListChangedNotification):
            self.prompts()

    async def pump(self, subscription: Any) -> None:
        async for event in subscription:
            if isinstance(event, types.PromptListChangedNotification):
                self.prompts()
            else:
                self.tools()


@asynccontextmanager
async def gateway(
    home: Path, *args: str, legacy: bool = True, project: Path | None = None, relists: bool = True, **client: Any
) -> AsyncIterator[tuple[Client, Changes]]:
    """A host connected to a gateway over stdio: `legacy` the handshake era, else 2026-07-28 (its
    change notices then come through `subscriptions/listen`, held open in the background).

    `relists`: like Claude Code and Gemini CLI, it lists its tools again on each notice (an
    activation's answer waits for that); without it, like Codex by default, it never does."""
    notices = _Notices(Changes(prompts=Changes()), relists)
    params = gateway_params(home, *args, project=project)
    mode: Any = "legacy" if legacy else "auto"
    async with Client(params, message_handler=notices.handler, read_timeout_seconds=60, mode=mode, **client) as host:
        notices.host = host
        if legacy:
            yield host, notices.changes
            return
        async with host.listen(tools_list_changed=True, prompts_list_changed=True) as sub:
            task = asyncio.create_task(notices.pump(sub))
            try:
                yield host, notices.changes
            finally:
                task.cancel()
                for pending in list(notices.relisting):
                    pending.cancel()


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def tool_names(host: Client) -> list[str]:
    return [t.name for t in (await host.list_tools()).tools]
