"""A stand-in for `Connection` in service unit tests: no process, no SDK, events on demand.

It implements `ServerConnection` (what the services use; mypy checks it, with no cast); tests
drive its state with `set_state`
(which publishes `StatusChanged` as the real one does) and announce server notifications with
`announce`. The end-to-end suites cover the real Connection against real servers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.connections.content_requests import ContentAnswer, ProgressSink, ToolAnswer
from mcp_sidecar.connections.listing import Listings
from mcp_sidecar.connections.protocol import ServerConnection, State
from mcp_sidecar.connections.stderr_log import StderrLog
from mcp_sidecar.events import ConnectionEvent, StatusChanged
from mcp_sidecar.protocol.errors import Diagnostic
from mcp_sidecar.protocol.results import Icon


@dataclass
class FakeHooks:
    offer: ClientOffer = field(default_factory=ClientOffer)
    """What the current session was offered."""


class FakeConnection:
    def __init__(
        self,
        config: ServerConfig,
        workspace: Path,
        publish: Callable[[ConnectionEvent], None],
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.workspace = workspace
        self.environ: Mapping[str, str] = environ if environ is not None else {}
        self.publish = publish
        self.state: State = "disabled" if config.disabled else "idle"
        self.last_diagnostic: Diagnostic | None = None
        self.protocol_version: str | None = None
        self.capabilities: frozenset[str] = frozenset()
        self.server_icons: list[Icon] = []
        self.generation = 0
        self.stale_kinds: set[str] = set()
        self.tools_stale = False
        self.listening = True
        self.log = StderrLog()
        self.hooks = FakeHooks()
        self.lists = Listings(config.name)
        """Only its `hints` are used: tests set what a server's lists said about caching."""
        self.auth_state = "none"
        self.tools: list[dict[str, Any]] = []
        self.prompts: list[dict[str, Any]] = []
        self.prompt_messages: list[dict[str, Any]] = [{"role": "user", "content": {"type": "text", "text": "hi"}}]
        self.subscribed: list[str] = []
        self.closed = 0

    @property
    def real(self) -> ServerConnection:
        """Typed as what the services expect: mypy checks here that this class is a `ServerConnection`."""
        return self

    def set_state(self, state: State) -> None:
        if state == "connected" and self.state != "connected":
            self.generation += 1
        self.state = state
        self.publish(StatusChanged(self.real))

    def offered(self) -> dict[str, Any]:
        return {}

    def secrets_used(self, values: Iterable[str]) -> None:
        pass

    def announce(self, event: ConnectionEvent) -> None:
        self.publish(event)

    async def connect(self, operation: str) -> None:
        if self.state != "connected":
            self.set_state("connected")

    async def list_tools(self, operation: str) -> list[dict[str, Any]]:
        await self.connect(operation)
        return list(self.tools)

    async def list_resources(self, operation: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        await self.connect(operation)
        return [], []

    async def list_prompts(self, operation: str) -> list[dict[str, Any]]:
        await self.connect(operation)
        return list(self.prompts)

    async def get_prompt(self, name: str, arguments: dict[str, str], operation: str) -> ContentAnswer:
        return ContentAnswer({"messages": self.prompt_messages})

    async def subscribe_resource(self, uri: str, operation: str) -> int:
        await self.connect(operation)
        self.subscribed.append(uri)
        return self.generation

    async def unsubscribe_resource(self, uri: str, operation: str) -> None:
        self.subscribed.remove(uri)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], operation: str, progress: ProgressSink | None = None
    ) -> ToolAnswer:
        raise NotImplementedError("the fake connection calls no tool; the end-to-end suites do")

    async def read_resource(self, uri: str, operation: str) -> ContentAnswer:
        raise NotImplementedError("the fake connection reads no resource; the end-to-end suites do")

    async def complete(
        self,
        reference: tuple[Literal["template", "prompt"], str],
        argument: tuple[str, str],
        context: dict[str, str],
        operation: str,
    ) -> ContentAnswer:
        raise NotImplementedError("the fake connection completes nothing; the end-to-end suites do")

    async def roots_changed(self) -> None:
        pass

    async def close(self, state: State | None = None, diag: Diagnostic | None = None) -> None:
        self.closed += 1
        self.set_state(state or ("disabled" if self.config.disabled else "idle"))


class FakeFactory:
    """Builds FakeConnections and remembers each, in order."""

    def __init__(self) -> None:
        self.built: list[FakeConnection] = []

    def __call__(
        self,
        config: ServerConfig,
        workspace: Path,
        publish: Callable[[ConnectionEvent], None],
        environ: Mapping[str, str],
    ) -> ServerConnection:
        fake = FakeConnection(config, workspace, publish, environ)
        self.built.append(fake)
        return fake

    def current(self, name: str) -> FakeConnection:
        return next(f for f in reversed(self.built) if f.name == name)
