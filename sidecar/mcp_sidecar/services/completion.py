"""Argument completion for one advertised template variable or prompt argument.

Suggestions are untrusted server data, not a schema. The server must advertise completion
support and the exact template (or prompt); the argument must belong to it. `values` keep
the server's strings; the `text` rendering shows each on one sanitised line. A value holding
a control, bidirectional or invisible character (or a line break) is left out and counted in
`dropped`: its sanitised row would be another value than the one the server meant, and a
model would send that one back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from mcp_sidecar.connections import templates
from mcp_sidecar.output import completion_text, shaping
from mcp_sidecar.output.sanitize import has_controls
from mcp_sidecar.protocol.errors import fail, refused_disabled
from mcp_sidecar.services.reading import MAX_URI_CHARS

if TYPE_CHECKING:
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.protocol.results import CompleteResult, Redacted, Spill
    from mcp_sidecar.services.configuration import Configuration
    from mcp_sidecar.services.prompts import Prompts
    from mcp_sidecar.services.reading import Reading

MAX_REQUEST_BYTES = 64 * 1024


class Completion:
    """Argument completion for an advertised template variable or prompt argument."""

    def __init__(self, configuration: Configuration, reading: Reading, prompts: Prompts) -> None:
        """`reading` and `prompts` say whether the server advertises the template or the prompt."""
        self._configuration = configuration
        self._reading = reading
        self._prompts = prompts

    async def _check_template(self, conn: ServerConnection, name: str, variable: str, op: str) -> None:
        """An advertised template of the server, with `variable` among its variables."""
        if len(name) > MAX_URI_CHARS:
            raise fail("completion_invalid", op, f"The template is longer than {MAX_URI_CHARS} characters.", conn.name)
        await self._reading.advertised_template(conn, name, op, "completion_invalid")
        try:
            variables = templates.variable_names(name)
        except templates.TemplateError as exc:
            raise fail("completion_invalid", op, str(exc), conn.name) from None
        if variable not in variables:
            raise fail("completion_invalid", op, f"{variable!r} is not a variable of that template.", conn.name)

    async def _check_prompt(self, conn: ServerConnection, name: str, argument: str, op: str) -> None:
        """An advertised (not refused) prompt of the server, declaring `argument`."""
        found = await self._prompts.advertised_prompt(
            conn, name, op, ("completion_invalid", "The server does not advertise that prompt.")
        )
        declared = [a.get("name") for a in found.get("arguments") or [] if isinstance(a, dict)]
        if argument not in declared:
            raise fail("completion_invalid", op, f"{argument!r} is not an argument of that prompt.", conn.name)

    async def complete(
        self,
        server: str,
        reference: tuple[Literal["template", "prompt"], str],
        argument: tuple[str, str],
        context: Mapping[str, str] | None = None,
    ) -> CompleteResult:
        op = "complete"
        self._configuration.ensure_loaded()
        kind, name = reference
        request = {"ref": name, "argument": list(argument), "arguments": dict(context or {})}
        if len(json.dumps(request, ensure_ascii=False).encode("utf-8")) > MAX_REQUEST_BYTES:
            raise fail("completion_invalid", op, "The completion request exceeds 64 KiB.", server)
        conn = self._configuration.connection(server, op)
        if conn.config.disabled:
            raise refused_disabled(op, server, conn.config.approval_required)
        if kind == "template":
            await self._check_template(conn, name, argument[0], op)
        else:
            await self._check_prompt(conn, name, argument[0], op)
        if "completions" not in conn.capabilities:
            raise fail("completions_unsupported", op, "The server does not offer completions.", server)
        answer = await conn.complete(reference, argument, dict(context or {}), op)
        raw = answer.result
        offered = [v for v in raw["values"] if isinstance(v, str)]
        values = [v for v in offered if not has_controls(v)]
        shown, spilled, notice = shaping.shape_values(values, server, f"{argument[0]}", raw)
        ref: _Reference = {"template": name} if kind == "template" else {"prompt": name}
        counts: _Counts = {}
        if "total" in raw:
            counts["total"] = raw["total"]
        if "hasMore" in raw:
            counts["hasMore"] = raw["hasMore"]
        spill: _Spill = {"spill": spilled} if spilled is not None else {}
        redacted: Redacted = {"redacted": answer.redacted} if answer.redacted else {}
        result: CompleteResult = {
            "server": server,
            **ref,
            "argument": {"name": argument[0], "value": argument[1]},
            "values": shown,
            "dropped": len(offered) - len(values),
            **counts,
            "untrusted": True,
            "truncated": bool(notice),
            **spill,
            **redacted,
            "text": "",
        }
        result["text"] = completion_text.render(result, notice)
        return result


class _Reference(TypedDict, total=False):
    template: str
    prompt: str


class _Counts(TypedDict, total=False):
    total: Any
    hasMore: Any


class _Spill(TypedDict, total=False):
    spill: Spill
