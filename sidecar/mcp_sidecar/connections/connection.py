"""One MCP server connection, owned by exactly one task.

The SDK's `Client` is an anyio task group that must be entered and left in the same task,
so an owner task enters it, publishes the client, and waits until asked to stop. Request
handlers (other tasks) call the published client; they never enter SDK context managers.
Connecting is bounded by the server's timeout by cancelling the owner task, which also
avoids the SDK's fixed 10 s discovery probe when a server never answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar import __version__, tasks
from mcp_sidecar.config import paths, secrets
from mcp_sidecar.config.interpolate import MissingVariable, ResolvedServer, resolve
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections import content_requests, stdio, watch_requests
from mcp_sidecar.connections.errors import FailureContext, classify
from mcp_sidecar.connections.sdk_streams import (
    WatchedReceive,
    cancelled_by_caller,
    capabilities_of,
    is_modern,
    load_sdk,
)
from mcp_sidecar.connections.stderr_log import StderrLog, StderrPipe
from mcp_sidecar.events import CatalogInvalidated, ConnectionEvent, ResourceUpdated, StatusChanged
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, fail, refused_disabled

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger(__name__)

State = Literal["idle", "connecting", "connected", "disabled", "failed"]

MAX_CATALOG_ENTRIES = 10_000
MAX_CATALOG_BYTES = 4 * 1024 * 1024
RETRY_FREE_FAILURES = 1
"""Failed connection attempts retried at once by the next request; later ones back off."""
RETRY_FIRST_DELAY_S = 1.0
RETRY_MAX_DELAY_S = 30.0
RETRY_STABLE_S = 10.0
"""A connection lost within this time of connecting counts as a failed attempt (a crash loop)."""


class Connection:
    def __init__(
        self,
        config: ServerConfig,
        workspace: Path | None,
        publish: Callable[[ConnectionEvent], None],
        http_auth: Callable[[Connection], Awaitable[tuple[Any, str]]] | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.workspace = workspace
        """Where the server and its secret commands run: the workspace only when it is trusted."""
        self.state: State = "disabled" if config.disabled else "idle"
        self.last_diagnostic: Diagnostic | None = (
            refused_disabled("configuration", self.name, True).diagnostic if config.approval_required else None
        )
        self.protocol_version: str | None = None
        self.connected_at: float | None = None
        self.log = StderrLog()
        self.publish = publish
        """Where this connection's events go (the registry drops those of a replaced connection)."""
        self._http_auth = http_auth
        """OAuth for HTTP servers: the stored-token provider (or None) and the store's state."""
        self.auth_state = "none"
        self.capabilities: frozenset[str] = frozenset()
        """What the server advertised on the current connection: resources, subscribe, completions, prompts."""
        self._watch_stream: asyncio.Task[None] | None = None
        """Modern sessions: the `subscriptions/listen` stream carrying the watched URIs."""
        self._watch_uris: frozenset[str] = frozenset()
        self._watch_lock = asyncio.Lock()
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self._closing = False
        self._http_status: int | None = None
        self._http_not_mcp = False
        """An HTTP answer that was neither JSON nor an event stream (an HTML page, say)."""
        self._http_too_large = False
        """An HTTP body or event passed the 64 MiB message limit (`http_limits`)."""
        self._garbage_lines = 0
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
        self._failed_attempts = 0
        """Connection attempts failed in a row; past RETRY_FREE_FAILURES, requests wait for `_retry_at`."""
        self._retry_at = 0.0

    # -- state -------------------------------------------------------------------------------

    def _set_state(self, state: State, diag: Diagnostic | None = None) -> None:
        if state == "failed" and self.state in ("connecting", "connected"):
            self._count_failure()
        changed = state != self.state or diag != self.last_diagnostic
        self.state = state
        if diag is None and state == "disabled" and self.config.approval_required:
            pass  # its `trust_required` stays until the definition is approved (a new connection)
        elif diag is not None or state in ("connected", "idle", "disabled"):
            self.last_diagnostic = diag
        if changed:
            self.publish(StatusChanged(self))

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
        return FailureContext(
            operation=operation,
            server=self.name,
            http_status=self._http_status,
            http_not_mcp=self._http_not_mcp,
            http_too_large=self._http_too_large,
            garbage_lines=self._garbage_lines,
            auth_state=self.auth_state,
            connecting=connecting,
        )

    # -- connecting --------------------------------------------------------------------------

    async def connect(self, operation: str) -> Client:
        """Return a live client, connecting first if needed; concurrent callers share one attempt."""
        if self.config.disabled:
            raise refused_disabled(operation, self.name, self.config.approval_required)
        if self._client is not None and self.state == "connected":
            return self._client
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
        assert self._client is not None
        return self._client

    def _start_owner(self, operation: str) -> None:
        self._stop = asyncio.Event()
        self._ready = asyncio.get_running_loop().create_future()
        self._http_status = None
        self._http_not_mcp = False
        self._http_too_large = False
        self._garbage_lines = 0
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
        if self.state != "failed" or self._failed_attempts <= RETRY_FREE_FAILURES or self.last_diagnostic is None:
            return
        if time.monotonic() < self._retry_at:
            # The same diagnostic as the attempt that failed: nothing new is known.
            raise fail(self.last_diagnostic.code, operation, self.last_diagnostic.message, self.name)

    def _fail_ready(self, ready: asyncio.Future[None], error: SidecarError) -> None:
        if not ready.done():
            ready.set_exception(error)
            ready.exception()  # mark retrieved: waiters may all have gone
        self._client = None
        self._set_state("failed", error.diagnostic)

    async def _own(self, operation: str, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        pipe: StderrPipe | None = None
        server: stdio.ServerProcess | None = None
        try:
            resolved = await self._resolve(operation)
            self.log.set_secrets(resolved.secret_values)
            env = {k: v for k, v in resolved.env.items() if isinstance(v, str)}
            if self.config.transport == "stdio":
                pipe = StderrPipe(self.log)
                await pipe.start()
                if stdio.SUPPORTED:
                    # The server starts while the SDK imports: on a cold sidecar both take about a second.
                    assert resolved.command is not None
                    server = await stdio.spawn(resolved.command, resolved.args, env, resolved.cwd, pipe.writer)
                    pipe.close_writer()
            await load_sdk()
            # The connect time limit starts now: secret commands and the SDK import are not the server's.
            owner = asyncio.current_task()
            assert owner is not None
            tasks.spawn(self._bound_connect(owner, ready, operation), f"mcp-connect-timer:{self.name}")
            from mcp import Client
            from mcp_types import Implementation

            if server is not None:
                transport = self._watched(stdio.transport(server))
            elif pipe is not None:
                transport = self._sdk_stdio_transport(resolved, env, pipe)
            else:
                transport = await self._http_transport(resolved)
            client = Client(
                transport,
                mode=self.config.protocol,
                read_timeout_seconds=self.config.request_timeout_s,
                message_handler=self._on_message,
                client_info=Implementation(name="mcp-sidecar", version=__version__),
                cache=None,
            )
            async with client:
                if pipe is not None:
                    pipe.close_writer()
                self._client = client
                self.protocol_version = client.protocol_version
                self.capabilities = capabilities_of(client)
                self._watch_uris = frozenset()
                self.connected_at = time.time()
                self.generation += 1
                self.tools_stale = False
                self._listed_early = set()
                self.stale_kinds = set()
                self.listening = not is_modern(client.protocol_version)
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
                    streams = [t for t in (listener, self._watch_stream) if t is not None]
                    self._watch_stream = None
                    self._watch_uris = frozenset()
                    for stream in streams:
                        stream.cancel()
                    for stream in streams:
                        with contextlib.suppress(BaseException):
                            await stream
        except asyncio.CancelledError:
            if not ready.done():
                self._fail_ready(ready, classify(TimeoutError(), self._ctx(operation, connecting=True)))
            raise
        except BaseException as exc:
            error = classify(exc, self._ctx(operation, connecting=not ready.done()))
            log.info("server %s: connection ended: %s", self.name, error.diagnostic.code)
            if not ready.done():
                self._fail_ready(ready, error)
            elif not self._closing:
                self._client = None
                self._set_state("failed", error.diagnostic)
        finally:
            self._client = None
            if server is not None and not server.taken_over:
                await stdio.stop(server.process)  # the attempt ended before the transport took it over
            if pipe is not None:
                pipe.close()

    async def _resolve(self, operation: str) -> ResolvedServer:
        """References and secret commands, resolved for this connection attempt only.

        Runs in the owner task, so concurrent requests share one resolution, and a reconnect
        or shutdown that cancels the attempt also kills a pending secret command.
        """
        try:
            resolved = resolve(self.config, self.workspace)
        except MissingVariable as exc:
            raise fail(
                "configuration_invalid",
                operation,
                f"Environment variable {exc.variable} (used in `{exc.field_name}`) is not set.",
                self.name,
            ) from None
        if not resolved.secret_commands():
            return resolved
        # HTTP servers have no cwd; their secret commands run where a stdio server would.
        cwd = resolved.cwd or str(self.workspace or paths.neutral_dir())
        try:
            filled = await secrets.fill_secrets(resolved, cwd, secrets.time_limit(self.config.timeout_ms))
        except secrets.SecretLookupFailed as exc:
            message = f"The secret command in `{exc.field_name}` {exc.reason}."
            raise fail("secret_lookup_failed", operation, message, self.name) from None
        log.info("server %s: ran %d secret command(s)", self.name, len(resolved.secret_commands()))
        return filled

    def _sdk_stdio_transport(self, resolved: ResolvedServer, env: dict[str, str], pipe: StderrPipe) -> Any:
        """Where `connections/stdio.py` does not run (Windows): the SDK's own, spawned after its import."""
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        assert resolved.command is not None
        params = StdioServerParameters(
            command=resolved.command, args=list(resolved.args), env=env or None, cwd=resolved.cwd
        )
        return self._watched(stdio_client(params, errlog=pipe.writer))  # type: ignore[arg-type]

    async def _http_transport(self, resolved: ResolvedServer) -> Any:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        from mcp_sidecar.connections.http_limits import SDK_EVENT_LIMIT, ResponseBound

        assert resolved.url is not None
        headers = {k: v for k, v in resolved.headers.items() if isinstance(v, str)}

        endpoint = httpx2.URL(resolved.url)

        async def record_status(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                self._http_status = response.status_code
            elif response.request.url != endpoint:
                return  # OAuth metadata and token requests share this client
            elif response.status_code >= 300:  # redirects are not followed
                self._http_status = response.status_code
            else:
                if self._http_status in (401, 403):
                    self._http_status = None  # cured (a refreshed token): later failures are not about auth
                if response.status_code != 202 and response.request.method == "POST":
                    kind = response.headers.get("content-type", "").lower()
                    self._http_not_mcp = not kind.startswith(("application/json", "text/event-stream"))

        def too_large() -> None:
            self._http_too_large = True

        bound = ResponseBound(too_large)  # every body and event at most 64 MiB, as on stdio
        auth, self.auth_state = await self._http_auth(self) if self._http_auth is not None else (None, "none")
        timeout = self.config.request_timeout_s
        http = httpx2.AsyncClient(
            auth=auth,
            headers=headers,
            timeout=httpx2.Timeout(timeout, read=max(timeout, 300.0)),
            event_hooks={"request": [bound.on_request], "response": [record_status, bound.on_response]},
            follow_redirects=False,
        )
        transport = streamable_http_client(resolved.url, http_client=http, max_sse_event_size=SDK_EVENT_LIMIT)
        return self._watched(transport, http)

    @asynccontextmanager
    async def _watched(self, transport: Any, http: Any = None) -> AsyncIterator[tuple[Any, Any]]:
        """Wrap the transport's read stream to notice garbage lines and the end of the stream."""
        try:
            async with transport as (read, write):
                yield WatchedReceive(read, self), write
        finally:
            if http is not None:
                await http.aclose()

    async def _listen(self, client: Client) -> None:
        """Modern-era sessions announce list changes only on a `subscriptions/listen` stream."""
        try:
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as subscription:
                self.listening = bool(subscription.honored.tools_list_changed)
                # A change between connecting and this acknowledgement was announced to no one:
                # lists fetched in that window may be stale, so they are fetched again once.
                self.stale_kinds |= self._listed_early
                self.tools_stale = self.tools_stale or "tools" in self._listed_early
                self._listed_early.clear()
                async for event in subscription:
                    kind = type(event).__name__
                    if kind == "ToolsListChanged":
                        self.tools_stale = True
                        self.publish(CatalogInvalidated(self, "tools"))
                    elif kind == "ResourcesListChanged":
                        self.publish(CatalogInvalidated(self, "resources"))
                    elif kind == "PromptsListChanged":
                        self.publish(CatalogInvalidated(self, "prompts"))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("server %s: change stream unavailable (%s)", self.name, type(exc).__name__)
        finally:
            # Without a stream, changes can go unnoticed: callers re-list before trusting the catalog.
            self.listening = False
            self.tools_stale = True

    def _on_eof(self) -> None:
        if self._closing or self.state != "connected":
            return
        diag = fail("connection_failed", "connection", "The server closed the connection.", self.name)
        log.info("server %s: stream ended", self.name)
        self._client = None
        self._set_state("failed", diag.diagnostic)
        self._stop.set()

    def _on_garbage(self) -> None:
        self._garbage_lines += 1

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            return  # garbage lines are counted by the watched stream
        if is_modern(self.protocol_version):
            return  # the SDK also hands listen-stream events here; `_listen` handles them once
        kind = type(message).__name__
        if kind == "ResourceUpdatedNotification":
            self.publish(ResourceUpdated(self, str(message.params.uri)))
        elif kind == "ToolListChangedNotification":
            self.tools_stale = True
            self.publish(CatalogInvalidated(self, "tools"))
        elif kind == "ResourceListChangedNotification":
            self.publish(CatalogInvalidated(self, "resources"))
        elif kind == "PromptListChangedNotification":
            self.publish(CatalogInvalidated(self, "prompts"))

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

    async def list_tools(self, operation: str) -> list[dict[str, Any]]:
        descriptors = await self._list_all("tools", operation)
        self.tools_stale = False
        return descriptors

    async def list_resources(self, operation: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Resources and resource templates; both empty when the server has no resources capability."""
        resources = await self._list_all("resources", operation)
        templates = await self._list_all("resource templates", operation)
        return resources, templates

    async def list_prompts(self, operation: str) -> list[dict[str, Any]]:
        return await self._list_all("prompts", operation)

    async def _list_all(self, kind: str, operation: str) -> list[dict[str, Any]]:
        """Every page of one list, within the catalog limits; a bad catalog fails whole."""
        client = await self.connect(operation)
        owner = self._owner
        capabilities = client.server_capabilities
        capability = {"tools": "tools", "resources": "resources", "resource templates": "resources"}.get(
            kind, "prompts"
        )
        if getattr(capabilities, capability, None) is None:
            return []
        key = {"tools": "name", "resources": "uri", "resource templates": "uriTemplate", "prompts": "name"}[kind]
        fetch = {
            "tools": (client.list_tools, "tools"),
            "resources": (client.list_resources, "resources"),
            "resource templates": (client.list_resource_templates, "resource_templates"),
            "prompts": (client.list_prompts, "prompts"),
        }[kind]
        descriptors: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursors: set[str] = set()
        size = 0

        def invalid(why: str) -> SidecarError:
            return fail("protocol_error", operation, f"The {kind} catalog {why}", self.name)

        try:
            cursor: str | None = None
            while True:
                page = await fetch[0](cursor=cursor)
                for item in getattr(page, fetch[1]):
                    descriptor = item.model_dump(by_alias=True, mode="json", exclude_none=True)
                    size += len(json.dumps(descriptor, separators=(",", ":"), ensure_ascii=False).encode())
                    name = descriptor.get(key)
                    if not isinstance(name, str) or not name:
                        raise invalid(f"has an entry without a valid `{key}`.")
                    if name in seen:
                        raise invalid(f"lists {name!r} twice.")
                    seen.add(name)
                    descriptors.append(descriptor)
                if len(descriptors) > MAX_CATALOG_ENTRIES or size > MAX_CATALOG_BYTES:
                    raise invalid(f"exceeds {MAX_CATALOG_ENTRIES} entries or 4 MiB of descriptors.")
                cursor = page.next_cursor
                if cursor is None:
                    break
                if cursor in cursors:
                    raise invalid("repeats a pagination cursor.")
                cursors.add(cursor)
        except SidecarError:
            raise
        except Exception as exc:
            from mcp import MCPError
            from mcp_types import METHOD_NOT_FOUND

            if isinstance(exc, MCPError) and exc.code == METHOD_NOT_FOUND and kind != "tools":
                return []  # advertised the capability but not this list: nothing to show
            raise await self._request_failed(exc, operation, owner) from None
        group = "resources" if kind == "resource templates" else kind
        if kind != "resource templates":
            self.stale_kinds.discard(group)
        if not self.listening and is_modern(self.protocol_version):
            self._listed_early.add(group)
        return descriptors

    async def call_tool(self, name: str, arguments: dict[str, Any], operation: str) -> dict[str, Any]:
        client = await self.connect(operation)
        owner = self._owner
        try:
            result = await client.call_tool(name, arguments, read_timeout_seconds=self.config.call_timeout_s)
        except asyncio.CancelledError:
            if cancelled_by_caller():
                raise
            # The SDK can cancel a waiter whose connection is torn down under it (seen on HTTP).
            raise await self._request_failed(ConnectionError(), operation, owner) from None
        except RuntimeError as exc:
            from mcp import MCPError

            if isinstance(exc, MCPError):
                raise await self._request_failed(exc, operation, owner) from None
            raise fail(
                "protocol_error",
                operation,
                "The tool's result does not match its declared output schema.",
                self.name,
            ) from None
        except Exception as exc:
            raise await self._request_failed(exc, operation, owner) from None
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped.setdefault("isError", False)
        return dumped

    # -- content and watch requests (content_requests.py, watch_requests.py) ---------------

    async def read_resource(self, uri: str, operation: str) -> dict[str, Any]:
        return await content_requests.read_resource(self, uri, operation)

    async def get_prompt(self, name: str, arguments: dict[str, str], operation: str) -> dict[str, Any]:
        return await content_requests.get_prompt(self, name, arguments, operation)

    async def complete(
        self,
        reference: tuple[Literal["template", "prompt"], str],
        argument: tuple[str, str],
        context: dict[str, str],
        operation: str,
    ) -> dict[str, Any]:
        return await content_requests.complete(self, reference, argument, context, operation)

    async def subscribe_resource(self, uri: str, operation: str) -> int:
        return await watch_requests.subscribe_resource(self, uri, operation)

    async def unsubscribe_resource(self, uri: str, operation: str) -> None:
        await watch_requests.unsubscribe_resource(self, uri, operation)

    # -- lifecycle ---------------------------------------------------------------------------

    async def close(self, state: State | None = None, diag: Diagnostic | None = None) -> None:
        """Close the connection (if any) and wait for the owner task to finish its cleanup."""
        owner = self._owner
        connecting = self._ready is not None and not self._ready.done()
        self._closing = True
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
            self._client = None
            self._owner = None
            self._ready = None
        if state is None:
            state = "disabled" if self.config.disabled else "idle"
            self._failed_attempts = 0  # an explicit close (reconnect, reload) retries at once
        self._set_state(state, diag)


__all__ = ["Connection", "State", "load_sdk"]
