"""`ServerConnection`: what the services, the gateway and the registry use of one server's connection.

`Connection` (`connection.py`) is the one implementation that runs; service unit tests use a
fake (`tests/support/fake_connection.py`) that satisfies the same protocol, checked by mypy.
Everything here is read-only to its users: only the connection changes its own state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from mcp_sidecar.config.model import ServerConfig
    from mcp_sidecar.connections.client_hooks import ClientOffer
    from mcp_sidecar.connections.content_requests import ContentAnswer, ProgressSink, ToolAnswer
    from mcp_sidecar.connections.listing import Listings
    from mcp_sidecar.connections.stderr_log import StderrLog
    from mcp_sidecar.protocol.errors import Diagnostic
    from mcp_sidecar.protocol.results import Icon

State = Literal["idle", "connecting", "connected", "disabled", "failed", "needs_login"]


class Offered(Protocol):
    """A connection's client hooks, as far as services look at them."""

    @property
    def offer(self) -> ClientOffer:
        """What the current session was offered."""
        ...


class ServerConnection(Protocol):
    # -- what it is and where it stands --------------------------------------------------------

    @property
    def name(self) -> str: ...
    @property
    def config(self) -> ServerConfig: ...
    @property
    def workspace(self) -> Path | None:
        """Where the server and its secret commands run: the workspace only when it is trusted."""
        ...

    @property
    def environ(self) -> Mapping[str, str]:
        """The client environment its definition resolves in (`${VAR}`, secret commands, what the server
        inherits): the first client's; every client sharing it resolves the same."""
        ...

    @property
    def state(self) -> State: ...
    @property
    def generation(self) -> int:
        """Increments on every new connection, so catalogs can tell which connection made them."""
        ...

    @property
    def last_diagnostic(self) -> Diagnostic | None: ...

    # -- what its server said ------------------------------------------------------------------

    @property
    def protocol_version(self) -> str | None: ...
    @property
    def capabilities(self) -> frozenset[str]: ...
    @property
    def server_icons(self) -> list[Icon]: ...
    @property
    def log(self) -> StderrLog: ...
    @property
    def lists(self) -> Listings: ...
    @property
    def tools_stale(self) -> bool:
        """A tools/list_changed arrived: the next listing must go to the server."""
        ...

    @property
    def stale_kinds(self) -> AbstractSet[str]:
        """Resource or prompt lists to fetch again before trusting a memory copy."""
        ...

    @property
    def listening(self) -> bool:
        """Change notifications can arrive (always on handshake-era sessions)."""
        ...

    @property
    def hooks(self) -> Offered: ...

    def offered(self) -> dict[str, Any]: ...
    def secrets_used(self, values: Iterable[str]) -> None: ...

    # -- requests ------------------------------------------------------------------------------

    async def list_tools(self, operation: str) -> list[dict[str, Any]]: ...
    async def list_resources(self, operation: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...
    async def list_prompts(self, operation: str) -> list[dict[str, Any]]: ...
    async def call_tool(
        self, name: str, arguments: dict[str, Any], operation: str, progress: ProgressSink | None = None
    ) -> ToolAnswer: ...
    async def read_resource(self, uri: str, operation: str) -> ContentAnswer: ...
    async def get_prompt(self, name: str, arguments: dict[str, str], operation: str) -> ContentAnswer: ...
    async def complete(
        self,
        reference: tuple[Literal["template", "prompt"], str],
        argument: tuple[str, str],
        context: dict[str, str],
        operation: str,
    ) -> ContentAnswer: ...
    async def subscribe_resource(self, uri: str, operation: str) -> int: ...
    async def unsubscribe_resource(self, uri: str, operation: str) -> None: ...
    async def roots_changed(self) -> None: ...
    async def close(self, state: State | None = None, diag: Diagnostic | None = None) -> None: ...
