"""DPoP (RFC 9449): an ES256 key per server, and the proofs that bind its tokens to that key.

With `oauthDpop: true` a login creates a P-256 key, keeps its private half in the server's
keyring record only (never on disk; with no keyring there is no login), and signs a proof
for every token request and every request to the server. A token the server then steals from
a log or a proxy is useless without the key. Nonces (`DPoP-Nonce`) are kept per origin, for
the authorization server and the resource server apart, as the RFC asks.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ALGORITHM = "ES256"
NONCE_ERROR = "use_dpop_nonce"
MAX_NONCE_CHARS = 512


class DpopKeyInvalid(Exception):
    """The stored key is missing or not a P-256 private key: the tokens bound to it are unusable."""


class DpopUnsupported(Exception):
    """The authorization server does not offer DPoP with ES256, or issued a token not bound to the key."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(slots=True)
class DpopKey:
    """One server's key. `private_jwk()` is what the keyring stores."""

    _key: Any = field(repr=False)

    @classmethod
    def generate(cls) -> DpopKey:
        from cryptography.hazmat.primitives.asymmetric import ec

        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_jwk(cls, jwk: dict[str, Any] | None) -> DpopKey:
        from cryptography.hazmat.primitives.asymmetric import ec

        if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
            raise DpopKeyInvalid()
        try:
            d = int.from_bytes(_unb64(str(jwk["d"])), "big")
            key = ec.derive_private_key(d, ec.SECP256R1())
        except (KeyError, ValueError, TypeError):
            raise DpopKeyInvalid() from None
        found = cls(key)
        if found.public_jwk() != {k: jwk.get(k) for k in ("crv", "kty", "x", "y")}:
            raise DpopKeyInvalid()
        return found

    def public_jwk(self) -> dict[str, str]:
        numbers = self._key.public_key().public_numbers()
        return {
            "crv": "P-256",
            "kty": "EC",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }

    def private_jwk(self) -> dict[str, str]:
        d = self._key.private_numbers().private_value
        return {**self.public_jwk(), "d": _b64(d.to_bytes(32, "big"))}

    def thumbprint(self) -> str:
        """RFC 7638: SHA-256 over the required members, sorted, without spaces."""
        canonical = json.dumps(self.public_jwk(), sort_keys=True, separators=(",", ":"))
        return _b64(hashlib.sha256(canonical.encode()).digest())

    def proof(self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None) -> str:
        """A fresh proof JWT for one request (RFC 9449 §4.2)."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.public_jwk()}
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": target_uri(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        signing_input = (
            _b64(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + _b64(json.dumps(claims, separators=(",", ":")).encode())
        )
        r, s = decode_dss_signature(self._key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + _b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


DEFAULT_PORTS = {"http": 80, "https": 443}


def target_uri(url: str) -> str:
    """`htu`: the request URI without query and fragment (RFC 9449 §4.2), normalised (RFC 3986 §6):
    no user information (never inside a proof a server may log), the host lower-cased, no default port."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or port == DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", "", ""))


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


@dataclass(slots=True)
class Nonces:
    """The latest `DPoP-Nonce` each origin sent; a nonce is opaque text, kept only in memory."""

    by_origin: dict[str, str] = field(default_factory=dict)

    def get(self, url: str) -> str | None:
        return self.by_origin.get(origin(url))

    def note(self, url: str, headers: Any) -> bool:
        """Keep the response's nonce, if it sent a usable one; True when it is new."""
        value = headers.get("dpop-nonce")
        if not isinstance(value, str) or not value or len(value) > MAX_NONCE_CHARS or not value.isascii():
            return False
        if not value.isprintable() or value == self.get(url):
            return False
        self.by_origin[origin(url)] = value
        return True


def asks_for_nonce(status: int, headers: Any, body: bytes | None) -> bool:
    """The answer is the RFC's "use this nonce": a 400 `use_dpop_nonce` from the authorization
    server, or a 401 whose `WWW-Authenticate: DPoP` challenge says `error="use_dpop_nonce"`."""
    if not headers.get("dpop-nonce"):
        return False
    if status == 401:
        challenge = str(headers.get("www-authenticate") or "")
        return challenge.lower().startswith("dpop") and NONCE_ERROR in challenge
    if status == 400 and body:
        try:
            return bool(json.loads(body).get("error") == NONCE_ERROR)
        except (ValueError, AttributeError, RecursionError):
            return False
    return False


def supports_es256(algorithms: Any) -> bool:
    """`dpop_signing_alg_values_supported`, as the authorization server's metadata lists it."""
    return isinstance(algorithms, list) and ALGORITHM in algorithms


__all__ = [
    "ALGORITHM",
    "DpopKey",
    "DpopKeyInvalid",
    "DpopUnsupported",
    "Nonces",
    "asks_for_nonce",
    "origin",
    "supports_es256",
    "target_uri",
]
