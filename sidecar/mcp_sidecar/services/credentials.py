"""The user's OAuth credentials: the credential store and what each connection sends from it.

One per process (`services/user_state.py`): every client's connections read their tokens here,
and a login by any client saves into it. The login flows themselves are a client's
(`services/auth.py`: they open its browser or wait for its paste). `auth/store.py` and
`auth/login.py` import the SDK: a function here awaits its owner (`heavy.SDK`) first, or needs
no SDK (`credentials_status`, so `get` answers while it loads).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_sidecar import heavy
from mcp_sidecar.config.interpolate import MissingVariable, ResolvedServer, SecretCommand, resolve
from mcp_sidecar.config.model import DEFAULT_OAUTH_CALLBACK_PORT
from mcp_sidecar.protocol.errors import SidecarError, fail

if TYPE_CHECKING:
    from mcp_sidecar.auth.login import LoginTarget
    from mcp_sidecar.auth.store import CredentialStore
    from mcp_sidecar.connections.protocol import ServerConnection

log = logging.getLogger(__name__)


def uses_oauth(conn: ServerConnection) -> bool:
    config = conn.config
    return config.transport == "http" and not any(k.lower() == "authorization" for k in config.headers)


def _oauth_server(conn: ServerConnection, operation: str) -> ResolvedServer:
    """The server's resolved definition, when OAuth applies to it (no SDK needed)."""
    config = conn.config
    if config.transport != "http":
        raise fail("not_supported", operation, "OAuth applies to HTTP servers only.", conn.name)
    if not uses_oauth(conn):
        raise fail(
            "not_supported", operation, "The server has an Authorization header, which turns OAuth off.", conn.name
        )
    try:
        resolved = resolve(config, conn.workspace, conn.environ)
    except MissingVariable as exc:
        raise fail(
            "configuration_invalid",
            operation,
            f"Environment variable {exc.variable} (used in `{exc.field_name}`) is not set.",
            conn.name,
        ) from None
    assert resolved.url is not None
    return resolved


def target_of(conn: ServerConnection, operation: str) -> LoginTarget:
    """The login target; for callers that awaited `heavy.SDK` (`auth/login.py` imports the SDK)."""
    from mcp_sidecar.auth.login import LoginTarget

    config = conn.config
    resolved = _oauth_server(conn, operation)
    assert resolved.url is not None
    return LoginTarget(
        server=conn.name,
        url=resolved.url,
        client_id=resolved.oauth_client_id,
        client_secret=resolved.oauth_client_secret if isinstance(resolved.oauth_client_secret, str) else None,
        client_secret_command=(
            resolved.oauth_client_secret.command if isinstance(resolved.oauth_client_secret, SecretCommand) else None
        ),
        client_metadata_url=config.oauth_client_metadata_url,
        dpop=config.oauth_dpop,
        issuer=config.oauth_issuer,
        scopes=config.oauth_scopes,
        port=config.oauth_callback_port or DEFAULT_OAUTH_CALLBACK_PORT,
        headers={k: v for k, v in resolved.headers.items() if isinstance(v, str)},
        protocol=config.protocol,
        timeout_s=config.request_timeout_s,
    )


async def with_client_secret(conn: ServerConnection, target: LoginTarget, operation: str) -> LoginTarget:
    """`target` with its client secret, running the `!command` that holds it (only when there is one)."""
    from mcp_sidecar.config import paths
    from mcp_sidecar.config.secrets import SecretLookupFailed, run_secret_command, time_limit

    if target.client_secret_command is None:
        return target
    cwd = str(conn.workspace or paths.neutral_dir())
    try:
        timeout_s = time_limit(conn.config.timeout_ms)
        secret = await run_secret_command(target.client_secret_command, cwd, timeout_s, conn.environ)
    except SecretLookupFailed as exc:
        message = f"The secret command in `oauthClientSecret` {exc.reason}."
        raise fail("secret_lookup_failed", operation, message, conn.name) from None
    return dataclasses.replace(target, client_secret=secret)


class Credentials:
    """The credential store (built on first use: the OS keyring by default) and each connection's auth."""

    def __init__(self, store_factory: Callable[[], CredentialStore] | None = None) -> None:
        self.store_factory = store_factory
        self._store: CredentialStore | None = None

    @property
    def store(self) -> CredentialStore:
        if self._store is None:
            from mcp_sidecar.auth.store import CredentialStore

            self._store = self.store_factory() if self.store_factory else CredentialStore()
        return self._store

    async def connection_auth(self, conn: ServerConnection) -> tuple[Any, str]:
        """The httpx auth a connection should use, and what the store said: `tokens`, `none` or `unavailable`."""
        if not uses_oauth(conn):
            return None, "none"
        await heavy.SDK.ready()
        from mcp_sidecar.auth.login import stored_provider
        from mcp_sidecar.auth.store import CredentialStoreUnavailable

        target = target_of(conn, "connect")
        store = self.store

        async def client_secret() -> str | None:
            return (await with_client_secret(conn, target, "connect")).client_secret

        async def remember_step_up(scope: str) -> None:
            try:
                record = await store.load(target.account)
                if record is not None:
                    record.ask_step_up(scope)
                    await store.save(target.account, record)
            except CredentialStoreUnavailable:
                log.info("server %s: could not remember a step-up scope", conn.name)

        try:
            has_command = target.client_secret_command is not None
            provider = await stored_provider(
                target, store, remember_step_up, client_secret if has_command else None, conn.secrets_used
            )
        except CredentialStoreUnavailable:
            return None, "unavailable"
        return provider, ("tokens" if provider is not None else "none")

    async def credentials_status(self, conn: ServerConnection) -> dict[str, Any]:
        """For `get`: whether tokens are stored (not whether they are valid), or that the store is locked or
        unavailable.

        Needs no SDK: `get` answers while it loads."""
        from mcp_sidecar.auth.store import CredentialStoreLocked, CredentialStoreUnavailable, account_of

        if not uses_oauth(conn):
            return {"tokensStored": None, "store": None}
        try:
            resolved = _oauth_server(conn, "get")
        except SidecarError:
            return {"tokensStored": None, "store": None}
        assert resolved.url is not None
        try:
            record = await self.store.load(account_of(conn.name, resolved.url, resolved.oauth_client_id))
        except CredentialStoreLocked:
            return {"tokensStored": None, "store": "locked"}
        except CredentialStoreUnavailable:
            return {"tokensStored": None, "store": "unavailable"}
        return {
            "tokensStored": bool(record is not None and record.has_tokens),
            "store": "available",
        }


__all__ = ["Credentials", "target_of", "uses_oauth", "with_client_secret"]
