"""What the three model APIs have in common, as the fake model and the tests read them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Offered:
    """A tool a request offered the model: the name the model calls, and its description."""

    name: str
    description: str


@dataclass(frozen=True)
class Result:
    """A tool's result the host sent back: the tool's name, the text the model reads, and whether
    the host marked it an error (None when the API has no such mark)."""

    name: str
    text: str
    is_error: bool | None


class Dialect(Protocol):
    """One model API: reading a request body, and nothing about HTTP."""

    def offered(self, body: dict[str, Any]) -> list[Offered]:
        """Every tool the request offers the model, in order."""
        ...

    def announced(self, body: dict[str, Any]) -> list[str]:
        """Tools the request names to the model without offering them (Claude Code's deferred
        tools, behind its tool search)."""
        ...

    def results(self, body: dict[str, Any]) -> list[Result]:
        """The tool results the request's last turn carries."""
        ...

    def system(self, body: dict[str, Any]) -> str:
        """The request's system prompt (instructions), as one text."""
        ...

    def context(self, body: dict[str, Any]) -> str:
        """Every text the model reads in the request but the tools' definitions."""
        ...


def sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    """Server-sent events: `event:` (when named) and one `data:` line of JSON each."""
    chunks = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        chunks.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(chunks).encode()


async def once(payload: bytes) -> AsyncIterator[bytes]:
    """A streamed body of one chunk (the whole answer is known before it starts)."""
    yield payload


def texts(value: Any) -> str:
    """The text of a tool result's content however an API nests it: a string, a list of blocks
    with `text`, or an object; objects without text are shown as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(texts(item) for item in value)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return str(value["text"])
        return json.dumps(value, sort_keys=True)
    return json.dumps(value)
