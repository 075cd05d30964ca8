"""`includeTools` / `excludeTools`: `*` globs over original MCP tool names, nothing else special."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=1024)
def _pattern(glob: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in glob.split("*")) + "$", re.DOTALL)


def matches(name: str, globs: Sequence[str]) -> bool:
    return any(_pattern(g).match(name) for g in globs)


def allowed(name: str, include: Sequence[str] | None, exclude: Sequence[str]) -> bool:
    """include None exposes everything; an empty include exposes nothing; exclude applies after."""
    if include is not None and not matches(name, include):
        return False
    return not matches(name, exclude)
