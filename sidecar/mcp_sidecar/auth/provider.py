"""The SDK's OAuth client, bent to the sidecar's rules.

Two modes on one class (`mcp.client.auth.OAuthClientProvider` underneath):

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
import time
from collections.abc import AsyncGenerator, Awaitable, Callable

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import (
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    issuers_match,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from pydantic import AnyUrl, ValidationError

from mcp_sidecar.auth.store import MAX_REMEMBERED_SCOPES, CredentialRecord, CredentialStore
from mcp_sidecar.auth.urls import origin_of, require_allowed, require_same_origin

# The SDK logs its flow's exceptions with their text (which can carry a state value or an
# endpoint's answer); diagnostics are ours, so these records are never wanted.
logging.getLogger("mcp.client.auth").disabled = True
logging.getLogger("mcp.client.auth.oauth2").disabled = True

CLIENT_NAME = "mcp-sidecar"


class IssuerChanged(Exception):
    """The authorization server's issuer is not the one the stored credentials belong to."""


class PkceUnsupported(Exception):
    """The authorization server's metadata does not list `S256` in `code_challenge_methods_supported`."""


def callback_uri(port: int) -> str:
    return f"http://127.0.0.1:{port}/callback"


def client_metadata(port: int, scope: str | None = None) -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(callback_uri(port))],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=scope,
    )


def cap_scope(scope: str | None) -> str | None:
    """Unique scope tokens, in order, at most MAX_REMEMBERED_SCOPES, never a bare wildcard."""
    if not scope:
        return None
    tokens = [t for t in dict.fromkeys(scope.split()) if t != "*"][:MAX_REMEMBERED_SCOPES]
    return " ".join(tokens) or None


def union(*scopes: str | None) -> str | None:
    return cap_scope(" ".join(s for s in scopes if s))


class RecordStorage:
    """The SDK's `TokenStorage` over one credential record; every change goes to the keyring."""

    def __init__(
        self,
        store: CredentialStore,
        account: str,
        record: CredentialRecord,
        *,
        pre_registered: str | None,
        redirect_uri: str,
        with_tokens: bool,
    ) -> None:
        self.store = store
        self.account = account
        self.record = record
        self._pre_registered = pre_registered
        self._redirect_uri = redirect_uri
        self._with_tokens = with_tokens
        self.tokens_set = False

    async def get_tokens(self) -> OAuthToken | None:
        if not self._with_tokens or not self.record.tokens:
            return None
        try:
            return OAuthToken.model_validate(self.record.tokens)
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.record.tokens = tokens.model_dump(mode="json", exclude_none=True)
        self.record.expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        self.tokens_set = True
        await self.store.save(self.account, self.record)

    async def newer_tokens(self) -> OAuthToken | None:
        """Tokens another sidecar process stored since these were read (it refreshed first), if any."""
        try:
            stored = await self.store.load(self.account)
        except Exception:
            return None  # the store's failure surfaces on the next save, not here
        if stored is None or not stored.has_tokens or stored.tokens == self.record.tokens:
            return None
        if stored.expires_at is not None and stored.expires_at <= time.time():
            return None
        self.record = stored
        try:
            return OAuthToken.model_validate(stored.tokens)
        except ValidationError:
            return None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.record.client_info:
            try:
                info = OAuthClientInformationFull.model_validate(self.record.client_info)
            except ValidationError:
                info = None
            if info is not None and (self._pre_registered is None or info.client_id == self._pre_registered):
                return info
        if self._pre_registered is not None:
            return OAuthClientInformationFull(
                client_id=self._pre_registered,
                redirect_uris=[AnyUrl(self._redirect_uri)],
                token_endpoint_auth_method="none",
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            )
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.record.client_info = client_info.model_dump(mode="json", exclude_none=True)
        if client_info.issuer:
            self.record.issuer = client_info.issuer
        await self.store.save(self.account, self.record)


class SidecarOAuth(OAuthClientProvider):
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
    ) -> None:
        super().__init__(
            server_url=server_url,
            client_metadata=client_metadata(port),
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self.record_storage = storage
        self._login = login
        self._configured_scope = " ".join(configured_scopes) if configured_scopes else None
        self._on_step_up = on_step_up
        self._server_origin = origin_of(server_url)
        record = storage.record
        self._pinned_issuer = record.issuer if record.client_info or record.tokens else None
        # A login discovers the metadata afresh; only connections (refresh) use the stored copy.
        if record.oauth_metadata and not login:
            with contextlib.suppress(ValidationError):
                self.context.oauth_metadata = OAuthMetadata.model_validate(record.oauth_metadata)
        if record.resource_metadata and not login:
            with contextlib.suppress(ValidationError):
                self.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                    record.resource_metadata
                )

    async def _initialize(self) -> None:
        await super()._initialize()
        expires = self.record_storage.record.expires_at
        if self.context.current_tokens is not None and expires is not None:
            self.context.token_expiry_time = expires

    # -- login ------------------------------------------------------------------------------

    def _expected_issuer(self) -> str:
        issuer = super()._expected_issuer()
        if self._pinned_issuer and not issuers_match(self._pinned_issuer, issuer):
            raise IssuerChanged()
        return issuer

    def _require_pkce(self) -> None:
        """PKCE S256 is a MUST: refuse an authorization server whose metadata does not offer it.

        Without any metadata (the 2025-03-26 default endpoints) there is nothing to check; the
        SDK sends an S256 challenge either way.
        """
        metadata = self.context.oauth_metadata
        if metadata is not None and "S256" not in (metadata.code_challenge_methods_supported or []):
            raise PkceUnsupported()

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        self._require_pkce()  # before anything is opened (a pre-registered client registers nothing)
        challenged = self.context.client_metadata.scope
        record = self.record_storage.record
        # Configured scopes are exactly what the person wants; otherwise the challenge plus what
        # an earlier login was granted (a new login does not quietly give up an approved step-up).
        base = self._configured_scope or union(challenged, " ".join(sorted(record.granted_scope)))
        self.context.client_metadata.scope = union(base, record.step_up_scope)
        return await super()._perform_authorization_code_grant()

    def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self._login:
            return self._checked_flow(request)
        return self._stored_flow(request)

    async def _checked_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, refusing any OAuth request `auth/urls.py` does not allow, and PKCE without S256."""
        flow = super()._auth_flow(request)
        server_url = self.context.server_url
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is not request:
                    require_allowed(str(outgoing.url), "an OAuth endpoint", server_url)
                    if outgoing.method == "POST":
                        self._require_pkce()  # before registering with the authorization server
                    outgoing = self._with_registration_scope(outgoing)
                response = yield outgoing
                if outgoing is request:
                    # The challenge's resource_metadata is fetched next: only from the server's own origin.
                    pointer = extract_resource_metadata_from_www_auth(response)
                    if pointer:
                        require_same_origin(pointer, "the resource metadata URL", server_url)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

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

    # -- every connection -------------------------------------------------------------------

    async def _adopt_newer_tokens(self) -> bool:
        tokens = await self.record_storage.newer_tokens()
        if tokens is None:
            return False
        self.context.current_tokens = tokens
        self.context.token_expiry_time = self.record_storage.record.expires_at
        return True

    async def _stored_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if origin_of(str(request.url)) != self._server_origin:
            yield request  # a token goes only to the server it was issued for
            return
        refreshed = False
        async with self.context.lock:
            await self._prepare(request)
            if not self.context.is_token_valid() and self.context.can_refresh_token():
                refreshed = True
                refresh = await self._refresh_token()
                require_allowed(str(refresh.url), "the token endpoint", self.context.server_url)
                ok = await self._handle_refresh_response((yield refresh))
                if not ok:
                    self.context.clear_tokens()
        if self.context.is_token_valid():
            self._add_auth_header(request)
        response = yield request
        if response.status_code == 401 and not refreshed and self.context.can_refresh_token():
            # The token may have been revoked or expired early, or another sidecar process
            # rotated it: newer stored tokens, else one refresh; then one retry.
            async with self.context.lock:
                if await self._adopt_newer_tokens():
                    ok = True
                else:
                    refresh = await self._refresh_token()
                    require_allowed(str(refresh.url), "the token endpoint", self.context.server_url)
                    ok = await self._handle_refresh_response((yield refresh))
            if ok:
                self._add_auth_header(request)
                response = yield request
            else:
                self.context.clear_tokens()
        await self._step_up_if_asked(response)

    async def _prepare(self, request: httpx2.Request) -> None:
        """Under the context lock: initialise once, note the protocol version, adopt newer stored tokens."""
        if not self._initialized:
            await self._initialize()
        self.context.protocol_version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if not self.context.is_token_valid():
            await self._adopt_newer_tokens()

    async def _step_up_if_asked(self, response: httpx2.Response) -> None:
        """A 403 `insufficient_scope` answer asks for more scopes: report them to the step-up callback."""
        if (
            response.status_code == 403
            and extract_field_from_www_auth(response, "error") == "insufficient_scope"
            and self._on_step_up is not None
        ):
            scope = cap_scope(extract_scope_from_www_auth(response))
            if scope:
                await self._on_step_up(scope)


def record_after_login(provider: SidecarOAuth) -> CredentialRecord:
    """Fold what the flow discovered into the record (the tokens and registration are already in it)."""
    record = provider.record_storage.record
    context = provider.context
    if context.oauth_metadata is not None:
        record.oauth_metadata = context.oauth_metadata.model_dump(mode="json", exclude_none=True)
        record.issuer = str(context.oauth_metadata.issuer)
    else:
        record.oauth_metadata = None  # the 2025-03-26 default endpoints: no earlier metadata is kept
        if context.client_info is not None and context.client_info.issuer:
            record.issuer = context.client_info.issuer
    if context.protected_resource_metadata is not None:
        record.resource_metadata = context.protected_resource_metadata.model_dump(mode="json", exclude_none=True)
    granted = (record.tokens or {}).get("scope")
    if record.step_up_scope and granted and set(record.step_up_scope.split()) <= set(str(granted).split()):
        record.step_up_scope = None
        record.step_up_at = None
    return record


__all__ = [
    "CLIENT_NAME",
    "IssuerChanged",
    "PkceUnsupported",
    "RecordStorage",
    "SidecarOAuth",
    "callback_uri",
    "cap_scope",
    "client_metadata",
    "record_after_login",
    "union",
]
