"""OAuth credentials in the OS keyring, and nowhere else.

One keyring entry per (server name, server URL, client id): a JSON record holding the
client registration, the tokens, the issuer they belong to and the metadata needed to
refresh and revoke them. There is no plaintext fallback: when no keyring backend works,
every operation raises `CredentialStoreUnavailable` and nothing is written anywhere.

`keyring` talks to D-Bus synchronously (and a locked collection can block), so every call
runs in a worker thread with a time limit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from mcp_sidecar import heavy

log = logging.getLogger(__name__)

SERVICE = "mcp-sidecar"
RECORD_VERSION = 1
STORE_TIME_LIMIT_S = 10.0
MAX_REMEMBERED_SCOPES = 100
STEP_UP_TTL_S = 600.0
"""How long a scope a tool call was refused for waits for a login to approve it."""


class CredentialStoreUnavailable(Exception):
    """No usable OS keyring (missing, locked, or not answering in time)."""


class CredentialStoreLocked(CredentialStoreUnavailable):
    """The keyring is there but locked, and unlocking it failed or was refused."""


def cap_scope(scope: str | None) -> str | None:
    """Unique scope tokens, in order, at most MAX_REMEMBERED_SCOPES, never a bare wildcard."""
    if not scope:
        return None
    tokens = [t for t in dict.fromkeys(scope.split()) if t != "*"][:MAX_REMEMBERED_SCOPES]
    return " ".join(tokens) or None


def union(*scopes: str | None) -> str | None:
    return cap_scope(" ".join(s for s in scopes if s))


def account_of(server: str, url: str, client_id: str | None) -> str:
    """The keyring account name: server name, server URL and client id (`dynamic` for DCR)."""
    return json.dumps([server, url, client_id or "dynamic"], separators=(",", ":"))


@dataclass(slots=True)
class CredentialRecord:
    """What one login leaves behind. `tokens`/`client_info` are the SDK models' JSON dumps."""

    server: str
    url: str
    configured_client_id: str | None
    issuer: str | None = None
    client_info: dict[str, Any] | None = None
    tokens: dict[str, Any] | None = None
    expires_at: float | None = None
    oauth_metadata: dict[str, Any] | None = None
    resource_metadata: dict[str, Any] | None = None
    step_up_scope: str | None = None
    """Scopes a tool call was refused for (403 insufficient_scope): the next login shows them and
    asks the person before it requests them (`pending_step_up`)."""
    step_up_at: float | None = None
    """When the step-up request was last made; it lapses after STEP_UP_TTL_S."""
    registrations: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Client registrations by issuer (SEP-2352), so a server that moves between authorization
    servers reuses the registration each one issued instead of presenting another's."""
    dpop_key: dict[str, Any] | None = None
    """The private ES256 JWK this server's tokens are bound to (`oauthDpop`); only ever in the keyring."""
    dpop_bound: bool = False
    """The stored tokens are DPoP-bound to `dpop_key` (the token response said `token_type: DPoP`)."""
    stored_at: float = field(default_factory=time.time)

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": RECORD_VERSION,
                "server": self.server,
                "url": self.url,
                "configuredClientId": self.configured_client_id,
                "issuer": self.issuer,
                "clientInfo": self.client_info,
                "tokens": self.tokens,
                "expiresAt": self.expires_at,
                "oauthMetadata": self.oauth_metadata,
                "resourceMetadata": self.resource_metadata,
                "stepUpScope": self.step_up_scope,
                "stepUpAt": self.step_up_at,
                "registrations": self.registrations,
                "dpopKey": self.dpop_key,
                "dpopBound": self.dpop_bound,
                "storedAt": self.stored_at,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> CredentialRecord | None:
        try:
            raw = json.loads(text)
        except ValueError:
            return None
        if not isinstance(raw, dict) or raw.get("version") != RECORD_VERSION:
            return None
        server, url = raw.get("server"), raw.get("url")
        if not isinstance(server, str) or not isinstance(url, str):
            return None

        def obj(key: str) -> dict[str, Any] | None:
            value = raw.get(key)
            return value if isinstance(value, dict) else None

        def text_or_none(key: str) -> str | None:
            value = raw.get(key)
            return value if isinstance(value, str) else None

        expires = raw.get("expiresAt")
        stored = raw.get("storedAt")
        asked = raw.get("stepUpAt")
        registrations = obj("registrations") or {}
        return cls(
            server=server,
            url=url,
            configured_client_id=text_or_none("configuredClientId"),
            issuer=text_or_none("issuer"),
            client_info=obj("clientInfo"),
            tokens=obj("tokens"),
            expires_at=float(expires) if isinstance(expires, int | float) else None,
            oauth_metadata=obj("oauthMetadata"),
            resource_metadata=obj("resourceMetadata"),
            step_up_scope=text_or_none("stepUpScope"),
            step_up_at=float(asked) if isinstance(asked, int | float) else None,
            registrations={k: v for k, v in registrations.items() if isinstance(k, str) and isinstance(v, dict)},
            dpop_key=obj("dpopKey"),
            dpop_bound=raw.get("dpopBound") is True,
            stored_at=float(stored) if isinstance(stored, int | float) else time.time(),
        )

    @property
    def has_tokens(self) -> bool:
        return bool(self.tokens and self.tokens.get("access_token"))

    @property
    def granted_scope(self) -> set[str]:
        return set(str((self.tokens or {}).get("scope") or "").split())

    def ask_step_up(self, scope: str) -> None:
        """A request for `scope` on top of the still-pending ones, timed from now."""
        self.step_up_scope = union(" ".join(sorted(self.pending_step_up())) or None, scope)
        self.step_up_at = time.time()

    def pending_step_up(self, now: float | None = None) -> set[str]:
        """The step-up scopes still waiting for a login, or none once STEP_UP_TTL_S has passed."""
        if not self.step_up_scope or self.step_up_at is None:
            return set()
        if (now if now is not None else time.time()) - self.step_up_at > STEP_UP_TTL_S:
            return set()
        return set(self.step_up_scope.split())


_choosing = threading.Lock()


class CredentialStore:
    """Async access to the keyring; one instance per sidecar."""

    def __init__(self, service: str = SERVICE) -> None:
        self.service = service
        self._lock = asyncio.Lock()

    async def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return await asyncio.wait_for(asyncio.to_thread(fn, *args), STORE_TIME_LIMIT_S)
        except TimeoutError:
            raise CredentialStoreUnavailable("the keyring did not answer in time") from None
        except CredentialStoreUnavailable:
            raise
        except Exception as exc:
            if type(exc).__name__ == "KeyringLocked":  # keyring.errors.KeyringLocked, imported lazily
                raise CredentialStoreLocked("the keyring is locked") from None
            # KeyringError (no backend, locked, D-Bus failures) and the backends' own errors.
            log.info("credential store unavailable: %s", type(exc).__name__)
            raise CredentialStoreUnavailable(type(exc).__name__) from None

    def _keyring(self) -> Any:
        """keyring with its backend chosen; runs in a worker thread (`_call`).

        keyring itself is imported by its owner (`heavy.KEYRING`), never beside another import;
        choosing the backend (which asks D-Bus) happens once, under a lock, since two calls at once
        would each choose and set one."""
        heavy.KEYRING.wait(STORE_TIME_LIMIT_S)
        import keyring
        from keyring.backends import fail

        with _choosing:
            backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring):
            raise CredentialStoreUnavailable("no keyring backend")
        if type(backend).__module__.startswith("keyrings.alt"):
            # Plaintext or weakly encrypted files: not a credential store for tokens.
            raise CredentialStoreUnavailable("only a file-based keyring backend is available")
        return keyring

    def _get(self, account: str) -> str | None:
        value = self._keyring().get_password(self.service, account)
        return value if isinstance(value, str) else None

    def _set(self, account: str, value: str) -> None:
        self._keyring().set_password(self.service, account, value)

    def _delete(self, account: str) -> bool:
        keyring = self._keyring()
        try:
            keyring.delete_password(self.service, account)
        except keyring.errors.PasswordDeleteError:
            return False
        return True

    async def load(self, account: str) -> CredentialRecord | None:
        text = await self._call(self._get, account)
        return CredentialRecord.from_json(text) if text else None

    async def save(self, account: str, record: CredentialRecord) -> None:
        async with self._lock:
            record.stored_at = time.time()
            await self._call(self._set, account, record.to_json())

    async def delete(self, account: str) -> bool:
        async with self._lock:
            return bool(await self._call(self._delete, account))


class MemoryBackedStore(CredentialStore):
    """Credentials kept in this process only: for throwaway runs (the conformance client)."""

    def __init__(self) -> None:
        super().__init__()
        self._values: dict[str, str] = {}

    def _get(self, account: str) -> str | None:
        return self._values.get(account)

    def _set(self, account: str, value: str) -> None:
        self._values[account] = value

    def _delete(self, account: str) -> bool:
        return self._values.pop(account, None) is not None


__all__ = [
    "MAX_REMEMBERED_SCOPES",
    "STEP_UP_TTL_S",
    "CredentialRecord",
    "CredentialStore",
    "CredentialStoreLocked",
    "CredentialStoreUnavailable",
    "MemoryBackedStore",
    "account_of",
    "cap_scope",
    "union",
]
