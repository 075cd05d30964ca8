"""Which URLs OAuth may touch, for a given MCP server.

A server controls every OAuth URL the sidecar sees (the `resource_metadata` of its challenge,
its protected-resource metadata, its authorization server's endpoints), so each one is
checked before the sidecar sends a request to it or opens it in a browser:

- HTTPS, or plain HTTP on a loopback address; no credentials in the URL;
- no private, link-local, unique-local, shared (CGNAT), reserved or cloud-metadata address,
  in any spelling: `0x7f000001`, `2130706433`, `0177.0.0.1`, `127.1` and `::ffff:10.0.0.1`
  are normalised the way browsers (WHATWG URL) and `inet_aton` read them before they are
  classified;
- loopback only when the MCP server itself is loopback (local development, test fixtures);
- a non-public address the user configured as the server's own host stays usable for that
  host (an intranet server's own authorization endpoints): a server cannot point the
  sidecar anywhere it was not already told to connect.

Host names are not resolved: a name is judged by itself (`localhost` and `*.localhost` are
loopback, known metadata names are refused). Resolving would not make the check sound (the
address can change between the check and the connection) and would refuse the intranet
authorization servers whose names resolve to private addresses.
"""

from __future__ import annotations

import ipaddress
import string
import unicodedata
from typing import Literal
from urllib.parse import unquote, urlsplit

Reason = Literal["insecure", "blocked_address", "foreign_origin"]
HostClass = Literal["public", "loopback", "blocked", "invalid"]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
"""Names cloud platforms give their instance-metadata services (which answer on link-local or
shared addresses anyway, refused as addresses)."""

# Separators UTS #46 maps to "." (browsers apply it to hosts before parsing IPv4).
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_UNSAFE_URL_CHARACTERS = frozenset("\\") | frozenset(chr(c) for c in range(0x21)) | {"\x7f"}


class OAuthUrlRefused(Exception):
    """An OAuth URL the sidecar will not fetch or open; `reason` says which rule it breaks."""

    def __init__(self, what: str, reason: Reason = "insecure") -> None:
        super().__init__(what)
        self.what = what
        self.reason: Reason = reason


# -- hosts -------------------------------------------------------------------------------------


def _ipv4_number(part: str) -> int | None:
    """One dotted part, read as WHATWG URL does: `0x` hex, leading `0` octal, else decimal."""
    if not part:
        return None
    radix, digits = 10, string.digits
    if part[:2] in ("0x", "0X"):
        radix, digits, part = 16, string.hexdigits, part[2:]
    elif len(part) > 1 and part[0] == "0":
        radix, digits, part = 8, "01234567", part[1:]
    if not part:
        return 0
    if any(c not in digits for c in part):
        return None
    return int(part, radix)


def _ends_in_a_number(parts: list[str]) -> bool:
    last = parts[-1]
    if last and all(c in string.digits for c in last):
        return True
    return last[:2] in ("0x", "0X") and all(c in string.hexdigits for c in last[2:])


def _ipv4(parts: list[str]) -> ipaddress.IPv4Address | None:
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    value = values[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(values[:-1]))
    return ipaddress.IPv4Address(value)


def normalise_host(host: str) -> Address | str | None:
    """The address a URL host denotes, or the lower-case name; None for a host no parser agrees on.

    `host` is a URL's host as `urlsplit` gives it (brackets removed). Numeric IPv4 forms are
    read as browsers and `inet_aton` read them; IPv6 zone ids are dropped.
    """
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return None
    name = unicodedata.normalize("NFKC", unquote(host)).translate(_DOTS).lower()
    if name.endswith("."):
        name = name[:-1]
    if not name or name.startswith(".") or ".." in name or "%" in name:
        return None
    parts = name.split(".")
    if _ends_in_a_number(parts):
        return _ipv4(parts)  # a host that ends in a number is an address or nothing (WHATWG)
    return name


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one reaches: mapped, 6to4 or NAT64 (well-known prefix)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _address_class(address: Address) -> HostClass:
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return _address_class(embedded)
    if address.is_loopback:
        return "loopback"
    if (
        not address.is_global
        or address.is_multicast
        or address.is_link_local
        or address.is_reserved
        or address.is_unspecified
    ):
        return "blocked"  # private, link-local (cloud metadata), unique-local, shared, documentation
    return "public"


def classify_host(host: str | None) -> HostClass:
    """`public`, `loopback`, `blocked` (never contacted for a server elsewhere) or `invalid`."""
    if not host:
        return "invalid"
    found = normalise_host(host)
    if found is None:
        return "invalid"
    if isinstance(found, str):
        if found == "localhost" or found.endswith(".localhost"):
            return "loopback"
        return "blocked" if found in METADATA_NAMES else "public"
    return _address_class(found)


def is_loopback_host(host: str | None) -> bool:
    return classify_host(host) == "loopback"


# -- URLs --------------------------------------------------------------------------------------


def refusal(url: str, server_url: str) -> Reason | None:
    """Why OAuth for the server at `server_url` must not touch `url`, or None when it may."""
    if any(c in _UNSAFE_URL_CHARACTERS for c in url):
        return "insecure"  # characters URL parsers disagree on (`\\`, whitespace, controls)
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return "insecure"
    if parts.username is not None or parts.password is not None:
        return "insecure"  # credentials in a URL are never ours to send
    kind = classify_host(host)
    if kind == "invalid" or parts.scheme not in ("https", "http"):
        return "insecure"  # also a host no parser agrees on (`1.2.3.4.5`, `08.1.1.1`)
    if parts.scheme == "http" and kind != "loopback":
        return "insecure"
    if kind == "public":
        return None
    server_host = _server_host(server_url)
    if kind == "loopback":
        return None if classify_host(server_host) == "loopback" else "blocked_address"
    assert host is not None
    same_host = server_host is not None and normalise_host(host) == normalise_host(server_host)
    return None if same_host else "blocked_address"


def _server_host(server_url: str) -> str | None:
    try:
        return urlsplit(server_url).hostname
    except ValueError:
        return None


def allowed(url: str, server_url: str) -> bool:
    return refusal(url, server_url) is None


def require_allowed(url: str, what: str, server_url: str) -> None:
    reason = refusal(url, server_url)
    if reason is not None:
        raise OAuthUrlRefused(what, reason)


def origin_of(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port
    if port is None:
        port = 443 if parts.scheme == "https" else 80 if parts.scheme == "http" else None
    return parts.scheme, (parts.hostname or "").lower(), port


def require_same_origin(url: str, what: str, server_url: str) -> None:
    """Refuse `url` unless it is on the server's own origin (scheme, host and port)."""
    try:
        same = origin_of(url) == origin_of(server_url)
    except ValueError:
        same = False
    if not same:
        raise OAuthUrlRefused(what, "foreign_origin")


__all__ = [
    "METADATA_NAMES",
    "OAuthUrlRefused",
    "allowed",
    "classify_host",
    "is_loopback_host",
    "normalise_host",
    "origin_of",
    "refusal",
    "require_allowed",
    "require_same_origin",
]
