"""The SDK's OAuth client, bent to the sidecar's rules.

Two modes on one class (`mcp.client.auth.OAuthClientProvider` underneath; the steps of the SDK's
flow replaced here are private there, and reached under public names through
`connections/sdk_shim.py`'s `OAuthSteps`):

- **stored** (every connection): sends the stored access token to the server it was issued
  for, refreshes it with the refresh token, and never runs discovery, registration or a
  browser. A 401 it cannot cure by refreshing stays a 401 (`authentication_required`); a
  403 `insufficient_scope` is remembered for the next login.
- **login** (`mcp/auth/login`): the SDK's whole flow, with every OAuth URL checked
  (`auth/urls.py`: HTTPS or loopback HTTP, no private or metadata addresses, a challenge's
  `resource_metadata` on the server's own origin), an authorization server refused unless
  its metadata lists PKCE `S256`, the issuer pinned to the one stored before, and the
  scopes chosen by the configuration or the server's challenge plus a remembered step-up.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.auth.utils import (
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    issuers_match,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthMetadata,
    ProtectedResourceMetadata,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from pydantic import ValidationError

from mcp_sidecar.auth.dpop import DpopKey, DpopUnsupported, Nonces, asks_for_nonce, supports_es256
from mcp_sidecar.auth.record_storage import (
    CLIENT_NAME,
    RecordStorage,
    callback_uri,
    client_metadata,
    record_after_login,
    secret_method,
)
from mcp_sidecar.auth.store import cap_scope, union
from mcp_sidecar.auth.urls import origin_of, require_allowed, require_same_origin
from mcp_sidecar.connections.sdk_shim import OAuthSteps, origin_issuer

# The SDK logs its flow's exceptions with their text (which can carry a state value or an
# endpoint's answer); diagnostics are ours, so these records are never wanted.
logging.getLogger("mcp.client.auth").disabled = True
logging.getLogger("mcp.client.auth.oauth2").disabled = True

DPOP_TOKEN_REQUEST = "mcp_sidecar.dpop_token_request"
"""Marks a token request the provider signed a DPoP proof for (a request extension)."""


class IssuerChanged(Exception):
    """The authorization server's issuer is not the one the stored credentials belong to."""


class PkceUnsupported(Exception):
    """The authorization server's metadata does not list `S256` in `code_challenge_methods_supported`."""


class ScopesNeedApproval(Exception):
    """A re-login's challenge asks for scopes the server was never granted: the person decides first."""

    def __init__(self, scope: str) -> None:
        super().__init__("scopes need approval")
        self.scope = scope


class IssuerNotConfigured(Exception):
    """The server names another authorization server than `oauthIssuer`."""


class ClientAuthUnsupported(Exception):
    """A confidential client, and the token endpoint offers neither `client_secret_basic` nor `_post`."""


class RegistrationUnavailable(Exception):
    """No configured client, no client metadata document the server accepts, no registration endpoint:
    the person has to register a client with the authorization server and configure it."""


class SidecarOAuth(OAuthSteps):
    def __init__(
        self,
        server_url: str,
        storage: RecordStorage,
        port: int,
        *,
        login: bool,
        configured_scopes: tuple[str, ...] | None = None,
        redirect_handler: Callable[[str], Awaitable[None]] | None = None,
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
        on_step_up: Callable[[str], Awaitable[None]] | None = None,
        client_metadata_url: str | None = None,
        dpop_key: DpopKey | None = None,
        issuer: str | None = None,
        scopes_answered: bool = False,
    ) -> None:
        super().__init__(
            server_url=server_url,
            client_metadata=client_metadata(port),
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
            client_metadata_url=client_metadata_url,
        )
        self.record_storage = storage
        self._login = login
        self._configured_scope = " ".join(configured_scopes) if configured_scopes else None
        self._on_step_up = on_step_up
        self._server_origin = origin_of(server_url)
        self._dpop = dpop_key
        self._dpop_algorithms: Any = None
        self._nonces = Nonces()
        record = storage.record
        self._configured_issuer = issuer
        self._scopes_answered = scopes_answered
        # Tokens are pinned to their issuer, and so is a confidential client once it logged in (its
        # secret goes to no other); a registration alone is keyed by issuer instead.
        pinned = record.tokens or storage.confidential
        self._pinned_issuer = record.issuer if pinned else None
        if login:
            storage.binding = (dpop_key.private_jwk() if dpop_key is not None else None,)
        # A login discovers the metadata afresh; only connections (refresh) use the stored copy.
        if record.oauth_metadata and not login:
            with contextlib.suppress(ValidationError):
                self.context.oauth_metadata = OAuthMetadata.model_validate(record.oauth_metadata)
        if record.resource_metadata and not login:
            with contextlib.suppress(ValidationError):
                self.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                    record.resource_metadata
                )

    async def load_from_storage(self) -> None:
        await super().load_from_storage()
        expires = self.record_storage.record.expires_at
        if self.context.current_tokens is not None and expires is not None:
            self.context.token_expiry_time = expires

    # -- login ------------------------------------------------------------------------------

    def expected_issuer(self) -> str:
        issuer = super().expected_issuer()
        if self._configured_issuer and not issuers_match(self._configured_issuer, issuer):
            raise IssuerNotConfigured()
        if self._pinned_issuer and not issuers_match(self._pinned_issuer, issuer):
            raise IssuerChanged()
        if self._login and not self.record_storage.confidential:
            current = self.context.client_info
            if current is None or (current.issuer is not None and not issuers_match(current.issuer, issuer)):
                # The registration this issuer made before (if it covers the step-up), or none: then
                # the SDK registers anew.
                known = self.record_storage.registration_for(issuer)
                wanted = set((self.record_storage.record.step_up_scope or "").split())
                if known is not None and not wanted <= set((known.scope or "").split()):
                    known = None
                self.context.client_info = known
        return issuer

    def _require_pkce(self) -> None:
        """PKCE S256 is a MUST: refuse an authorization server whose metadata does not offer it.

        Without any metadata (the 2025-03-26 default endpoints) there is nothing to check; the
        SDK sends an S256 challenge either way.
        """
        metadata = self.context.oauth_metadata
        if metadata is not None and "S256" not in (metadata.code_challenge_methods_supported or []):
            raise PkceUnsupported()

    def _require_dpop(self) -> None:
        """`oauthDpop`: fail closed when the authorization server does not offer DPoP with ES256."""
        if self._dpop is not None and not supports_es256(self._dpop_algorithms):
            raise DpopUnsupported()

    async def _note_metadata(self, outgoing: httpx2.Request, response: httpx2.Response) -> None:
        """The SDK's metadata model drops `dpop_signing_alg_values_supported`: read it from the
        authorization server's metadata answer itself."""
        path = outgoing.url.path
        if outgoing.method != "GET" or response.status_code != 200 or "/.well-known/" not in path:
            return
        if "oauth-authorization-server" not in path and "openid-configuration" not in path:
            return
        try:
            body = json.loads(await response.aread())
        except (ValueError, RecursionError):
            return
        if isinstance(body, dict):
            self._dpop_algorithms = body.get("dpop_signing_alg_values_supported")

    async def authorization_code_grant(self) -> tuple[str, str]:
        self._require_pkce()  # before anything is opened (a pre-registered client registers nothing)
        self._require_dpop()
        # No metadata: the SDK would use the server's own /authorize and /token. That origin must
        # be the configured issuer, or the secret and the code would go elsewhere.
        configured = self._configured_issuer
        no_metadata = self.context.oauth_metadata is None
        if no_metadata and configured and not issuers_match(configured, origin_issuer(self.context.server_url)):
            raise IssuerNotConfigured()
        self.context.client_metadata.scope = self._login_scope(self.context.client_metadata.scope)
        return await super().authorization_code_grant()

    def _login_scope(self, challenged: str | None) -> str | None:
        """Configured scopes are exactly what the person wants, plus approved step-up scopes.

        Otherwise the server's challenge plus what an earlier login was granted (a new login does
        not quietly give up an approved step-up). On a re-login the challenge may not widen the
        grant by itself: scopes never granted nor approved stop the login (`ScopesNeedApproval`)
        before anything is opened, or, once the person has answered, are left out.
        """
        record = self.record_storage.record
        if self._configured_scope:
            return union(self._configured_scope, record.step_up_scope)
        granted = record.granted_scope
        wanted = union(challenged, " ".join(sorted(granted)))
        if record.has_tokens:
            # `offline_access` asks for a refresh token, not for access: never a question.
            approved = {*(record.step_up_scope or "").split(), "offline_access"}
            extra = [s for s in (wanted or "").split() if s not in granted and s not in approved]
            if extra and not self._scopes_answered:
                raise ScopesNeedApproval(" ".join(extra))
            wanted = " ".join(s for s in (wanted or "").split() if s not in extra) or None
        return union(wanted, record.step_up_scope)

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

    def oauth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self._login:
            return self._checked_flow(request)
        return self._stored_flow(request)

    async def _checked_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, refusing any OAuth request `auth/urls.py` does not allow, and PKCE without S256."""
        flow = super().oauth_flow(request)
        server_url = self.context.server_url
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is not request:
                    require_allowed(str(outgoing.url), "an OAuth endpoint", server_url)
                    if outgoing.method == "POST":
                        self._require_pkce()  # before registering with the authorization server
                        self._require_registration(outgoing)
                    outgoing = self._with_registration_scope(outgoing)
                response = yield outgoing
                if self._dpop is not None:
                    await self._note_metadata(outgoing, response)
                    if await self._nonce_asked(outgoing, response):
                        response = yield self._reproved(outgoing)
                    response = await self._dpop_token_response(outgoing, response)
                if outgoing is request and await self._answer_ends_login(response):
                    return
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    async def _answer_ends_login(self, response: httpx2.Response) -> bool:
        """The server's answer to the login's own request; True when it goes back as it is.

        A login authorizes once: after its tokens are stored, a 401 or 403 goes back, since another
        authorization could follow a server that now names another authorization server (a second
        page, and the tokens' issuer re-pinned). A 403 `insufficient_scope` is remembered for the
        next login, which asks the person; never a second authorization by itself. A challenge's
        resource_metadata, fetched next, must be on the server's own origin.
        """
        if self._step_up_asked(response) or (self.record_storage.tokens_set and response.status_code == 401):
            await self._step_up_if_asked(response)
            return True
        pointer = extract_resource_metadata_from_www_auth(response)
        if pointer:
            require_same_origin(pointer, "the resource metadata URL", self.context.server_url)
        return False

    def _require_registration(self, outgoing: httpx2.Request) -> None:
        """Registration order: configured client, metadata document, dynamic registration, else ask the user."""
        metadata = self.context.oauth_metadata
        registering = b"redirect_uris" in outgoing.content and self.context.client_info is None
        if registering and metadata is not None and metadata.registration_endpoint is None:
            raise RegistrationUnavailable()

    def _with_registration_scope(self, outgoing: httpx2.Request) -> httpx2.Request:
        """Register for the scopes this login will ask for: an AS may refuse scopes a client lacks."""
        wanted = union(self._configured_scope, self.record_storage.record.step_up_scope)
        if not wanted or outgoing.method != "POST" or b"redirect_uris" not in outgoing.content:
            return outgoing
        try:
            body = json.loads(outgoing.content)
        except ValueError:
            return outgoing
        if not isinstance(body, dict) or "redirect_uris" not in body:
            return outgoing
        body["scope"] = union(body.get("scope"), wanted)
        headers = {k: v for k, v in outgoing.headers.items() if k.lower() != "content-length"}
        return httpx2.Request("POST", outgoing.url, json=body, headers=headers)

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


__all__ = [
    "CLIENT_NAME",
    "IssuerChanged",
    "IssuerNotConfigured",
    "PkceUnsupported",
    "RecordStorage",
    "ScopesNeedApproval",
    "SidecarOAuth",
    "callback_uri",
    "cap_scope",
    "client_metadata",
    "record_after_login",
    "secret_method",
    "union",
]
