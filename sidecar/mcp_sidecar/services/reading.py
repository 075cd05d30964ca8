"""Resource reads: one exact URI, or an advertised URI template expanded by the SDK.

A read goes through the named server's `resources/read` only. Nothing here opens a file or
makes an HTTP request, whatever the URI's scheme, and there is no fallback. A read never
starts OAuth, follows links in the content or subscribes. Each read fetches fresh content
(the SDK client has no cache), whole, before the output limits apply; the result names the
server and URIs and labels the content untrusted. A URI with a control, bidi, zero-width or
TAG character is refused (`resource_invalid`); the `text` rendering is sanitised, while
`contents` keep the server's data as it came.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from mcp_sidecar.connections import templates
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.output import read_text, shaping
from mcp_sidecar.output.sanitize import has_controls
from mcp_sidecar.protocol.errors import DiagnosticCode, fail, refused_disabled

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import DisplayBlock, ReadResult, Redacted, Spill
    from mcp_sidecar.services.catalogs import Catalogs, ListCatalog
    from mcp_sidecar.services.configuration import Configuration

MAX_URI_CHARS = 4_096
MAX_ARGUMENT_BYTES = 64 * 1024
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+\Z")
_SPACE = re.compile(r"[\x00-\x20\x7f]")


def check_uri(uri: str, operation: str, server: str | None) -> None:
    """An exact absolute URI (`scheme:rest`), at most 4,096 characters, no spaces, controls or invisible characters."""
    if len(uri) > MAX_URI_CHARS:
        raise fail("resource_invalid", operation, f"The URI is longer than {MAX_URI_CHARS} characters.", server)
    if has_controls(uri):
        raise fail(
            "resource_invalid", operation, "The URI holds control, bidirectional or invisible characters.", server
        )
    if not _ABSOLUTE.match(uri) or _SPACE.search(uri):
        raise fail("resource_invalid", operation, "The URI is not an exact absolute URI (scheme:...).", server)


def expand(template: str, arguments: Mapping[str, Any], operation: str, server: str) -> str:
    """The concrete URI for `arguments`: every variable supplied, no others, within the limits."""
    size = len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > MAX_ARGUMENT_BYTES:
        raise fail("resource_invalid", operation, "The template arguments exceed 64 KiB.", server)
    for name, value in arguments.items():
        if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise fail(
                "resource_invalid", operation, f"Argument {name!r} must be a string or an array of strings.", server
            )
    try:
        names = templates.variable_names(template)
        missing = [n for n in names if n not in arguments]
        extra = sorted(set(arguments) - set(names))
        if missing:
            raise fail("resource_invalid", operation, f"Missing template argument(s): {', '.join(missing)}.", server)
        if extra:
            raise fail("resource_invalid", operation, f"Argument(s) not in the template: {', '.join(extra)}.", server)
        uri = templates.expand(template, arguments)
    except templates.TemplateError as exc:
        raise fail("resource_invalid", operation, str(exc), server) from None
    if len(uri) > MAX_URI_CHARS:
        raise fail(
            "resource_invalid", operation, f"The expanded URI is longer than {MAX_URI_CHARS} characters.", server
        )
    return uri


class Reading:
    """Resource reads through the named server, and every enabled server's resource catalog."""

    def __init__(self, configuration: Configuration, registry: ServerRegistry, catalogs: Catalogs) -> None:
        self._configuration = configuration
        self._registry = registry
        self._catalogs = catalogs

    def _open(self, server: str, operation: str) -> ServerConnection:
        conn = self._configuration.connection(server, operation)
        if conn.config.disabled:
            raise refused_disabled(operation, server, conn.config.approval_required)
        return conn

    async def advertised_template(
        self, conn: ServerConnection, template: str, operation: str, code: DiagnosticCode
    ) -> None:
        """Fail with `code` unless the server's live template catalog lists exactly `template`."""
        catalog = await self._catalogs.resource_catalog(conn, operation)
        if "resources" not in conn.capabilities:
            raise fail("resources_unsupported", operation, "The server does not offer resources.", conn.name)
        if not any(t.get("uriTemplate") == template for t in catalog.templates):
            raise fail(code, operation, "The server does not advertise that exact URI template.", conn.name)

    async def read(
        self,
        server: str,
        uri: str | None = None,
        template: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> ReadResult:
        op = "read"
        self._configuration.ensure_loaded()
        conn = self._open(server, op)
        if template is not None:
            if len(template) > MAX_URI_CHARS:
                raise fail("resource_invalid", op, f"The template is longer than {MAX_URI_CHARS} characters.", server)
            await self.advertised_template(conn, template, op, "resource_not_found")
            uri = expand(template, arguments or {}, op, server)
        assert uri is not None
        check_uri(uri, op, server)
        answer = await conn.read_resource(uri, op)

        def header() -> list[str]:
            return read_text.header(server, uri, template, arguments, answer.redacted)

        contents, display, spilled, truncated, text = shaping.shape_read(answer.result, server, uri, header)
        expanded: _Template = {"template": template, "arguments": dict(arguments or {})} if template is not None else {}
        spill: _Spill = {"spill": spilled} if spilled is not None else {}
        shown: _Display = {"display": display} if display else {}
        redacted: Redacted = {"redacted": answer.redacted} if answer.redacted else {}
        return {
            "server": server,
            "uri": uri,
            **expanded,
            "untrusted": True,
            "contents": contents,
            "truncated": truncated,
            **spill,
            **shown,
            **redacted,
            "text": text,
        }

    async def enabled_resource_catalogs(self, operation: str) -> list[tuple[str, ListCatalog]]:
        """Each enabled server's resource catalog (resources and templates; the client's profile's servers
        only), in configuration order; a server that cannot list them now is left out: it has nothing to
        offer now."""
        self._configuration.ensure_loaded()
        conns = [c for c in self._registry if not c.config.disabled and self._configuration.searches(c.name)]
        found = await self._catalogs.listed_by_each(conns, "resources", operation)
        return [(conn.name, catalog) for conn, catalog in zip(conns, found, strict=True) if catalog is not None]


class _Template(TypedDict, total=False):
    template: str
    arguments: dict[str, Any]


class _Spill(TypedDict, total=False):
    spill: Spill


class _Display(TypedDict, total=False):
    display: list[DisplayBlock]
