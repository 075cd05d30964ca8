"""What a request helper sees of one live session, instead of the whole Connection.

Content, watch and listing requests need the client, the server's advertised capabilities
and a way to turn a failure into a diagnostic that closes the session when it is unusable.
They get exactly that, taken when the request started: a request that outlives its session
still reports against the session it ran on, never against a successor.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp_sidecar.connections.sdk_streams import cancelled_by_caller
from mcp_sidecar.output.redact import Redactor
from mcp_sidecar.protocol.errors import DiagnosticCode, SidecarError, fail

if TYPE_CHECKING:
    from mcp import Client

    from mcp_sidecar.connections.client_hooks import ClientHooks
    from mcp_sidecar.connections.questions import CallQuestions
    from mcp_sidecar.connections.watch_stream import WatchStream

ErrorCodes = dict[int, tuple[DiagnosticCode, str]]
"""A server's JSON-RPC error numbers that mean a diagnostic of their own: code -> (diagnostic, message)."""
FailureHandler = Callable[[BaseException, str, "asyncio.Task[None] | None"], Awaitable[SidecarError]]
"""The connection's classifier: closes the session when the failure leaves it unusable."""


@dataclass(frozen=True, slots=True, eq=False)
class LiveSession:
    server: str
    client: Client
    owner: asyncio.Task[None] | None
    """The owner task that entered `client`; the session is current while it is the connection's owner."""
    generation: int
    protocol_version: str | None
    capabilities: frozenset[str]
    """What the server advertised: resources, subscribe, completions, prompts, tools."""
    watches: WatchStream
    on_failure: FailureHandler
    owner_now: Callable[[], asyncio.Task[None] | None]
    """The connection's owner task at this moment (None once closed)."""
    hooks: ClientHooks | None = None
    """The connection's answers to its server: its questions pause call time limits."""
    redaction: Redactor = field(default_factory=Redactor)
    """The values this connection gave its server (and OAuth tokens it sends), replaced in its answers."""
    tool_tasks: dict[str, str] = field(default_factory=dict)
    """Each tool's `execution.taskSupport` (`optional`, `required`) as last listed on this session;
    a tool missing here is called without a task (`task_calls.py`)."""

    def in_flight(self, questions: CallQuestions | None = None) -> contextlib.AbstractContextManager[None]:
        """While one of our requests runs on the server, it may ask the person (see ClientHooks), within
        its limits; `questions` counts what it asked meanwhile."""
        return self.hooks.request_in_flight(questions) if self.hooks is not None else contextlib.nullcontext()

    def is_current(self) -> bool:
        return self.owner is self.owner_now()

    async def failed(self, exc: BaseException, operation: str) -> SidecarError:
        return await self.on_failure(exc, operation, self.owner)

    async def mapped_failure(self, exc: BaseException, operation: str, codes: ErrorCodes) -> SidecarError:
        """A server's JSON-RPC error in `codes` becomes that diagnostic; anything else is classified.

        The caller's own cancellation is re-raised as it is; any other cancellation means the
        connection was torn down under the request.
        """
        from mcp import MCPError

        if isinstance(exc, asyncio.CancelledError) and cancelled_by_caller():
            raise exc

        if isinstance(exc, MCPError) and exc.code in codes:
            code, message = codes[exc.code]
            return fail(code, operation, message, self.server)
        if isinstance(exc, asyncio.CancelledError):
            # The SDK can cancel a waiter whose connection is torn down under it (seen on HTTP).
            exc = ConnectionError()
        return await self.failed(exc, operation)


__all__ = ["FailureHandler", "LiveSession"]
