"""One MCP server connection, owned by exactly one task.

The SDK's `Client` is an anyio task group that must be entered and left in the same task,
so an owner task enters it, publishes the client, and waits until asked to stop. Request
handlers (other tasks) call the published client; they never enter SDK context managers.
Connecting is bounded by the server's timeout by cancelling the owner task, which also
avoids the SDK's fixed 10 s discovery probe when a server never answers.

What happens to the connection is published as typed events (`mcp_sidecar.events`); request
helpers get a `LiveSession`, never the connection itself. The services' half, their requests and
what the server says, is `ConnectionSurface` (connection_surface.py); this is the owner task,
connecting with its backoff, and the lifecycle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_sidecar import __version__, tasks
from mcp_sidecar.config.interpolate import ResolvedServer
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections import listing, stdio, transports
from mcp_sidecar.connections.client_hooks import ClientHooks, ClientSide, offering_client
from mcp_sidecar.connections.connection_surface import ConnectionSurface
from mcp_sidecar.connections.errors import FailureContext, classify
from mcp_sidecar.connections.launch import Launch, process_environment, resolve_server
from mcp_sidecar.connections.live_session import LiveSession
from mcp_sidecar.connections.protocol import State
from mcp_sidecar.connections.sdk_streams import (
    cancelled_by_caller,
    capabilities_of,
    is_modern,
    load_sdk,
    server_icons_of,
    watched,
)
from mcp_sidecar.connections.stderr_log import StderrLog
from mcp_sidecar.connections.watch_stream import WatchStream
from mcp_sidecar.events import ConnectionEvent, StatusChanged
from mcp_sidecar.output.redact import RESULT_MIN_CHARS, Redactor
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, fail, refused_disabled

if TYPE_CHECKING:
    from mcp import Client

    from mcp_sidecar.protocol.results import Icon

log = logging.getLogger(__name__)

ENDED: tuple[State, ...] = ("failed", "needs_login")
"""States of a connection attempt that did not work: `needs_login` when the server asked for
authentication (`authentication_required`, which a login fixes), `failed` otherwise."""

RETRY_FREE_FAILURES = 1
"""Failed connection attempts retried at once by the next request; later ones back off."""
RETRY_FIRST_DELAY_S = 1.0
RETRY_MAX_DELAY_S = 30.0
RETRY_STABLE_S = 10.0
"""A connection lost within this time of connecting counts as a failed attempt (a crash loop)."""

CONNECT_ROUNDS = 3
"""How often one caller waits for a connection that came up and went before it could use it."""


class Connection(ConnectionSurface):
    def __init__(
        self,
        config: ServerConfig,
        workspace: Path | None,
        publish: Callable[[ConnectionEvent], None],
        http_auth: Callable[[Connection], Awaitable[tuple[Any, str]]] | None = None,
        client_side: ClientSide | None = None,
        *,
        environ: Mapping[str, str],
    ) -> None:
        self.config = config
        self.name = config.name
        self.workspace = workspace
        """Where the server and its secret commands run: the workspace only when it is trusted."""
        self.environ = environ
        """The environment of the client it was made for: `${VAR}`, secret commands and what the server
        inherits. Every client sharing it resolves the same (the sharing key covers all of it)."""
        self.state: State = "disabled" if config.disabled else "idle"
        self.last_diagnostic: Diagnostic | None = (
            refused_disabled("configuration", self.name, True).diagnostic if config.approval_required else None
        )
        self.protocol_version: str | None = None
        self.connected_at: float | None = None
        self.log = StderrLog()
        self.redaction = Redactor()
        """What the current connection attempt gave its server: replaced in everything it answers."""
        self.hooks = ClientHooks(
            self.name,
            client_side or ClientSide(),
            self.log,
            self._logged,
            log_level=config.log_level,
            roots_enabled=config.roots,
        )
        """Elicitation, sampling, roots and logging: what the server may ask of its client."""
        self._publish = publish
        self._http_auth = http_auth
        """OAuth for HTTP servers: the stored-token provider (or None) and the store's state."""
        self.auth_state = "none"
        self.capabilities: frozenset[str] = frozenset()
        self.server_icons: list[Icon] = []
        """The server's `serverInfo.icons` that may reach an editor (catalog/icons.py), from its last session."""
        """What the server advertised on the current connection: resources, subscribe, completions, prompts."""
        self._watches = WatchStream(self.name, self._resource_updated, self._watches_lost, self._is_closing)
        """Modern sessions: the `subscriptions/listen` stream carrying the watched URIs."""
        self._session: LiveSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self._closing = False
        self._seen = transports.Observations()
        self.tools_stale = False
        """Set by a tools/list_changed notification; the next listing must go to the server."""
        self._listed_early: set[str] = set()
        """Kinds listed on a modern session before its change stream was acknowledged."""
        self.stale_kinds: set[str] = set()
        """Resource or prompt lists to fetch again before trusting a memory copy."""
        self.listening = False
        """True while change notifications can arrive (always on handshake-era sessions)."""
        self.generation = 0
        """Increments on every new connection, so catalogs can tell which connection made them."""
        self.lists = listing.Listings(self.name)
        """List requests in flight, and the change notices that overtake them."""
        self._failed_attempts = 0
        """Connection attempts failed in a row; past RETRY_FREE_FAILURES, requests wait for `_retry_at`."""
        self._retry_at = 0.0

    # -- state -------------------------------------------------------------------------------

    def _set_state(self, state: State, diag: Diagnostic | None = None) -> None:
        if state == "failed" and diag is not None and diag.code == "authentication_required" and self._oauth:
            state = "needs_login"
        if state in ENDED and self.state in ("connecting", "connected"):
            self._count_failure()
        changed = state != self.state or diag != self.last_diagnostic
        self.state = state
        if diag is None and state == "disabled" and self.config.approval_required:
            pass  # its `trust_required` stays until the definition is approved (a new connection)
        elif diag is not None or state in ("connected", "idle", "disabled"):
            self.last_diagnostic = diag
        if changed:
            self._publish(StatusChanged(self))

    @property
    def _oauth(self) -> bool:
        """An HTTP server without an Authorization header: a login is what authenticates it."""
        config = self.config
        return config.transport == "http" and not any(k.lower() == "authorization" for k in config.headers)

    def _count_failure(self) -> None:
        """An attempt that failed, or a connection lost soon after it was made, delays the next one."""
        if self.state == "connected" and time.time() - (self.connected_at or 0) >= RETRY_STABLE_S:
            self._failed_attempts = 0  # it worked for a while: this is a new failure, not a loop
            return
        self._failed_attempts += 1
        backoff = self._failed_attempts - RETRY_FREE_FAILURES
        delay = min(RETRY_MAX_DELAY_S, RETRY_FIRST_DELAY_S * 2 ** (backoff - 1)) if backoff > 0 else 0.0
        self._retry_at = time.monotonic() + delay

    def _ctx(self, operation: str, connecting: bool = False) -> FailureContext:
        seen = self._seen
        return FailureContext(
            operation=operation,
            server=self.name,
            http_status=seen.http_status,
            http_not_mcp=seen.http_not_mcp,
            http_too_large=seen.http_too_large,
            garbage_lines=seen.garbage_lines,
            auth_state=self.auth_state,
            connecting=connecting,
            step_up_scope=seen.step_up_scope,
        )

    def _is_closing(self) -> bool:
        return self._closing

    def _current_owner(self) -> asyncio.Task[None] | None:
        return self._owner

    # -- connecting --------------------------------------------------------------------------

    async def connect(self, operation: str) -> Client:
        """Return a live client, connecting first if needed; concurrent callers share one attempt."""
        return (await self._live(operation)).client

    async def _live(self, operation: str) -> LiveSession:
        """The live session, connecting first if needed; concurrent callers share one attempt."""
        for _ in range(CONNECT_ROUNDS):
            if self.config.disabled:
                raise refused_disabled(operation, self.name, self.config.approval_required)
            if self._session is not None and self.state == "connected":
                return self._session
            self._check_backoff(operation)
            if self._ready is None or self._ready.done():
                self._start_owner(operation)
            assert self._ready is not None
            try:
                # shield: one caller's cancellation must not abort the attempt other callers share.
                await asyncio.shield(self._ready)
            except asyncio.CancelledError:
                if cancelled_by_caller():
                    raise
                raise fail(
                    "cancelled", operation, "The connection attempt was stopped by a reconnect or shutdown.", self.name
                ) from None
            if self._session is not None:
                return self._session
            # It connected, then went before this caller resumed (a server dying right after its
            # handshake, a session replaced): go round again as a caller arriving now would, which
            # meets the backoff of a failure or joins the attempt under way.
        diag = self.last_diagnostic
        if diag is not None:
            raise fail(diag.code, operation, diag.message, self.name)
        raise fail("connection_failed", operation, "The server closed the connection after connecting.", self.name)

    def _start_owner(self, operation: str) -> None:
        self._stop = asyncio.Event()
        self._ready = asyncio.get_running_loop().create_future()
        self._seen.reset()
        self._set_state("connecting")
        self._owner = tasks.spawn(self._own(operation, self._ready, self._stop), f"mcp-connection:{self.name}")

    async def _bound_connect(self, owner: asyncio.Task[None], ready: asyncio.Future[None], operation: str) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.request_timeout_s)
        except TimeoutError:
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
            if not ready.done():
                error = classify(TimeoutError(), self._ctx(operation, connecting=True))
                self._fail_ready(ready, error)
        except BaseException:
            return  # the attempt failed on its own; _own reported it

    def _check_backoff(self, operation: str) -> None:
        """A server failing to connect again and again is not restarted by every request.

        Editors ask on every keystroke (discovery) and scripts in loops; without a pause each
        request would start another doomed process. An explicit reconnect or reload retries at once.
        """
        if self.state not in ENDED or self._failed_attempts <= RETRY_FREE_FAILURES or self.last_diagnostic is None:
            return
        if time.monotonic() < self._retry_at:
            # The same diagnostic as the attempt that failed: nothing new is known.
            raise fail(self.last_diagnostic.code, operation, self.last_diagnostic.message, self.name)

    def _fail_ready(self, ready: asyncio.Future[None], error: SidecarError) -> None:
        if not ready.done():
            ready.set_exception(error)
            ready.exception()  # mark retrieved: waiters may all have gone
        self._session = None
        self._set_state("failed", error.diagnostic)

    # -- the owner task: resolve, spawn, transport, session -----------------------------------

    async def _own(self, operation: str, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Resolve, spawn, open the transport, then hold the session: all in this one task."""
        launch = Launch()
        try:
            resolved = await resolve_server(self.config, self.workspace, self.environ, operation)
            self.log.set_secrets(resolved.secret_values)
            self.redaction = Redactor(RESULT_MIN_CHARS, resolved.passed_secrets)
            self.hooks.redaction = self.redaction
            env = process_environment(self.config, resolved, self.environ)
            await launch.spawn(self.config, resolved, env, self.log)
            await load_sdk()
            # The connect time limit starts now: secret commands and the SDK import are not the server's.
            owner = asyncio.current_task()
            assert owner is not None
            tasks.spawn(self._bound_connect(owner, ready, operation), f"mcp-connect-timer:{self.name}")
            transport = await self._transport(resolved, env, launch)
            await self._hold(transport, launch, ready, stop)
        except asyncio.CancelledError:
            if not ready.done():
                self._fail_ready(ready, classify(TimeoutError(), self._ctx(operation, connecting=True)))
            raise
        except BaseException as exc:
            self._ended(exc, ready, operation)
        finally:
            self._session = None
            self.hooks.withdraw()
            await launch.release()

    async def _transport(self, resolved: ResolvedServer, env: dict[str, str], launch: Launch) -> Any:
        """Our stdio transport over the spawned server, else the SDK's stdio, else HTTP with OAuth."""
        if launch.server is not None:
            return watched(stdio.transport(launch.server), self._on_eof, self._seen.on_garbage)
        if launch.pipe is not None:
            return transports.sdk_stdio(resolved, env, launch.pipe, self._on_eof, self._seen)
        auth, self.auth_state = await self._http_auth(self) if self._http_auth is not None else (None, "none")
        return transports.http(resolved, auth, self.config.request_timeout_s, self._on_eof, self._seen)

    async def _hold(self, transport: Any, launch: Launch, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Enter the client, publish its session, and keep it until asked to stop."""
        from mcp_types import Implementation

        client: Client = offering_client(
            self.hooks,
            transport,
            mode=self.config.protocol,
            read_timeout_seconds=self.config.request_timeout_s,
            message_handler=self._on_message,
            client_info=Implementation(name="mcp-sidecar", version=__version__),
            cache=None,
        )
        async with client:
            if launch.pipe is not None:
                launch.pipe.close_writer()
            self._begin(client)
            if not ready.done():
                ready.set_result(None)
            self._set_state("connected")
            listener = None
            if is_modern(client.protocol_version):
                listener = tasks.spawn(self._listen(client), f"mcp-listen:{self.name}")
            try:
                await stop.wait()
            finally:
                self.listening = False
                await _stop_streams(listener, self._watches.detach())

    def _begin(self, client: Client) -> None:
        """A new session: nothing watched, nothing stale, and a new generation for its catalogs."""
        self.protocol_version = client.protocol_version
        self.capabilities = capabilities_of(client)
        self.server_icons = server_icons_of(client)
        self._watches.new_session()
        self.connected_at = time.time()
        self.generation += 1
        self.tools_stale = False
        self._listed_early = set()
        self.stale_kinds = set()
        self.listening = not is_modern(client.protocol_version)
        self._session = LiveSession(
            server=self.name,
            client=client,
            owner=asyncio.current_task(),
            generation=self.generation,
            protocol_version=self.protocol_version,
            capabilities=self.capabilities,
            watches=self._watches,
            on_failure=self._request_failed,
            owner_now=self._current_owner,
            hooks=self.hooks,
            redaction=self.redaction,
        )

    def _ended(self, exc: BaseException, ready: asyncio.Future[None], operation: str) -> None:
        """The attempt failed, or the session ended on its own."""
        error = classify(exc, self._ctx(operation, connecting=not ready.done()))
        log.info("server %s: connection ended: %s", self.name, error.diagnostic.code)
        if not ready.done():
            self._fail_ready(ready, error)
        elif not self._closing:
            self._session = None
            self._set_state("failed", error.diagnostic)

    def _on_eof(self) -> None:
        if self._closing or self.state != "connected":
            return
        diag = fail("connection_failed", "connection", "The server closed the connection.", self.name)
        log.info("server %s: stream ended", self.name)
        self._session = None
        self._set_state("failed", diag.diagnostic)
        self._stop.set()

    # -- requests ----------------------------------------------------------------------------

    async def _request_failed(
        self, exc: BaseException, operation: str, owner: asyncio.Task[None] | None
    ) -> SidecarError:
        error = classify(exc, self._ctx(operation))
        # Only while the failed session is still the current one: a request that outlived its
        # connection (a reconnect or shutdown closed it) must not close or mark its successor.
        current = owner is self._owner and not self._closing
        if current and error.diagnostic.code in ("connection_failed", "protocol_error"):
            # The session is unusable; the next request reconnects.
            await self.close(state="failed", diag=error.diagnostic)
        return error

    # -- lifecycle ---------------------------------------------------------------------------

    async def close(self, state: State | None = None, diag: Diagnostic | None = None) -> None:
        """Close the connection (if any) and wait for the owner task to finish its cleanup."""
        owner = self._owner
        connecting = self._ready is not None and not self._ready.done()
        self._closing = True
        self.hooks.withdraw()
        try:
            self._stop.set()
            if self._ready is not None and not self._ready.done():
                self._ready.cancel()
            if owner is not None and not owner.done():
                if connecting and not owner.cancelling():
                    owner.cancel()  # no session to close gracefully yet; do not wait out the attempt
                try:
                    await asyncio.wait_for(asyncio.shield(owner), 10)
                except (TimeoutError, asyncio.CancelledError):
                    if not owner.cancelling():
                        owner.cancel()
                except BaseException:
                    pass
        finally:
            self._closing = False
            self._session = None
            self._owner = None
            self._ready = None
        if state is None:
            state = "disabled" if self.config.disabled else "idle"
            self._failed_attempts = 0  # an explicit close (reconnect, reload) retries at once
        self._set_state(state, diag)


async def _stop_streams(*streams: asyncio.Task[None] | None) -> None:
    """Cancel a session's streams together, then wait for each to finish."""
    running = [stream for stream in streams if stream is not None]
    for stream in running:
        stream.cancel()
    for stream in running:
        with contextlib.suppress(BaseException):
            await stream


__all__ = ["ENDED", "Connection", "State", "load_sdk"]
