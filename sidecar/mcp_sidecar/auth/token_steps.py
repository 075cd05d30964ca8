"""The token requests of the sidecar's OAuth client, and the flow every connection runs with
stored tokens: the SDK's steps (private there, reached under public names through
`connections/sdk_shim.py`'s `OAuthSteps`) with the client authentication the token endpoint
advertises, DPoP proofs, nonces and bound tokens (`oauthDpop`), and a refresh that adopts tokens
another process stored first. `auth/provider.py`'s `SidecarOAuth` is built on it, with the login.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING

import httpx2
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

from mcp_sidecar.auth.dpop import DpopUnsupported, asks_for_nonce
from mcp_sidecar.auth.record_storage import secret_method
from mcp_sidecar.auth.store import cap_scope
from mcp_sidecar.auth.urls import origin_of, require_allowed
from mcp_sidecar.connections.sdk_shim import OAuthSteps

if TYPE_CHECKING:
    from mcp_sidecar.auth.dpop import DpopKey, Nonces
    from mcp_sidecar.auth.record_storage import RecordStorage


DPOP_TOKEN_REQUEST = "mcp_sidecar.dpop_token_request"
"""Marks a token request the provider signed a DPoP proof for (a request extension)."""


class ClientAuthUnsupported(Exception):
    """A confidential client, and the token endpoint offers neither `client_secret_basic` nor `_post`."""


class TokenSteps(OAuthSteps):
    """The token steps and the stored-token flow; the state they read is set up by `SidecarOAuth`."""

    record_storage: RecordStorage
    _server_origin: tuple[str, str, int | None]
    _dpop: DpopKey | None
    _nonces: Nonces
    _on_step_up: Callable[[str], Awaitable[None]] | None

    async def load_from_storage(self) -> None:
        await super().load_from_storage()
        expires = self.record_storage.record.expires_at
        if self.context.current_tokens is not None and expires is not None:
            self.context.token_expiry_time = expires

    # -- token requests ---------------------------------------------------------------------

    def _settle_client_auth(self) -> None:
        """A confidential client authenticates the way the token endpoint advertises: Basic when it
        lists `client_secret_basic` (or lists nothing: the RFC 8414 default), else the form."""
        info = self.context.client_info
        if info is None or not self.record_storage.confidential:
            return
        metadata = self.context.oauth_metadata
        method = secret_method(metadata.token_endpoint_auth_methods_supported if metadata is not None else None)
        if method is None:
            raise ClientAuthUnsupported()
        info.token_endpoint_auth_method = method

    async def token_exchange_request(self, auth_code: str, code_verifier: str) -> httpx2.Request:
        self._settle_client_auth()
        return self._proved(await super().token_exchange_request(auth_code, code_verifier))

    async def refresh_token_request(self) -> httpx2.Request:
        storage = self.record_storage
        if storage.confidential and storage.client_secret is None and storage.secret_source is not None:
            storage.client_secret = await storage.secret_source()
            storage.reveal()
            if self.context.client_info is not None:
                self.context.client_info.client_secret = storage.client_secret
        self._settle_client_auth()
        return self._proved(await super().refresh_token_request())

    # -- DPoP -------------------------------------------------------------------------------

    def _proved(self, token_request: httpx2.Request) -> httpx2.Request:
        """A token request with its DPoP proof (when the server's tokens are DPoP-bound)."""
        if self._dpop is not None:
            token_request.extensions = {**token_request.extensions, DPOP_TOKEN_REQUEST: True}
            token_request.headers["DPoP"] = self._dpop.proof(
                "POST", str(token_request.url), nonce=self._nonces.get(str(token_request.url))
            )
        return token_request

    def add_auth_header(self, request: httpx2.Request) -> None:
        tokens = self.context.current_tokens
        if self._dpop is None or tokens is None or not tokens.access_token:
            super().add_auth_header(request)
            return
        url = str(request.url)
        request.headers["Authorization"] = f"DPoP {tokens.access_token}"
        request.headers["DPoP"] = self._dpop.proof(
            request.method, url, access_token=tokens.access_token, nonce=self._nonces.get(url)
        )

    async def _nonce_asked(self, outgoing: httpx2.Request, response: httpx2.Response) -> bool:
        """Keep any nonce the answer carries; True when it refused the request for want of one."""
        url = str(outgoing.url)
        fresh = self._nonces.note(url, response.headers)
        if "DPoP" not in outgoing.headers or not fresh:
            return False
        body = await response.aread() if response.status_code == 400 else None
        return asks_for_nonce(response.status_code, response.headers, body)

    def _reproved(self, outgoing: httpx2.Request) -> httpx2.Request:
        """The same request with a new proof carrying the nonce just received (one retry per request)."""
        assert self._dpop is not None
        if outgoing.extensions.get(DPOP_TOKEN_REQUEST):
            outgoing.headers["DPoP"] = self._dpop.proof(
                "POST", str(outgoing.url), nonce=self._nonces.get(str(outgoing.url))
            )
        else:
            self.add_auth_header(outgoing)
        return outgoing

    async def _dpop_token_response(self, outgoing: httpx2.Request, response: httpx2.Response) -> httpx2.Response:
        """A successful token answer must say `token_type: DPoP` (fail closed: a bearer token is refused);
        the SDK's model knows only Bearer, so it gets the same answer with that word."""
        if not outgoing.extensions.get(DPOP_TOKEN_REQUEST) or response.status_code not in (200, 201):
            return response  # the SDK takes 200 and 201 as a token answer: both are checked
        try:
            body = json.loads(await response.aread())
        except (ValueError, RecursionError):
            body = None  # unreadable: not a DPoP token either
        if not isinstance(body, dict) or str(body.get("token_type", "")).lower() != "dpop":
            raise DpopUnsupported()
        body["token_type"] = "Bearer"
        headers = [
            (k, v) for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")
        ]
        return httpx2.Response(response.status_code, headers=headers, json=body, request=response.request)

    # -- every connection -------------------------------------------------------------------

    async def _adopt_newer_tokens(self) -> bool:
        tokens = await self.record_storage.newer_tokens()
        if tokens is None:
            return False
        self.context.current_tokens = tokens
        self.context.token_expiry_time = self.record_storage.record.expires_at
        return True

    async def _stored_flow(  # noqa: C901 - an auth flow's exchanges cannot be split into sub-generators
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if origin_of(str(request.url)) != self._server_origin:
            yield request  # a token goes only to the server it was issued for
            return
        refreshed = False
        async with self.context.lock:
            await self._prepare(request)
            if not self.context.is_token_valid() and self.context.can_refresh_token():
                refreshed = True
                refresh = await self._checked_refresh()
                answer = yield refresh
                if self._dpop is not None and await self._nonce_asked(refresh, answer):
                    answer = yield self._reproved(refresh)
                ok = await self.handle_refresh_response(answer)
                if not ok:
                    self.context.clear_tokens()
        if self.context.is_token_valid():
            self.add_auth_header(request)
        response = yield request
        if self._dpop is not None and await self._nonce_asked(request, response):
            response = yield self._reproved(request)
        if response.status_code == 401 and not refreshed and self.context.can_refresh_token():
            # The token may have been revoked or expired early, or another sidecar process
            # rotated it: newer stored tokens, else one refresh; then one retry.
            async with self.context.lock:
                if await self._adopt_newer_tokens():
                    ok = True
                else:
                    refresh = await self._checked_refresh()
                    answer = yield refresh
                    if self._dpop is not None and await self._nonce_asked(refresh, answer):
                        answer = yield self._reproved(refresh)
                    ok = await self.handle_refresh_response(answer)
            if ok:
                self.add_auth_header(request)
                response = yield request
            else:
                self.context.clear_tokens()
        await self._step_up_if_asked(response)

    async def _checked_refresh(self) -> httpx2.Request:
        refresh = await self.refresh_token_request()
        require_allowed(str(refresh.url), "the token endpoint", self.context.server_url)
        return refresh

    async def handle_refresh_response(self, response: httpx2.Response) -> bool:
        if self._dpop is not None:
            # A refreshed token must stay bound to the key; a bearer one is not used.
            try:
                response = await self._dpop_token_response(response.request, response)
            except DpopUnsupported:
                self.context.clear_tokens()
                return False
        return await super().handle_refresh_response(response)

    async def _prepare(self, request: httpx2.Request) -> None:
        """Under the context lock: initialise once, note the protocol version, adopt newer stored tokens."""
        if not self.loaded_from_storage:
            await self.load_from_storage()
        self.context.protocol_version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if not self.context.is_token_valid():
            await self._adopt_newer_tokens()

    @staticmethod
    def _step_up_asked(response: httpx2.Response) -> bool:
        return response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"

    async def _step_up_if_asked(self, response: httpx2.Response) -> None:
        """A 403 `insufficient_scope` answer asks for more scopes: report them to the step-up callback."""
        if self._step_up_asked(response) and self._on_step_up is not None:
            from mcp_sidecar.connections.transports import step_up_scope

            # Only plain scope tokens, as the refusal's diagnostic shows them: never control characters.
            scope = cap_scope(step_up_scope(response))
            if scope:
                await self._on_step_up(scope)
