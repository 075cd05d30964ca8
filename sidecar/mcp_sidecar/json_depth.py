"""How deep JSON nests, found without a recursive parser, and nesting cut to a bound.

JSON parsers recurse: the SDK's (pydantic-core) refuses a message nested more than about 200
levels, and Python's `json` raises RecursionError near 1,000. A server that lists one tool
whose input schema nests 900 levels would otherwise make its whole answer unreadable, and the
request waits for its time limit although the answer came at once. Here the nesting is read
from the bytes alone (numpy, no recursion): `structure` finds every bracket outside a string
and the depth it leaves, `prune` replaces each value nested deeper than a bound with a short
marker string, so the rest of the message parses and the entry that held the deep value is
refused on its own (`catalog/names.py`), and `nesting` measures a parsed value iteratively.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

MESSAGE_DEPTH = 128
"""The deepest nesting of one JSON-RPC message passed to the SDK's parser (which stops near 200);
values deeper are replaced by `MARKER`."""
MARKER = b'"[nested deeper than the sidecar reads: left out]"'


class Structure(NamedTuple):
    """The brackets of a JSON text outside its strings, in order."""

    positions: Any
    """Byte offsets (numpy int64)."""
    opens: Any
    """True for `{` and `[` (numpy bool)."""
    depth: Any
    """The nesting after each bracket: 1 after the root's `{`, 0 after its `}` (numpy int64)."""


def structure(data: bytes) -> Structure | None:
    """The brackets of `data` outside JSON strings; None when a string is left open.

    A quote ends a string unless an odd run of backslashes precedes it, as JSON reads it. Text
    that is not JSON still gets an answer (the brackets as they fall); a parser decides the rest.
    """
    import numpy as np

    raw = np.frombuffer(data, np.uint8)
    quotes = np.flatnonzero(raw == 0x22)
    # Only a quote right after a backslash may be escaped: it is when that run of backslashes is odd.
    escaped = quotes[(quotes > 0) & (raw[np.maximum(quotes - 1, 0)] == 0x5C)]
    if escaped.size:
        slashes = np.flatnonzero(raw == 0x5C)
        first = np.ones(slashes.size, bool)
        first[1:] = slashes[1:] != slashes[:-1] + 1
        run_start = slashes[np.maximum.accumulate(np.where(first, np.arange(slashes.size), 0))]
        last = np.searchsorted(slashes, escaped) - 1  # the backslash right before each of them
        odd = (escaped - run_start[last]) % 2 == 1
        quotes = np.setdiff1d(quotes, escaped[odd], assume_unique=True)
    if quotes.size % 2:
        return None
    # `{` `[` `}` `]` are 0x7B 0x5B 0x7D 0x5D: one mask finds them (with `Y _ y` and DEL, dropped next).
    marks = np.flatnonzero((raw & 0xD9) == 0x59)
    low = raw[marks] & 0x1F
    marks = marks[(low == 0x1B) | (low == 0x1D)]
    if quotes.size:
        marks = marks[np.searchsorted(quotes, marks) % 2 == 0]  # an even count of quotes before: outside
    kinds = raw[marks]
    opens = (kinds == 0x7B) | (kinds == 0x5B)
    depth = np.cumsum(np.where(opens, 1, -1))
    return Structure(marks.astype(np.int64), opens, depth)


def max_depth(data: bytes) -> int | None:
    """The deepest nesting in `data`; None when a string is left open."""
    found = structure(data)
    if found is None:
        return None
    return int(found.depth.max()) if found.depth.size else 0


def prune(data: bytes, limit: int = MESSAGE_DEPTH, marker: bytes = MARKER) -> bytes | None:
    """`data` with every object or array nested deeper than `limit` replaced by `marker`; `data`
    itself when nothing is that deep; None when its brackets do not pair (not JSON)."""
    import numpy as np

    found = structure(data)
    if found is None:
        return None
    depth, opens, positions = found.depth, found.opens, found.positions
    if not depth.size or int(depth.max()) <= limit:
        return data
    if int(depth.min()) < 0:
        return None
    starts = positions[opens & (depth == limit + 1)]
    ends = positions[~opens & (depth == limit)]
    ends = ends[np.searchsorted(ends, starts[0]) :] if starts.size else ends
    if ends.size < starts.size or (starts.size and (ends[: starts.size] < starts).any()):
        return None  # a deep container that never closes
    ends = ends[: starts.size]
    if starts.size > 1 and (starts[1:] < ends[:-1]).any():
        return None
    pieces: list[bytes] = []
    at = 0
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        pieces += [data[at:start], marker]
        at = end + 1
    pieces.append(data[at:])
    return b"".join(pieces)


def nesting(value: Any, limit: int) -> int:
    """How many objects and arrays `value` nests (a scalar: 0), counted without recursion; stops
    counting past `limit` (returns `limit + 1`)."""
    deepest = 0
    stack: list[tuple[Iterable[Any], int]] = [((value,), 0)]
    while stack:
        items, level = stack.pop()
        for item in items:
            if isinstance(item, dict | list):
                inner = level + 1
                if inner > limit:
                    return limit + 1
                deepest = max(deepest, inner)
                stack.append((item.values() if isinstance(item, dict) else item, inner))
    return deepest
