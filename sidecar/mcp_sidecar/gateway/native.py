"""Native tool names for MCP hosts: `<server>__<tool>`, always within `^[A-Za-z0-9_-]{1,64}$`.

Hosts such as Claude's API refuse dots and long names, so a name that needs a character
replaced, or is longer than 64, or is already taken in the host's list by another tool, gets
a short hash of its exact id (`server.tool`) instead of its tail: the same id always gets the
same suffix, and the activation text states each tool's native name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container

MAX_CHARS = 64
SUFFIX_CHARS = 8
"""An underscore and seven hex digits of the id's SHA-256."""
ALLOWED = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
_OTHER = re.compile(r"[^A-Za-z0-9_-]")


def plain(server: str, tool: str) -> str:
    """`server__tool`, possibly with characters hosts refuse."""
    return f"{server}__{tool}"


def hashed(server: str, tool: str, attempt: int = 0) -> str:
    """`server__tool` with refused characters replaced, cut to fit a stable hash of the exact id
    (and of `attempt`, when an earlier attempt's name was taken)."""
    salt = f"#{attempt}" if attempt else ""
    digest = hashlib.sha256(f"{server}.{tool}{salt}".encode()).hexdigest()[: SUFFIX_CHARS - 1]
    base = _OTHER.sub("_", plain(server, tool))[: MAX_CHARS - SUFFIX_CHARS].rstrip("_") or "t"
    return f"{base}_{digest}"


def native_name(server: str, tool: str, taken: Container[str]) -> str:
    """The name a host sees for `server.tool`; `taken` are the names other tools have in its list.

    A server names its own tools, so it could name one exactly what another tool's hash would
    be: a hashed name that is taken is hashed again (with a counter) until it is free.
    """
    name = plain(server, tool)
    if ALLOWED.fullmatch(name) and name not in taken:
        return name
    attempt = 0
    while (name := hashed(server, tool, attempt)) in taken:
        attempt += 1
    return name
