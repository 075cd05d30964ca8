"""`mcp/auth/*` and the OAuth side of connections: targets, pending logins, diagnostics.

The OAuth mechanics live in `auth/` (imported lazily: the SDK's OAuth client and `keyring`
are not on the start-up path). `auth/login.py` and `auth/provider.py` import the SDK: every
function here awaits its owner (`heavy.SDK`) before touching them, so a login sent while the
SDK loads waits for that load instead of importing the SDK beside it. Every failure becomes a
diagnostic here, with messages chosen by exception type, never copied from an exception or an
HTTP answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_sidecar import heavy, tasks
from mcp_sidecar.auth.failures import BrowserUnavailable, login_failure
from mcp_sidecar.output import auth_text
from mcp_sidecar.protocol.errors import SidecarError, fail, invalid_params, refused_disabled
from mcp_sidecar.services.credentials import Credentials, target_of, with_client_secret

if TYPE_CHECKING:
    from mcp.shared.auth import AuthorizationCodeResult

    from mcp_sidecar.auth.login import LoginTarget
    from mcp_sidecar.auth.store import CredentialRecord, CredentialStore
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.protocol.results import LoginResult, LogoutResult
    from mcp_sidecar.services.configuration import Configuration

log = logging.getLogger(__name__)

CALLBACK_TIME_LIMIT_S = 120.0
PASTE_TIME_LIMIT_S = 600.0

Opener = Callable[[str], Awaitable[bool]]


@dataclass(slots=True)
class PendingLogin:
    login_id: str
    server: str
    redirect_uri: str
    authorization_url: asyncio.Future[str]
    pasted: asyncio.Future[AuthorizationCodeResult]
    expires_at: float
    task: asyncio.Task[LoginResult] | None = None


def _store_failure(operation: str, server: str) -> SidecarError:
    return fail("credential_store_unavailable", operation, "The OS keyring is not available.", server)


def _state_of(authorization_url: str) -> str:
    """The `state` the SDK put in the authorization URL ("" if none: then no callback matches)."""
    from urllib.parse import parse_qs, urlsplit

    return parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]


def _completed(server: str, record: CredentialRecord) -> LoginResult:
    scope = (record.tokens or {}).get("scope")
    scopes = str(scope).split() if scope else []
    return {"server": server, "status": "completed", "scopes": scopes, "text": auth_text.logged_in(server, scopes)}


async def _after_login(conn: ServerConnection) -> None:
    # The next request connects again with the new tokens.
    if conn.state in ("connecting", "connected", "failed", "needs_login"):
        await conn.close()


def _extra_scopes(record: CredentialRecord | None, target: LoginTarget) -> tuple[set[str], set[str]]:
    """(the pending step-up scopes, those of them the server was never granted nor configured with)."""
    if record is None:
        return set(), set()
    asked = record.pending_step_up()
    return asked, asked - record.granted_scope - set(target.scopes or ())


def _needs_approval(server: str, record: CredentialRecord, target: LoginTarget, extra: set[str]) -> LoginResult:
    from mcp_sidecar.auth.provider import union
    from mcp_sidecar.auth.store import STEP_UP_TTL_S

    ordered = [s for s in (record.step_up_scope or "").split() if s in extra]
    base = " ".join(target.scopes) if target.scopes else " ".join(sorted(record.granted_scope))
    every = (union(base, " ".join(ordered)) or "").split()
    left = max(0, int(STEP_UP_TTL_S - (time.time() - (record.step_up_at or 0))))
    return {
        "server": server,
        "status": "needs_approval",
        "extraScopes": ordered,
        "scopes": every,
        "expiresInSeconds": left,
        "text": auth_text.scopes_to_approve(server, ordered),
    }


async def _confidential_client(conn: ServerConnection, target: LoginTarget, operation: str) -> tuple[str, str] | None:
    """The configured client id and secret for revocation; a failing secret command only costs the revocation."""
    if target.client_id is None or conn.config.oauth_client_secret is None:
        return None
    try:
        secret = (await with_client_secret(conn, target, operation)).client_secret
    except SidecarError:
        return None
    return (target.client_id, secret) if secret else None


class Auth:
    """OAuth for one client: logins (in its browser or pasted into it) and logouts.

    Holds how to open a URL for this client and its logins waiting for a pasted callback; the
    credential store is the user's (`Credentials`), which the connections read their tokens from."""

    def __init__(
        self,
        configuration: Configuration,
        store_factory: Callable[[], CredentialStore] | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        """`credentials`: the user's (`services/credentials.py`), shared with the connections."""
        self._configuration = configuration
        self.credentials = credentials or Credentials(store_factory)
        self.open_external: Opener | None = None
        """Set by the JSON-RPC server when the editor supports `window/showDocument`."""
        self.pending: dict[str, PendingLogin] = {}
        """This client's logins waiting for a pasted callback."""

    @property
    def store_factory(self) -> Callable[[], CredentialStore] | None:
        return self.credentials.store_factory

    @store_factory.setter
    def store_factory(self, factory: Callable[[], CredentialStore] | None) -> None:
        self.credentials.store_factory = factory

    @property
    def store(self) -> CredentialStore:
        return self.credentials.store

    async def _open(self, url: str) -> None:
        opener = self.open_external
        if opener is not None:
            with contextlib.suppress(Exception):
                if await opener(url):
                    return
        if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            # No desktop: `webbrowser` would fall back to a console browser on our stdout.
            raise BrowserUnavailable()
        import webbrowser

        # Never through a shell: `webbrowser` runs the browser with an argument vector.
        opened = await asyncio.to_thread(webbrowser.open, url, 2)
        if not opened:
            raise BrowserUnavailable()

    async def login(self, server: str, no_browser: bool, approve_scopes: tuple[str, ...] | None = None) -> LoginResult:
        """`approve_scopes`: the person's answer to a `needs_approval` (None: not asked yet)."""
        await heavy.SDK.ready()
        from mcp_sidecar.auth.login import parse_callback
        from mcp_sidecar.auth.store import CredentialStoreUnavailable

        operation = "login"
        conn = self._configuration.connection(server, operation)
        if conn.config.approval_required:
            # A login connects to the server (with its headers) and follows its metadata: unapproved, nothing is sent.
            raise refused_disabled(operation, server, True)
        target = target_of(conn, operation)
        store = self.store
        try:
            record = await store.load(target.account)  # also fails before opening anything with no keyring
        except CredentialStoreUnavailable:
            raise _store_failure(operation, server) from None
        asked, extra = _extra_scopes(record, target)
        if extra and approve_scopes is None and record is not None:
            return _needs_approval(server, record, target, extra)
        # Scopes already granted or configured need no approval; an extra one only when approved.
        step_up = " ".join(s for s in asked if s not in extra or s in (approve_scopes or ())) or None
        target = dataclasses.replace(
            await with_client_secret(conn, target, operation),
            step_up=step_up,
            scopes_answered=approve_scopes is not None,
        )
        if no_browser:
            return await self._login_pasted(conn, target)

        from mcp_sidecar.auth.callback import CallbackListener

        listener = CallbackListener(target.port)
        try:
            await listener.start()

            async def redirect(url: str) -> None:
                listener.expect_state(_state_of(url))
                await self._open(url)

            async def callback() -> AuthorizationCodeResult:
                raw = await asyncio.wait_for(asyncio.shield(listener.received), CALLBACK_TIME_LIMIT_S)
                return parse_callback(raw, target.redirect_uri)

            outcome = await self._run_login(target, redirect, callback)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            raise login_failure(exc, operation, server) from None
        finally:
            await listener.close()
        if isinstance(outcome, dict):
            return outcome  # the server's challenge asked for more: the person answers first
        await _after_login(conn)
        return _completed(server, outcome)

    async def _run_login(
        self,
        target: LoginTarget,
        redirect: Callable[[str], Awaitable[None]],
        callback: Callable[[], Awaitable[AuthorizationCodeResult]],
    ) -> CredentialRecord | LoginResult:
        """The login, or `needs_approval` when a re-login's challenge asked for scopes never granted."""
        from mcp_sidecar.auth.login import run_login
        from mcp_sidecar.auth.provider import ScopesNeedApproval
        from mcp_sidecar.connections.errors import leaves

        store = self.store
        try:
            return await run_login(target, store, redirect, callback)
        except BaseException as exc:
            asked = next((leaf for leaf in leaves(exc) if isinstance(leaf, ScopesNeedApproval)), None)
            if asked is None:
                raise
        record = await store.load(target.account)
        if record is None:
            raise asked  # the record was removed meanwhile (a logout): nothing to ask about
        record.ask_step_up(asked.scope)
        await store.save(target.account, record)
        _, extra = _extra_scopes(record, target)
        return _needs_approval(target.server, record, target, extra)

    async def _login_pasted(self, conn: ServerConnection, target: LoginTarget) -> LoginResult:
        loop = asyncio.get_running_loop()
        pending = PendingLogin(
            login_id=secrets.token_urlsafe(12),
            server=conn.name,
            redirect_uri=target.redirect_uri,
            authorization_url=loop.create_future(),
            pasted=loop.create_future(),
            expires_at=time.time() + PASTE_TIME_LIMIT_S,
        )

        async def redirect(url: str) -> None:
            if not pending.authorization_url.done():
                pending.authorization_url.set_result(url)

        async def callback() -> AuthorizationCodeResult:
            return await asyncio.wait_for(asyncio.shield(pending.pasted), PASTE_TIME_LIMIT_S)

        async def run() -> LoginResult:
            try:
                outcome = await self._run_login(target, redirect, callback)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                raise login_failure(exc, "login", conn.name) from None
            finally:
                self.pending.pop(pending.login_id, None)
            if isinstance(outcome, dict):
                return outcome
            await _after_login(conn)
            return _completed(conn.name, outcome)

        self.pending[pending.login_id] = pending
        pending.task = tasks.spawn(run(), f"oauth-login:{conn.name}")
        waiting: set[asyncio.Future[Any]] = {pending.task, pending.authorization_url}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not pending.authorization_url.done():
            # The flow ended before it needed a person (failed, or found nothing to do).
            return await pending.task
        url = pending.authorization_url.result()
        return {
            "server": conn.name,
            "status": "pending",
            "loginId": pending.login_id,
            "authorizationUrl": url,
            "redirectUri": pending.redirect_uri,
            "expiresInSeconds": int(PASTE_TIME_LIMIT_S),
            "text": auth_text.paste_instructions(conn.name, url, pending.redirect_uri, pending.login_id),
        }

    async def complete_login(self, login_id: str, callback_url: str) -> LoginResult:
        await heavy.SDK.ready()
        from mcp_sidecar.auth.login import AuthorizationDenied, CallbackInvalid, parse_callback

        operation = "completeLogin"
        pending = self.pending.get(login_id)
        if pending is None or pending.task is None:
            raise fail("login_not_found", operation, "No pending login has this id (finished, expired or unknown).")
        answer: AuthorizationCodeResult | AuthorizationDenied
        try:
            answer = parse_callback(callback_url, pending.redirect_uri)
        except CallbackInvalid:
            raise invalid_params(
                operation,
                f"`callbackUrl` must be the address the browser was sent to, starting with {pending.redirect_uri}.",
            ) from None
        except AuthorizationDenied as exc:
            answer = exc
        expected = _state_of(pending.authorization_url.result()).encode()
        if not expected or not secrets.compare_digest(_state_of(callback_url.strip()).encode(), expected):
            # Another login's address, or a forged one: this login keeps waiting for its own.
            raise invalid_params(
                operation,
                "`callbackUrl` carries a state that is not this login's; "
                "paste the address its authorization page sent you to.",
            )
        if not pending.pasted.done():
            if isinstance(answer, AuthorizationDenied):
                pending.pasted.set_exception(answer)
            else:
                pending.pasted.set_result(answer)
        return await asyncio.shield(pending.task)

    async def logout(self, server: str) -> LogoutResult:
        await heavy.SDK.ready()
        from mcp_sidecar.auth.login import revoke
        from mcp_sidecar.auth.store import CredentialStoreUnavailable

        operation = "logout"
        conn = self._configuration.connection(server, operation)
        target = target_of(conn, operation)
        store = self.store
        try:
            record = await store.load(target.account)
            removed = await store.delete(target.account) if record is not None else False
        except CredentialStoreUnavailable:
            raise _store_failure(operation, server) from None
        for login_id, pending in list(self.pending.items()):
            if pending.server == server and pending.task is not None:
                pending.task.cancel()
                self.pending.pop(login_id, None)
        if conn.state in ("connecting", "connected", "failed", "needs_login"):
            await conn.close()
        revocation = "none"
        if record is not None and record.has_tokens:
            revocation = await revoke(record, await _confidential_client(conn, target, operation))
        registration_only = record is not None and not record.has_tokens and removed
        text = auth_text.logged_out(server, revocation, registration_only)
        return {"server": server, "removed": removed, "revocation": revocation, "text": text}

    async def credentials_status(self, conn: ServerConnection) -> dict[str, Any]:
        return await self.credentials.credentials_status(conn)


__all__ = ["Auth", "PendingLogin"]
