"""Where one server's OAuth credentials live while the SDK's flow runs: its `TokenStorage` over a
keyring record (`RecordStorage`), the client metadata a login registers, and what a finished
login folds into the record (`record_after_login`). `auth/provider.py` is the flow itself."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl, ValidationError

from mcp_sidecar.auth.store import CredentialRecord, CredentialStore
from mcp_sidecar.connections.sdk_shim import origin_issuer

if TYPE_CHECKING:
    from mcp_sidecar.auth.provider import SidecarOAuth

CLIENT_NAME = "mcp-sidecar"
MAX_REGISTRATIONS = 8
"""Registrations kept per server record, one per issuer, oldest dropped first."""


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


def secret_method(offered: list[str] | None) -> Literal["client_secret_basic", "client_secret_post"] | None:
    """How a client secret goes to a token endpoint that advertises `offered`: Basic when it lists
    `client_secret_basic` or nothing (the RFC 8414 default), else the form; None when neither."""
    if offered is None or "client_secret_basic" in offered:
        return "client_secret_basic"
    return "client_secret_post" if "client_secret_post" in offered else None


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
        client_secret: str | None = None,
        secret_source: Callable[[], Awaitable[str | None]] | None = None,
    ) -> None:
        self.store = store
        self.account = account
        self.record = record
        self._pre_registered = pre_registered
        self.client_secret = client_secret
        self.secret_source = secret_source
        """Runs the secret's `!command` when a token request first needs it (connections only)."""
        self._redirect_uri = redirect_uri
        self._with_tokens = with_tokens
        self.tokens_set = False
        self.binding: tuple[dict[str, Any] | None] | None = None
        """Set by a login: the DPoP key (or None) the tokens it stores are bound to."""
        self.on_secrets: Callable[[Iterable[str]], None] | None = None
        """Told the values this storage hands out, whenever they change (a connection's redaction)."""

    def secrets(self) -> list[str]:
        """The tokens and client secret a request may carry, and the DPoP key's private part."""
        tokens = self.record.tokens or {}
        key = self.record.dpop_key if isinstance(self.record.dpop_key, dict) else {}
        values = (tokens.get("access_token"), tokens.get("refresh_token"), self.client_secret, key.get("d"))
        return [v for v in values if isinstance(v, str) and v]

    def reveal(self) -> None:
        """Tell `on_secrets` the current values (new tokens, a client secret just read)."""
        if self.on_secrets is not None:
            self.on_secrets(self.secrets())

    @property
    def confidential(self) -> bool:
        return self._pre_registered is not None and (self.client_secret is not None or self.secret_source is not None)

    async def get_tokens(self) -> OAuthToken | None:
        if not self._with_tokens or not self.record.tokens:
            return None
        try:
            return OAuthToken.model_validate(self.record.tokens)
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        if self.binding is not None:
            (key,) = self.binding
            self.record.dpop_key, self.record.dpop_bound = key, key is not None
        self.record.tokens = tokens.model_dump(mode="json", exclude_none=True)
        self.record.expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        self.tokens_set = True
        self.reveal()  # before they are sent: a refresh mid-connection
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
        if stored.issuer != self.record.issuer or stored.oauth_metadata != self.record.oauth_metadata:
            return None  # from another authorization server: refreshed there, not at this one's endpoint
        if (stored.dpop_bound, stored.dpop_key) != (self.record.dpop_bound, self.record.dpop_key):
            # Another process logged in with a new DPoP key (or none): these tokens are not this
            # connection's to sign; it asks for a login when its own stop working.
            return None
        self.record = stored
        self.reveal()
        try:
            return OAuthToken.model_validate(stored.tokens)
        except ValidationError:
            return None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.confidential:
            # Built from the configuration each time: the secret is never copied into the keyring record.
            # The method is settled against the server's metadata before each token request.
            assert self._pre_registered is not None
            return OAuthClientInformationFull(
                client_id=self._pre_registered,
                client_secret=self.client_secret,
                redirect_uris=[AnyUrl(self._redirect_uri)],
                token_endpoint_auth_method="client_secret_basic",
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            )
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
        if self.confidential:
            return  # the configured client: nothing to remember, and never its secret
        self.record.client_info = client_info.model_dump(mode="json", exclude_none=True)
        if client_info.issuer:
            self.record.issuer = client_info.issuer
            # Keyed by issuer (SEP-2352): a later move back to this server reuses its registration.
            self.record.registrations = {
                **{k: v for k, v in self.record.registrations.items() if k != client_info.issuer},
                client_info.issuer: self.record.client_info,
            }
            while len(self.record.registrations) > MAX_REGISTRATIONS:
                self.record.registrations.pop(next(iter(self.record.registrations)))
        await self.store.save(self.account, self.record)

    def registration_for(self, issuer: str) -> OAuthClientInformationFull | None:
        """The registration this issuer made before, if the record keeps one."""
        for known, info in self.record.registrations.items():
            if issuers_match(known, issuer):
                try:
                    found = OAuthClientInformationFull.model_validate(info)
                except ValidationError:
                    return None
                return found if found.issuer and issuers_match(found.issuer, issuer) else None
        return None


def record_after_login(provider: SidecarOAuth) -> CredentialRecord:
    """Fold what the flow discovered into the record (the tokens and registration are already in it)."""
    record = provider.record_storage.record
    context = provider.context
    if context.oauth_metadata is not None:
        record.oauth_metadata = context.oauth_metadata.model_dump(mode="json", exclude_none=True)
        record.issuer = str(context.oauth_metadata.issuer)
    else:
        record.oauth_metadata = None  # the 2025-03-26 default endpoints: no earlier metadata is kept
        # Their issuer is the server's origin: pinned like any other.
        record.issuer = origin_issuer(context.server_url)
    if context.protected_resource_metadata is not None:
        record.resource_metadata = context.protected_resource_metadata.model_dump(mode="json", exclude_none=True)
    granted = (record.tokens or {}).get("scope")
    if record.step_up_scope and granted and set(record.step_up_scope.split()) <= set(str(granted).split()):
        record.step_up_scope = None
        record.step_up_at = None
    return record
