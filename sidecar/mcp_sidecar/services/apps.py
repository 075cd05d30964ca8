"""MCP Apps (SEP-1865): a server's `ui://` app served to the editor that renders it, checked first.

`mcp/app/resource {server, uri}` reads the app through the server's `resources/read` and hands
the editor the whole document, or refuses with a diagnostic:

- `apps_not_offered`: this client did not declare the extension, so no server was offered it;
- `app_not_declared`: `uri` is not a `ui://` URI that a tool of that server names in
  `_meta.ui.resourceUri` (its filters applied; an app's own tools count): the sidecar reads no
  other `ui://` resource on an app's behalf, so a server cannot be made to serve an arbitrary one;
- `app_resource_invalid`: the content for `uri` is not of the app MIME type
  (`text/html;profile=mcp-app`), is over 4 MiB, is not UTF-8, or is not an HTML document.

The document is never truncated or spilled (an app cut short is no app) and never sanitised
(it runs in the editor's sandboxed frame, not in a terminal or a model's context); it is the
server's and labelled untrusted. What the server declared for its frame (`_meta.ui` of the
content: csp, permissions, domain, prefersBorder) is passed on as it came, for the editor to
build its Content Security Policy from.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any, cast

from mcp_sidecar.catalog import apps as app_meta
from mcp_sidecar.json_depth import nesting
from mcp_sidecar.output.sanitize import quoted
from mcp_sidecar.output.shaping import shape_tool_result
from mcp_sidecar.protocol import apps
from mcp_sidecar.protocol.errors import DiagnosticCode, SidecarError, fail, refused_disabled

if TYPE_CHECKING:
    from mcp_sidecar.catalog.tools import ToolCatalog
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.protocol.results import AppResourceResult, CallToolResult
    from mcp_sidecar.services.catalogs import Catalogs
    from mcp_sidecar.services.configuration import Configuration
    from mcp_sidecar.services.offers import Offers

OPERATION = "app"
CALL_OPERATION = "app call"
MAX_UI_META_DEPTH = 16
_LEADING = re.compile(r"(?:\s+|<!--.*?-->)*", re.DOTALL)
_DOCUMENT = re.compile(r"<!doctype\s+html[\s>]|<html[\s>]", re.IGNORECASE)
MIB = 1024 * 1024


def _invalid(message: str, server: str) -> SidecarError:
    code: DiagnosticCode = "app_resource_invalid"
    return fail(code, OPERATION, message, server)


def same_mime(mime: object) -> bool:
    """The app MIME type, compared without case or the spaces around its parameter."""
    return isinstance(mime, str) and re.sub(r"\s*;\s*", ";", mime.strip().lower()) == apps.MIME_TYPE


def is_html_document(html: str) -> bool:
    """Begins (a BOM, white space and comments aside) with `<!DOCTYPE html>` or `<html>`."""
    text = html.removeprefix("\ufeff")
    start = _LEADING.match(text)
    return _DOCUMENT.match(text, start.end() if start else 0) is not None


def document_of(content: dict[str, Any], server: str) -> bytes:
    """The bytes of one content item: its text as UTF-8, or its blob decoded; within the size limit."""
    limit = apps.MAX_RESOURCE_BYTES
    too_big = f"The app is larger than {limit // MIB} MiB."
    if isinstance(content.get("text"), str):
        text: str = content["text"]
        if len(text) > limit:  # every character is at least one byte
            raise _invalid(too_big, server)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise _invalid("The app's text is not valid Unicode.", server) from None
    elif isinstance(content.get("blob"), str):
        blob: str = content["blob"]
        if len(blob) > (limit + 2) // 3 * 4:
            raise _invalid(too_big, server)
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise _invalid("The app's blob is not valid base64.", server) from None
    else:
        raise _invalid("The server's content for the app holds neither text nor a blob.", server)
    if len(data) > limit:
        raise _invalid(too_big, server)
    return data


def ui_meta(content: dict[str, Any]) -> dict[str, Any] | None:
    """The content's `_meta.ui` (an object within the nesting limit), else None."""
    meta = content.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    if not isinstance(ui, dict) or nesting(ui, MAX_UI_META_DEPTH) > MAX_UI_META_DEPTH:
        return None
    return ui


def pick(contents: object, uri: str, server: str) -> dict[str, Any]:
    """The content item for `uri` (the only one, when the server named it otherwise)."""
    items = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
    same = [c for c in items if c.get("uri") == uri]
    if same:
        return same[0]
    if len(items) == 1:
        return items[0]
    raise _invalid(f"The server's read of {quoted(uri)} answered no content for that URI.", server)


class Apps:
    """The `ui://` apps of the servers, served to a client that declared the extension, and their calls."""

    def __init__(self, configuration: Configuration, catalogs: Catalogs, offers: Offers) -> None:
        self._configuration = configuration
        self._catalogs = catalogs
        self._offers = offers

    async def _app(self, server: str, uri: str, operation: str) -> tuple[ServerConnection, ToolCatalog, list[str]]:
        """The server's connection, live tool catalog and the tools naming `uri` as their app (one at least)."""
        self._configuration.ensure_loaded()
        if not self._offers.current.apps:
            raise fail(
                "apps_not_offered", operation, "This client did not declare MCP Apps, so no server serves it apps."
            )
        conn = self._configuration.connection(server, operation)
        if conn.config.disabled:
            raise refused_disabled(operation, server, conn.config.approval_required)
        if not app_meta.valid_uri(uri):
            raise fail("app_not_declared", operation, "An app's URI is a ui:// URI.", server)
        catalog = await self._catalogs.tool_catalog(conn, operation, live=True)
        tools = app_meta.declaring(catalog.allowed(conn.config).values(), uri)
        if not tools:
            why = f"No tool of the server names {quoted(uri)} as its app (_meta.ui.resourceUri)."
            raise fail("app_not_declared", operation, why, server)
        return conn, catalog, tools

    async def tool_visibility(self, server: str, uri: str, name: str) -> list[app_meta.Visibility] | None:
        """Who may call the tool `name` of the server of the app `uri` (live catalog, filters applied);
        None when the server has no such tool. Refused as `call_tool` is when the app is not the server's."""
        conn, catalog, _ = await self._app(server, uri, CALL_OPERATION)
        descriptor = catalog.allowed(conn.config).get(name)
        return None if descriptor is None else app_meta.visibility(descriptor)

    async def call_tool(self, server: str, uri: str, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """An app's `tools/call`: a tool of the app's own server whose visibility allows apps, as the live
        catalog has it now (its filters applied), called and shaped as `mcp/callTool` does. The editor asks
        the person first, as for any call; no session or activation is involved (an app is no model)."""
        op = CALL_OPERATION
        conn, catalog, _ = await self._app(server, uri, op)
        descriptor = catalog.allowed(conn.config).get(name)
        if descriptor is None:
            raise fail("tool_not_found", op, f"The server has no tool {quoted(name)} (or its filters hide it).", server)
        if "app" not in app_meta.visibility(descriptor):
            why = f"The tool {quoted(name)} is for the model only (_meta.ui.visibility), not for apps."
            raise fail("app_call_refused", op, why, server)
        answer = await conn.call_tool(name, arguments, op, None)
        shaped = shape_tool_result(answer.result, server, f"{server}.{name}")
        result = cast("CallToolResult", {"id": f"{server}.{name}", "server": server, "tool": name, **shaped})
        if answer.diagnostic is not None:
            result["diagnostic"] = answer.diagnostic.to_json()
        if answer.redacted:
            result["redacted"] = answer.redacted
        return result

    async def resource(self, server: str, uri: str) -> AppResourceResult:
        conn, _, tools = await self._app(server, uri, OPERATION)
        answer = await conn.read_resource(uri, OPERATION)
        content = pick(answer.result.get("contents"), uri, server)
        if not same_mime(content.get("mimeType")):
            mime = content.get("mimeType")
            said = quoted(mime) if isinstance(mime, str) else "no MIME type"
            raise _invalid(f"The app is served as {said}, not {apps.MIME_TYPE}.", server)
        data = document_of(content, server)
        try:
            html = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid("The app is not UTF-8 text.", server) from None
        if "\x00" in html or not is_html_document(html):
            raise _invalid("The app is not an HTML document (<!DOCTYPE html> or <html>).", server)
        result: AppResourceResult = {
            "server": server,
            "uri": uri,
            "mimeType": "text/html;profile=mcp-app",
            "html": html,
            "bytes": len(data),
            "tools": tools,
            "untrusted": True,
        }
        ui = ui_meta(content)
        if ui is not None:
            result["ui"] = ui
        return result
