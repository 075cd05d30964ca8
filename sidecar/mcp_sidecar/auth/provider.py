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

The token requests both modes send and the stored mode's flow are `TokenSteps`
(`auth/token_steps.py`), which this class is built on; here are the login's checks.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.auth.utils import (
    extract_resource_metadata_from_www_auth,
    issuers_match,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthMetadata,
    ProtectedResourceMetadata,
)
from pydantic import ValidationError

from mcp_sidecar.auth.dpop import DpopKey, DpopUnsupported, Nonces, supports_es256
from mcp_sidecar.auth.record_storage import (
    CLIENT_NAME,
    RecordStorage,
    callback_uri,
    client_metadata,
    record_after_login,
    secret_method,
)
from mcp_sidecar.auth.store import cap_scope, union
from mcp_sidecar.auth.token_steps import TokenSteps
from mcp_sidecar.auth.urls import origin_of, require_allowed, require_same_origin
from mcp_sidecar.connections.sdk_shim import origin_issuer

# The SDK logs its flow's exceptions with their text (which can carry a state value or an
# endpoint's answer); diagnostics are ours, so these records are never wanted.
logging.getLogger("mcp.client.auth").disabled = True
logging.getLogger("mcp.client.auth.oauth2").disabled = True


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


class RegistrationUnavailable(Exception):
    """No configured client, no client metadata document the server accepts, no registration endpoint:
    the person has to register a client with the authorization server and configure it."""


class SidecarOAuth(TokenSteps):
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
