"""The one module that touches the MCP SDK's private API (`mcp` 2.3).

Where the sidecar needs something the SDK offers no public way to do, it is done here, under a
public name the rest of the code calls:

- **the client's capability ad** (`announcing_client`): the SDK offers both elicitation modes
  whenever an elicitation callback is set; the sidecar offers only what the editor renders. The ad
  is built by `ClientSession._build_capabilities`, on the session `Client._build_session` makes.
- **a request whose answer the SDK must not validate** (`send_unvalidated`): a task-augmented
  `tools/call` answers a `CreateTaskResult`, which `ClientSession.send_request` would refuse as
  a `CallToolResult`; the session's `_dispatcher` sends it without that check.
- **the OAuth client's steps** (`OAuthSteps`): `auth/provider.py` bends the SDK's
  `OAuthClientProvider` by replacing some of its private steps (`_initialize`, `_auth_flow`,
  `_refresh_token`, ...). Here each of them calls a public method of the same meaning, which does
  the SDK's own step unless a subclass overrides it; `origin_issuer` is the SDK's `_origin_issuer`.
- **the gateway's host connection** (`host_connection`): `ServerSession` keeps the per-connection
  object (state, exit stack, list-change notifications) in `_connection`.
- **the gateway's HTTP session table** (`SessionManagerHooks`): the SDK's Streamable HTTP session
  manager refuses new sessions when full; the gateway makes room instead, through the manager's
  `_admit_session`, `_discard_session` and its `_server_instances` / `_session_owners` /
  `_task_group`.

Nothing else in `mcp_sidecar` reads or writes an SDK object's underscore attribute, overrides an
SDK method whose name begins with one, or imports an underscore name of the SDK:
`tests/unit/test_sdk_private_access.py` scans for it. `tests/unit/connections/test_sdk_shim.py` checks, on the
installed SDK, that every private name used here is still there with the shape relied on, so an
SDK release that changes one fails there first, by name; pyproject.toml pins the SDK to one minor
version (moving the pin means running that test, then re-reading this module).

This module imports nothing of ours (the gateway, which must not reach `connections/`, may import
it), and imports the SDK at its top: import it only where the SDK may be imported (`heavy.SDK`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import _origin_issuer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import ClientCapabilities

if TYPE_CHECKING:
    from contextlib import AsyncExitStack

    from mcp.client.session import ClientSession
    from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
    from mcp.server.connection import Connection
    from mcp.server.context import ServerRequestContext
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.shared.dispatcher import CallOptions

CapabilityAd = Callable[[ClientCapabilities], ClientCapabilities]

# -- the client ------------------------------------------------------------------------------------


class _AnnouncingClient(Client):
    announce: CapabilityAd | None = None

    async def _build_session(self, exit_stack: AsyncExitStack) -> ClientSession:
        session = await super()._build_session(exit_stack)
        announce = self.announce
        if announce is not None:
            build = session._build_capabilities

            def announced(version: str) -> ClientCapabilities:
                return announce(build(version))

            session._build_capabilities = announced  # type: ignore[method-assign]
        return session


def announcing_client(transport: Any, announce: CapabilityAd, **kwargs: Any) -> Client:
    """An SDK `Client` whose sessions announce `announce(ad)` instead of the SDK's capability ad `ad`
    (in the handshake era's `initialize` and in each modern request's `_meta` alike)."""
    client = _AnnouncingClient(transport, **kwargs)
    client.announce = announce
    return client


async def send_unvalidated(
    session: ClientSession, method: str, params: Mapping[str, Any], opts: CallOptions
) -> dict[str, Any]:
    """Send a request as `session.send_request` does, and return its answer as it came, unvalidated.

    The caller stamps what `send_request` would (the protocol-version header on HTTP) in `opts`.
    """
    return await session._dispatcher.send_raw_request(method, params, opts)


# -- OAuth -----------------------------------------------------------------------------------------


def origin_issuer(server_url: str) -> str:
    """The server's origin as an issuer (`scheme://authority`), rendered as the SDK renders one: the
    issuer the SDK expects when the server publishes no authorization server metadata."""
    return _origin_issuer(server_url)


class OAuthSteps(OAuthClientProvider):
    """The SDK's OAuth provider with its private steps under public names.

    The SDK's flow (`async_auth_flow` driving `_auth_flow`) calls its steps by their private names;
    each is routed here to a public method that does the SDK's step. A subclass overrides the
    public method, and calls `super()`'s for the SDK's own behaviour.
    """

    @property
    def loaded_from_storage(self) -> bool:
        """The stored tokens and client were read (the SDK forgets that when a refresh fails)."""
        return bool(self._initialized)

    async def load_from_storage(self) -> None:
        """Read the stored tokens and client information into the context (`_initialize`)."""
        await super()._initialize()

    def expected_issuer(self) -> str:
        """The issuer the metadata and the stored client must belong to (`_expected_issuer`)."""
        return super()._expected_issuer()

    async def authorization_code_grant(self) -> tuple[str, str]:
        """Open the authorization URL and wait for the code: `(code, code_verifier)`
        (`_perform_authorization_code_grant`)."""
        return await super()._perform_authorization_code_grant()

    async def token_exchange_request(self, auth_code: str, code_verifier: str) -> httpx2.Request:
        """The token request for an authorization code (`_exchange_token_authorization_code`)."""
        return await super()._exchange_token_authorization_code(auth_code, code_verifier)

    async def refresh_token_request(self) -> httpx2.Request:
        """The token request for the refresh token (`_refresh_token`)."""
        return await super()._refresh_token()

    async def handle_refresh_response(self, response: httpx2.Response) -> bool:
        """Store the refreshed tokens; False (tokens cleared) when the refresh failed (`_handle_refresh_response`)."""
        return await super()._handle_refresh_response(response)

    def add_auth_header(self, request: httpx2.Request) -> None:
        """Put the current access token on a request (`_add_auth_header`)."""
        super()._add_auth_header(request)

    def oauth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The whole flow for one request, as `async_auth_flow` drives it (`_auth_flow`)."""
        return super()._auth_flow(request)

    # The SDK's names, each routed to its public step.

    async def _initialize(self) -> None:
        await self.load_from_storage()

    def _expected_issuer(self) -> str:
        return self.expected_issuer()

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        return await self.authorization_code_grant()

    async def _exchange_token_authorization_code(self, auth_code: str, code_verifier: str) -> httpx2.Request:
        return await self.token_exchange_request(auth_code, code_verifier)

    async def _refresh_token(self) -> httpx2.Request:
        return await self.refresh_token_request()

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        return await self.handle_refresh_response(response)

    def _add_auth_header(self, request: httpx2.Request) -> None:
        self.add_auth_header(request)

    def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        return self.oauth_flow(request)


# -- the gateway -----------------------------------------------------------------------------------


def host_connection(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The SDK's per-connection object behind a request (handshake era: one per host): its `state`,
    `exit_stack`, `session_id` and list-change notifications."""
    connection: Connection = ctx.session._connection
    return connection


class SessionManagerHooks(StreamableHTTPSessionManager):
    """The SDK's Streamable HTTP session manager, with hooks on a session's admission and end, and
    its table of open sessions readable and shrinkable."""

    def before_admission(self) -> None:
        """Runs under the manager's lock just before a new session is admitted (the SDK refuses one
        while `max_sessions` are open)."""

    def session_discarded(self, session_id: str) -> None:
        """A session ended, whichever way (closed by its host, idle too long, ended here)."""

    def session_ids(self) -> list[str]:
        """The open sessions, oldest first."""
        return list(self._server_instances)

    def end_session(self, session_id: str) -> None:
        """Forget a session now, so the next admission sees the room, and end it in the background
        as the SDK ends one (its id answers 404 from now on)."""
        transport = self._server_instances.pop(session_id, None)
        self._session_owners.pop(session_id, None)
        if transport is not None and self._task_group is not None:
            self._task_group.start_soon(self._discard_session, session_id, transport)

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        self.before_admission()
        return super()._admit_session(requestor)

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        self.session_discarded(session_id)
        await super()._discard_session(session_id, transport)


__all__ = [
    "CapabilityAd",
    "OAuthSteps",
    "SessionManagerHooks",
    "announcing_client",
    "host_connection",
    "origin_issuer",
    "send_unvalidated",
]
