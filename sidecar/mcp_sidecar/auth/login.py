"""Login, logout and the stored-token provider for connections: the SDK side of OAuth.

`run_login` drives one fresh authorization by opening an MCP session with the login-mode
provider (the SDK runs OAuth inside the first request that gets a 401). What it needs from
the outside (how to open a URL, where the callback comes from) is passed in, so the
JSON-RPC method, the CLI and the conformance client share this code.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth.utils import issuers_match
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthMetadata

from mcp_sidecar.auth.dpop import DpopKey, DpopKeyInvalid
from mcp_sidecar.auth.provider import (
    RecordStorage,
    SidecarOAuth,
    callback_uri,
    record_after_login,
    secret_method,
)
from mcp_sidecar.auth.store import CredentialRecord, CredentialStore, account_of
from mcp_sidecar.auth.urls import OAuthUrlRefused, require_allowed
from mcp_sidecar.connections.http_limits import SDK_EVENT_LIMIT, ResponseBound

log = logging.getLogger(__name__)

REVOCATION_TIME_LIMIT_S = 5.0


class CallbackInvalid(Exception):
    """The pasted address is not a callback of this login."""


class AuthorizationDenied(Exception):
    """The authorization server redirected back with an OAuth `error`."""


class LoginNotNeeded(Exception):
    """The server answered without asking for authentication."""


@dataclass(frozen=True, slots=True)
class LoginTarget:
    server: str
    url: str
    client_id: str | None
    scopes: tuple[str, ...] | None
    port: int
    headers: dict[str, str]
    protocol: str
    timeout_s: float
    step_up: str | None = None
    """Step-up scopes this login asks for on top of its own (the person approved any new ones)."""
    client_secret: str | None = field(default=None, repr=False)
    """The confidential client's secret (`oauthClientSecret`, resolved); never stored by the sidecar."""
    client_secret_command: str | None = field(default=None, repr=False)
    """Or the `!command` that prints it, run when the secret is needed (`with_client_secret`)."""
    client_metadata_url: str | None = None
    """`oauthClientMetadataUrl`: the client id when the authorization server accepts metadata documents."""
    dpop: bool = False
    issuer: str | None = None
    """`oauthIssuer`: the only authorization server this login may use."""
    scopes_answered: bool = False
    """The person answered a `needs_approval`: scopes a challenge adds beyond it are dropped, not asked."""

    @property
    def account(self) -> str:
        return account_of(self.server, self.url, self.client_id)

    @property
    def redirect_uri(self) -> str:
        return callback_uri(self.port)


def _storage(
    target: LoginTarget, store: CredentialStore, record: CredentialRecord, *, with_tokens: bool
) -> RecordStorage:
    return RecordStorage(
        store,
        target.account,
        record,
        pre_registered=target.client_id,
        redirect_uri=target.redirect_uri,
        with_tokens=with_tokens,
        client_secret=target.client_secret if target.client_id else None,
    )


def parse_callback(url: str, redirect_uri: str) -> AuthorizationCodeResult:
    """The code, state and issuer from a callback address; it must be this login's redirect URI."""
    try:
        got, want = urlsplit(url.strip()), urlsplit(redirect_uri)
        same = (got.scheme, got.hostname, got.port, got.path) == (want.scheme, want.hostname, want.port, want.path)
    except ValueError:
        raise CallbackInvalid() from None
    if not same:
        raise CallbackInvalid()
    query = parse_qs(got.query)
    if "error" in query:
        raise AuthorizationDenied()
    code, state = query.get("code", [""])[0], query.get("state", [None])[0]
    if not code or not state:
        raise CallbackInvalid()
    return AuthorizationCodeResult(code=code, state=state, iss=query.get("iss", [None])[0])


async def run_login(
    target: LoginTarget,
    store: CredentialStore,
    redirect: Callable[[str], Awaitable[None]],
    callback: Callable[[], Awaitable[AuthorizationCodeResult]],
) -> CredentialRecord:
    """One fresh authorization; returns the stored record. Raises the flow's exceptions.

    Like everything in this module, for callers that awaited `heavy.SDK` (services/auth.py does)."""
    record = await store.load(target.account) or CredentialRecord(
        server=target.server, url=target.url, configured_client_id=target.client_id
    )

    record.step_up_scope = target.step_up
    if not target.step_up:
        record.step_up_at = None
    step_up = set((record.step_up_scope or "").split())
    registered = set(str((record.client_info or {}).get("scope") or "").split())
    if step_up and target.client_id is None and record.client_info and not step_up <= registered:
        record.client_info = None  # registered for fewer scopes than this login asks for: register again

    async def checked_redirect(authorization_url: str) -> None:
        require_allowed(authorization_url, "the authorization URL", target.url)
        await redirect(authorization_url)

    storage = _storage(target, store, record, with_tokens=False)

    async def remember_step_up(scope: str) -> None:
        # The login's own request was refused for scope: the next login asks the person for it.
        record.ask_step_up(scope)

    provider = SidecarOAuth(
        target.url,
        storage,
        target.port,
        login=True,
        configured_scopes=target.scopes,
        redirect_handler=checked_redirect,
        callback_handler=callback,
        client_metadata_url=target.client_metadata_url,
        dpop_key=DpopKey.generate() if target.dpop else None,  # a new key per login; the old tokens die with it
        on_step_up=remember_step_up,
        issuer=target.issuer,
        scopes_answered=target.scopes_answered,
    )
    bound = _bound()  # metadata, registration, token and MCP answers: at most 64 MiB each, as elsewhere
    http = httpx2.AsyncClient(
        auth=provider,
        headers=target.headers,
        timeout=httpx2.Timeout(target.timeout_s),
        follow_redirects=False,
        event_hooks={"request": [bound.on_request], "response": [bound.on_response]},
    )
    transport = streamable_http_client(target.url, http_client=http, max_sse_event_size=SDK_EVENT_LIMIT)
    try:
        async with Client(transport, mode=target.protocol):
            pass
    finally:
        await http.aclose()
        if storage.tokens_set:
            # Whatever failed after the token exchange, the stored tokens keep the metadata and the
            # issuer they came with: a later refresh goes to their token endpoint and nowhere else.
            await store.save(target.account, record_after_login(provider))
    if not storage.tokens_set:
        raise LoginNotNeeded()
    return provider.record_storage.record


def _bound() -> ResponseBound:
    """The connections' bound on every HTTP answer; a larger one fails that request (no flag to set here)."""
    return ResponseBound(lambda: None)


async def revoke(record: CredentialRecord, confidential: tuple[str, str] | None = None) -> str:
    """RFC 7009 revocation of a removed record's tokens: accepted, unsupported or unconfirmed.

    `confidential`: the configured client id and secret, which authenticate the revocation
    the way the server's metadata advertises (the record never holds a configured secret).
    """
    endpoint = _revocation_endpoint(record)
    if endpoint is None:
        return "unsupported"
    try:
        require_allowed(endpoint, "the revocation endpoint", record.url)
    except OAuthUrlRefused:
        return "unconfirmed"
    tokens = record.tokens or {}
    pairs = [(tokens.get("refresh_token"), "refresh_token"), (tokens.get("access_token"), "access_token")]
    wanted = [(t, hint) for t, hint in pairs if isinstance(t, str) and t]
    if not wanted:
        return "accepted"
    try:
        accepted = await asyncio.wait_for(
            _post_revocations(endpoint, wanted, _revoking_client(record, confidential)), REVOCATION_TIME_LIMIT_S
        )
    except Exception as exc:
        log.info("revocation unconfirmed: %s", type(exc).__name__)
        return "unconfirmed"
    return "accepted" if accepted else "unconfirmed"


def _revocation_endpoint(record: CredentialRecord) -> str | None:
    metadata: OAuthMetadata | None = None
    if record.oauth_metadata:
        try:
            metadata = OAuthMetadata.model_validate(record.oauth_metadata)
        except ValueError:
            metadata = None
    return str(metadata.revocation_endpoint) if metadata and metadata.revocation_endpoint else None


def _revoking_client(
    record: CredentialRecord, confidential: tuple[str, str] | None
) -> OAuthClientInformationFull | None:
    if confidential is None:
        return _client_information(record)
    # The client authenticates as it does at the token endpoint (RFC 7009 §2.1): the same choice.
    client_id, secret = confidential
    offered: list[str] | None = None
    if record.oauth_metadata:
        methods = record.oauth_metadata.get("token_endpoint_auth_methods_supported")
        offered = [str(m) for m in methods] if isinstance(methods, list) else None
    return OAuthClientInformationFull(
        client_id=client_id,
        client_secret=secret,
        token_endpoint_auth_method=secret_method(offered) or "client_secret_basic",
    )


def _client_information(record: CredentialRecord) -> OAuthClientInformationFull | None:
    if not record.client_info:
        return None
    try:
        return OAuthClientInformationFull.model_validate(record.client_info)
    except ValueError:
        return None


async def _post_revocations(
    endpoint: str, wanted: list[tuple[str, str]], client: OAuthClientInformationFull | None
) -> bool:
    """POST each token to the revocation endpoint; True when every one was answered 200."""
    bound = _bound()
    hooks: dict[str, list[Callable[..., Any]]] = {"request": [bound.on_request], "response": [bound.on_response]}
    async with httpx2.AsyncClient(timeout=REVOCATION_TIME_LIMIT_S, follow_redirects=False, event_hooks=hooks) as http:
        ok = True
        for token, hint in wanted:
            data: dict[str, Any] = {"token": token, "token_type_hint": hint}
            auth: Any = None
            if client is not None:
                data["client_id"] = client.client_id
                if client.client_secret and client.token_endpoint_auth_method == "client_secret_basic":
                    auth = httpx2.BasicAuth(client.client_id, client.client_secret)
                elif client.client_secret:
                    data["client_secret"] = client.client_secret
            response = await http.post(endpoint, data=data, auth=auth)
            log.debug("revocation answered HTTP %d", response.status_code)
            ok = ok and response.status_code == 200
        return ok


async def stored_provider(
    target: LoginTarget,
    store: CredentialStore,
    on_step_up: Callable[[str], Awaitable[None]],
    secret_source: Callable[[], Awaitable[str | None]] | None = None,
    on_secrets: Callable[[Iterable[str]], None] | None = None,
) -> SidecarOAuth | None:
    """The provider a connection uses, or None when no tokens are stored (raises when the store fails).

    `on_secrets` is told every token, client secret and DPoP key it uses, now and after a refresh."""
    record = await store.load(target.account)
    if record is None or not record.has_tokens:
        return None
    if target.issuer and not (record.issuer and issuers_match(target.issuer, record.issuer)):
        return None  # tokens from before `oauthIssuer` named another (or no known) issuer: a login is needed
    key: DpopKey | None = None
    if record.dpop_bound:
        try:
            key = DpopKey.from_jwk(record.dpop_key)
        except DpopKeyInvalid:
            log.info("server %s: the DPoP key bound to its tokens is unusable; a login is needed", target.server)
            return None
    elif target.dpop:
        return None  # `oauthDpop` and bearer tokens from before: never sent; a login binds new ones
    storage = _storage(target, store, record, with_tokens=True)
    if target.client_id is not None and target.client_secret is None:
        storage.secret_source = secret_source  # a `!command`: run when a refresh first needs it
    storage.on_secrets = on_secrets
    storage.reveal()
    return SidecarOAuth(
        target.url,
        storage,
        target.port,
        login=False,
        on_step_up=on_step_up,
        client_metadata_url=target.client_metadata_url,
        dpop_key=key,
    )


__all__ = [
    "AuthorizationDenied",
    "CallbackInvalid",
    "LoginNotNeeded",
    "LoginTarget",
    "parse_callback",
    "revoke",
    "run_login",
    "stored_provider",
]
