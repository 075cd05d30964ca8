"""Prompt previews and accepted snapshots.

A person picks a prompt and supplies its arguments; `preview` fetches it with the server's
`prompts/get` (the prompt must be in the server's prompt catalog) and holds the sanitised
messages under a random `previewId`. `use` hands the snapshot over once; `discard` drops
it. Nothing is written anywhere, and no tool is activated or permitted.

Every message keeps the server's role as a field of source-labelled data: the snapshot is
one block of untrusted content, never conversation history or system instructions. Every
text is stripped of terminal control sequences and of control, bidi, zero-width and TAG
characters (`output/sanitize.py`), in the messages themselves since they are what the
person reviews and the model receives. The prompt name is compared after NFC normalisation;
a prompt the catalog refused for its name fails with that refusal (`catalog_entry_invalid`).
Text and embedded text resources are shown; any other content (images, audio, blobs, resource
links), or a prompt over 2,000 lines or 50 KiB, refuses the whole prompt: nothing is truncated
or spilled.

Pending previews end on use, discard, a configuration reload, and the disconnection (or
reconnection) of their server.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from mcp_sidecar.catalog import names
from mcp_sidecar.catalog.names import nfc
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.events import EventHub, Reconciled, StatusChanged
from mcp_sidecar.output import prompt_text
from mcp_sidecar.output.limits import MAX_LINES, MAX_TEXT_BYTES, line_count, utf8_size
from mcp_sidecar.output.sanitize import one_line, strip_controls
from mcp_sidecar.protocol.errors import DiagnosticCode, fail, refused_disabled
from mcp_sidecar.protocol.methods import DEFAULT_SESSION

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        PromptBody,
        PromptDiscardResult,
        PromptMessage,
        PromptResource,
        PromptSnapshot,
        PromptUseResult,
        Redacted,
    )
    from mcp_sidecar.services.catalogs import Catalogs
    from mcp_sidecar.services.configuration import Configuration

MAX_ARGUMENT_BYTES = 64 * 1024
MAX_PENDING = 32
"""Pending previews kept at once; the oldest goes first."""


class _Description(TypedDict, total=False):
    description: str


class _Source(TypedDict, total=False):
    resource: PromptResource


@dataclass(frozen=True, slots=True)
class Preview:
    id: str
    session: str
    """The session that asked for it: ending the session discards it."""
    server: str
    name: str
    messages: list[PromptMessage]
    description: str | None
    connection: ServerConnection
    generation: int
    redacted: int = 0
    """How many of the server's secret values were replaced by `***` in its answer."""

    def snapshot(self) -> PromptBody:
        described: _Description = {"description": self.description} if self.description else {}
        redacted: Redacted = {"redacted": self.redacted} if self.redacted else {}
        return {
            "server": self.server,
            "name": self.name,
            **described,
            "messageCount": len(self.messages),
            "messages": self.messages,
            "untrusted": True,
            **redacted,
            "text": prompt_text.render(self.server, self.name, self.messages, self.redacted),
        }


class Prompts:
    """Prompt previews: fetched through the prompt's server, pending in memory only, handed over once."""

    def __init__(
        self, configuration: Configuration, registry: ServerRegistry, catalogs: Catalogs, hub: EventHub
    ) -> None:
        self._configuration = configuration
        self._registry = registry
        self._catalogs = catalogs
        self._pending: dict[str, Preview] = {}
        self.epoch = 0
        """Increments whenever every pending preview is invalidated (configuration reload)."""
        hub.subscribe(StatusChanged, self._status_changed)
        hub.subscribe(Reconciled, lambda event: self.clear())

    def _status_changed(self, event: StatusChanged) -> None:
        if event.conn.state in ("idle", "failed", "needs_login", "disabled"):
            self.drop_server(event.conn.name)  # a preview is bound to the connection that made it

    def _add(self, preview: Preview) -> None:
        while len(self._pending) >= MAX_PENDING:
            del self._pending[next(iter(self._pending))]
        self._pending[preview.id] = preview

    def clear(self) -> None:
        self.epoch += 1
        self._pending.clear()

    def drop_server(self, server: str) -> None:
        for key in [k for k, p in self._pending.items() if p.server == server]:
            del self._pending[key]

    def drop_session(self, session: str) -> int:
        """Discard the session's pending previews; how many there were."""
        keys = [k for k, p in self._pending.items() if p.session == session]
        for key in keys:
            del self._pending[key]
        return len(keys)

    def __len__(self) -> int:
        return len(self._pending)

    async def advertised_prompt(
        self, conn: ServerConnection, name: str, op: str, missing: tuple[DiagnosticCode, str]
    ) -> dict[str, Any]:
        """The server's prompt named `name` (NFC).

        A refused prompt fails with its own diagnostic, one the server does not list with `missing`.
        """
        catalog = await self._catalogs.prompt_catalog(conn, op)
        wanted = nfc(name)
        found = next((p for p in catalog.items if p.get("name") == wanted), None)
        if found is not None:
            return found
        refused = names.find(catalog.refused, wanted)
        if refused is not None:
            raise names.refused_error(refused, op)
        raise fail(missing[0], op, missing[1], conn.name)

    async def enabled_prompts(self, operation: str) -> list[tuple[str, list[dict[str, Any]]]]:
        """Each enabled server (of the client's profile) with its advertised prompts, in configuration order;
        a server that cannot list them now has none to offer now."""
        self._configuration.ensure_loaded()
        conns = [c for c in self._registry if not c.config.disabled and self._configuration.searches(c.name)]
        found = await self._catalogs.listed_by_each(conns, "prompts", operation)
        return [(conn.name, list(c.items) if c is not None else []) for conn, c in zip(conns, found, strict=True)]

    async def preview(
        self, server: str, name: str, arguments: Mapping[str, Any], session: str = DEFAULT_SESSION
    ) -> PromptSnapshot:
        op = "prompt"
        self._configuration.ensure_loaded()
        if any(not isinstance(v, str) for v in arguments.values()):
            raise fail("prompt_invalid", op, "Prompt arguments must be strings.", server)
        if len(json.dumps(dict(arguments), ensure_ascii=False).encode("utf-8")) > MAX_ARGUMENT_BYTES:
            raise fail("prompt_invalid", op, "The prompt arguments exceed 64 KiB.", server)
        conn = self._configuration.connection(server, op)
        if conn.config.disabled:
            raise refused_disabled(op, server, conn.config.approval_required)
        epoch = self.epoch
        name = nfc(name)
        found = await self.advertised_prompt(
            conn, name, op, ("prompt_not_found", "The server does not advertise a prompt of that name.")
        )
        declared = [a for a in found.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
        unknown = sorted(set(arguments) - {a["name"] for a in declared})
        if unknown:
            raise fail("prompt_invalid", op, f"Not an argument of that prompt: {', '.join(unknown)}.", server)
        missing = [a["name"] for a in declared if a.get("required") and a["name"] not in arguments]
        if missing:
            raise fail("prompt_invalid", op, f"Missing required argument(s): {', '.join(missing)}.", server)
        generation = conn.generation
        answer = await conn.get_prompt(name, {k: str(v) for k, v in arguments.items()}, op)
        raw = answer.result
        messages = convert(raw.get("messages") or [], server)
        if self.epoch != epoch or not self._registry.is_current(conn) or conn.generation != generation:
            raise fail("preview_not_found", op, "The configuration or connection changed while fetching.", server)
        description = raw.get("description")
        entry = Preview(
            id="pv_" + secrets.token_urlsafe(12),
            session=session,
            server=server,
            name=name,
            messages=messages,
            description=strip_controls(description) if isinstance(description, str) else None,
            connection=conn,
            generation=generation,
            redacted=answer.redacted,
        )
        self._add(entry)
        return {"previewId": entry.id, **entry.snapshot()}

    def use(self, preview_id: str) -> PromptUseResult:
        entry = self._take(preview_id, "prompt use")
        return {"previewId": entry.id, "accepted": True, **entry.snapshot()}

    def discard(self, preview_id: str) -> PromptDiscardResult:
        entry = self._take(preview_id, "prompt discard")
        return {"previewId": entry.id, "server": entry.server, "name": entry.name, "discarded": True}

    def _take(self, preview_id: str, op: str) -> Preview:
        entry = self._pending.pop(preview_id, None)
        if entry is None:
            raise fail("preview_not_found", op, "No pending preview has that id (used, discarded or invalidated).")
        conn = entry.connection
        current = self._registry.is_current(conn) and conn.state == "connected"
        if not current or conn.generation != entry.generation:
            raise fail("preview_not_found", op, "The preview's server disconnected since the preview.", entry.server)
        return entry


def convert(raw: list[Any], server: str) -> list[PromptMessage]:
    """The server's messages as source-labelled text blocks; anything else refuses the prompt."""
    op = "prompt"
    out: list[PromptMessage] = []
    lines = size = 0
    for index, message in enumerate(raw):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role not in ("user", "assistant") or not isinstance(content, dict):
            why = f"Message {index + 1} has a role other than user or assistant."
            raise fail("prompt_unsupported", op, why, server)
        kind = content.get("type")
        source: _Source = {}
        resource = content.get("resource") if kind == "resource" else None
        if kind == "text" and isinstance(content.get("text"), str):
            text = strip_controls(content["text"])
        elif isinstance(resource, dict) and isinstance(resource.get("text"), str):
            uri = one_line(str(resource.get("uri", "")))
            mime = resource.get("mimeType")
            source["resource"] = {"uri": uri, "mimeType": one_line(mime)} if isinstance(mime, str) else {"uri": uri}
            text = strip_controls(resource["text"])
        else:
            what = "a binary resource" if kind == "resource" else f"content of type {kind!r}"
            message_text = f"Message {index + 1} holds {what}, which the sidecar cannot show as text."
            raise fail("prompt_unsupported", op, message_text, server)
        out.append({"index": index, "role": role, **source, "content": {"type": "text", "text": text}})
        lines += line_count(text)
        size += utf8_size(text) + 1
        if lines > MAX_LINES or size > MAX_TEXT_BYTES:
            raise fail("prompt_too_large", op, "The prompt exceeds 2,000 lines or 50 KiB; it is refused whole.", server)
    return out
