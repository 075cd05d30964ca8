"""The hostile fixture server's configuration, and the check that no rendering lets its payload through."""

from __future__ import annotations

import importlib.util
from typing import Any

from support.servers import fixture_path, fixture_stdio

# The payloads come from the fixture's own file (it imports the SDK only to serve).
_spec = importlib.util.spec_from_file_location("hostile_fixture", fixture_path("hostile.py"))
assert _spec is not None
assert _spec.loader is not None
fixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixture)

HOSTILE: str = fixture.HOSTILE
TAGS: str = fixture.TAGS
INVALID_TOOLS: tuple[str, ...] = fixture.INVALID_TOOLS
INVALID_URIS: tuple[str, ...] = fixture.INVALID_URIS
INVALID_TEMPLATE: str = fixture.INVALID_TEMPLATE
INVALID_PROMPTS: tuple[str, ...] = fixture.INVALID_PROMPTS
COMPLETIONS: tuple[str, ...] = fixture.COMPLETIONS
CP1252: str = fixture.CP1252
PROGRESS: str = fixture.PROGRESS
SMUGGLED: str = fixture.SMUGGLED

_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_INVISIBLE = {0x00AD, 0x180E, *range(0x200B, 0x200E), *range(0x2060, 0x2070), 0xFEFF, *range(0xFFF9, 0xFFFC)}
FORBIDDEN = frozenset(
    {*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), *_BIDI, *_INVISIBLE, *range(0xE0000, 0xE0080)}
)
"""No rendering may hold these: C0 (but newline and tab), ESC, DEL, C1, bidi, zero-width, TAG."""


def servers() -> dict[str, Any]:
    """`hostile` and `hostile__a`: the same fixture under names that meet at `__`."""
    return {"hostile": fixture_stdio("hostile.py", "stdio"), "hostile__a": fixture_stdio("hostile.py", "stdio")}


def forbidden(text: str) -> list[str]:
    """The forbidden code points in `text`, as U+XXXX (empty when it is clean)."""
    return [f"U+{ord(c):04X}" for c in text if ord(c) in FORBIDDEN]


def all_strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *all_strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in all_strings(item)]
    return []
