"""Icons a server declares (MCP `icons` on tools, resources, templates, prompts and `serverInfo`).

An icon's `src` is a URI an editor will load and render, so only two kinds pass, each bounded:

- `data:` URIs of an image type (PNG, JPEG, GIF, WebP, SVG), at most 64 KiB: they load
  nothing from anywhere;
- `https:` URLs with a host, at most 2,048 characters, every character printable ASCII (an
  internationalised host arrives in its `xn--` form): nothing hidden can ride along.

Anything else (`http:`, `javascript:`, `file:`, a relative path, an oversized or non-image
data URI, control or invisible characters) is dropped without a word, as is an icon whose
`mimeType` is not one of the image types or whose `sizes` or `theme` are malformed; at most
four icons per entry are kept, the first valid ones in the server's order. Only `src`,
`mimeType`, `sizes` and `theme` pass. The catalog keeps the server's descriptors as they
came (the disk cache too); this runs on every view of them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import Icon

MAX_ICONS = 4
MAX_DATA_URI_CHARS = 64 * 1024
MAX_HTTPS_URI_CHARS = 2_048
MAX_SIZES = 8
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"})
THEMES = ("light", "dark")

_DATA = re.compile(r"data:(?P<type>[a-z0-9.+-]+/[a-z0-9.+-]+)(?P<params>(?:;[^,;]*)*),", re.IGNORECASE)
_HTTPS = re.compile(r"https://(?P<authority>[^/?#]+)(?:[/?#]|$)", re.IGNORECASE)
_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?|\[[0-9a-f:.]+\]")
_PORT = re.compile(r":[0-9]{1,5}")
_SIZE = re.compile(r"any|[1-9][0-9]{0,4}x[1-9][0-9]{0,4}")
_PRINTABLE_ASCII = re.compile(r"[!-~]+")
"""Printable ASCII without the space: what a URI is made of (RFC 3986)."""
_DATA_TEXT = re.compile(r"[ -~]+")
"""A data URI's text may hold spaces (an SVG written out, not percent-encoded); no controls."""


def _data_uri_ok(src: str) -> bool:
    if len(src) > MAX_DATA_URI_CHARS or not _DATA_TEXT.fullmatch(src):
        return False
    match = _DATA.match(src)
    return match is not None and match["type"].lower() in IMAGE_TYPES


def _https_ok(src: str) -> bool:
    if len(src) > MAX_HTTPS_URI_CHARS or not _PRINTABLE_ASCII.fullmatch(src):
        return False
    match = _HTTPS.match(src)
    if match is None:
        return False
    authority = match["authority"]
    if "@" in authority:
        return False  # credentials in an icon URL: a disguised host, or a secret leaking to logs
    host, port = authority, ""
    if not authority.endswith("]") and ":" in authority:
        host, _, rest = authority.rpartition(":")
        port = ":" + rest
    return bool(_HOST.fullmatch(host)) and (not port or bool(_PORT.fullmatch(port)))


def src_ok(src: Any) -> bool:
    """Whether an icon's `src` may reach an editor."""
    if not isinstance(src, str):
        return False
    scheme = src[:8].lower()
    if scheme.startswith("data:"):
        return _data_uri_ok(src)
    if scheme == "https://":
        return _https_ok(src)
    return False


def _icon(value: Any) -> Icon | None:
    if not isinstance(value, dict) or not src_ok(value.get("src")):
        return None
    icon: Icon = {"src": value["src"]}
    mime = value.get("mimeType")
    if mime is not None:
        if not isinstance(mime, str) or mime.lower() not in IMAGE_TYPES:
            return None
        icon["mimeType"] = mime
    sizes = value.get("sizes")
    if sizes is not None:
        if not isinstance(sizes, list) or len(sizes) > MAX_SIZES:
            return None
        if not all(isinstance(s, str) and _SIZE.fullmatch(s) for s in sizes):
            return None
        icon["sizes"] = list(sizes)
    theme = value.get("theme")
    if theme is not None:
        if theme not in THEMES:
            return None
        icon["theme"] = theme
    return icon


def safe_icons(value: Any) -> list[Icon]:
    """The icons of a descriptor's `icons` that may reach an editor: at most four, in order."""
    if not isinstance(value, list):
        return []
    kept: list[Icon] = []
    for item in value:
        icon = _icon(item)
        if icon is not None:
            kept.append(icon)
            if len(kept) == MAX_ICONS:
                break
    return kept


__all__ = ["IMAGE_TYPES", "MAX_DATA_URI_CHARS", "MAX_HTTPS_URI_CHARS", "MAX_ICONS", "safe_icons", "src_ok"]
