"""Which URLs OAuth may touch: HTTPS, or plain HTTP on a loopback address only."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


class OAuthUrlRefused(Exception):
    """An OAuth endpoint or authorization URL that is neither HTTPS nor loopback HTTP."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.username or parts.password:
        return False  # credentials in a URL are never ours to send
    if parts.scheme == "https":
        return bool(parts.hostname)
    return parts.scheme == "http" and is_loopback_host(parts.hostname)


def require_allowed(url: str, what: str) -> None:
    if not allowed(url):
        raise OAuthUrlRefused(what)


def origin_of(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port
    if port is None:
        port = 443 if parts.scheme == "https" else 80 if parts.scheme == "http" else None
    return parts.scheme, (parts.hostname or "").lower(), port


__all__ = ["OAuthUrlRefused", "allowed", "is_loopback_host", "origin_of", "require_allowed"]
