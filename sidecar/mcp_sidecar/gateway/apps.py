"""MCP Apps (SEP-1865) through the gateway: a host that declares the extension gets the apps.

A host declaring `io.modelcontextprotocol/ui` with the app MIME type (in `initialize`, or in a
2026-07-28 request's capabilities) sees each native tool's `_meta.ui` and may read its app; a
host that does not sees neither (its tools are text-only, as the extension's fallback says).

Names are rewritten as tool names are (`<server>__<tool>`): a server's app `ui://<rest>` is
`ui://<server>/<rest>` to the host (still a `ui://` URI, as hosts require), and a
`resources/read` of that URI reads `ui://<rest>` of that server through `mcp/app/resource`'s
checks (`services/apps.py`: a tool of that server names it, the app MIME type, HTML, 4 MiB).
An app's own tools (visibility `["app"]`) are never listed: no host's model may call them.

An app's calls back to its server: the host's bridge sends the app's `tools/call` to the server
that served the app, unchanged (the ext-apps SDK's `AppBridge` forwards its params as they are),
so it reaches the gateway with the server's own tool name (`get-time`, not `weather__get-time`).
A host that declares the extension and has read an app of a server (`Host.apps`) may call that
server's tools by their own names, app-only tools included, through `mcp/app/callTool`'s checks
(a tool an app may call, of that server only, filters applied, live catalog): `route` finds the
server. A name that is a tool of the apps of two servers the host opened is refused (the gateway
cannot tell whose app called); `<server>__<tool>` names the server outright. The gateway's own
names (`mcp_tools`, `mcp_call`, a native name) are never an app's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_sidecar.catalog import apps as app_meta
from mcp_sidecar.gateway.wire import CAPABILITIES_KEY
from mcp_sidecar.output.sanitize import one_line, quoted
from mcp_sidecar.protocol import apps
from mcp_sidecar.protocol.errors import SidecarError, fail
from mcp_sidecar.services.apps import CALL_OPERATION

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from mcp_sidecar.catalog.apps import Visibility
    from mcp_sidecar.services.apps import Apps

RESOURCE_NOT_FOUND = -32002
NOT_DECLARED = "This host did not declare MCP Apps (io.modelcontextprotocol/ui), so the gateway serves it no apps."


def declares(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The request's host declared the extension with the app MIME type: a 2026-07-28 request in
    its own `_meta` (as `host_tasks.follows_tasks` reads it), a handshake-era host at `initialize`."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        meta = ctx.meta
        return apps.declared(meta.get(CAPABILITIES_KEY) if isinstance(meta, dict) else None)
    capabilities = ctx.session.client_capabilities
    if capabilities is None:
        return False
    return apps.declared(capabilities.model_dump(by_alias=True, mode="json", exclude_none=True))


def gateway_uri(server: str, uri: str) -> str:
    """The host's URI for `uri` (`ui://<rest>`) of `server`: `ui://<server>/<rest>`."""
    return f"{apps.SCHEME}{server}/{uri.removeprefix(apps.SCHEME)}"


def split(uri: str, servers: list[str]) -> tuple[str, str] | None:
    """(server, its own `ui://` URI) of a gateway app URI; None when it names no configured server."""
    if not uri.startswith(apps.SCHEME):
        return None
    server, slash, rest = uri.removeprefix(apps.SCHEME).partition("/")
    if not slash or not rest or server not in servers:
        return None
    return server, apps.SCHEME + rest


def tool_meta(server: str, descriptor: dict[str, Any]) -> dict[str, Any] | None:
    """The `_meta` of a native tool for a host that declared the extension: its `ui`, URI rewritten."""
    ui = app_meta.tool_ui(descriptor)
    if ui is None:
        return None
    out: dict[str, Any] = {"visibility": list(ui["visibility"])}
    if "resourceUri" in ui:
        out["resourceUri"] = gateway_uri(server, ui["resourceUri"])
    return {"ui": out}


async def read(served: Apps, server: str, uri: str, asked: str) -> dict[str, Any]:
    """`resources/read` of a gateway app URI: the app, checked, as MCP Apps' resource contents."""
    try:
        result = await served.resource(server, uri)
    except SidecarError as exc:
        missing = exc.diagnostic.code in ("app_not_declared", "resource_not_found")
        code = RESOURCE_NOT_FOUND if missing else INVALID_PARAMS
        raise MCPError(code, one_line(exc.diagnostic.render()), {"uri": asked}) from None
    content: dict[str, Any] = {"uri": asked, "mimeType": apps.MIME_TYPE, "text": result["html"]}
    if "ui" in result:
        content["_meta"] = {"ui": result["ui"]}
    return {"contents": [content]}


@dataclass(frozen=True)
class AppCall:
    """An app's `tools/call` as the gateway routes it: the tool `tool` of `server`, whose app `uri` called."""

    server: str
    uri: str
    tool: str


def _prefixed(opened: Mapping[str, str], name: str) -> AppCall | None:
    """`<server>__<tool>` of a server whose app the host opened (the longest such server name first)."""
    for server in sorted(opened, key=len, reverse=True):
        if name.startswith(f"{server}__") and len(name) > len(server) + 2:
            return AppCall(server, opened[server], name[len(server) + 2 :])
    return None


async def route(served: Apps, opened: Mapping[str, str], name: str) -> AppCall | None:
    """The tool an app's `tools/call` of `name` means, among the servers whose app the host opened
    (`opened`: server → an app of it): the one server with a tool of that name an app may call, else
    one with a tool of that name (a model's only, which the call then refuses), else `<server>__<tool>`;
    None when none has it. Two servers whose apps may call a tool of that name: refused."""
    found: list[tuple[AppCall, list[Visibility]]] = []
    failed: SidecarError | None = None
    for server, uri in sorted(opened.items()):
        try:
            seen = await served.tool_visibility(server, uri, name)
        except SidecarError as exc:  # its server is down or no longer serves that app: say so if no other has it
            failed = failed or exc
            continue
        if seen is not None:
            found.append((AppCall(server, uri, name), seen))
    for_apps = [call for call, seen in found if "app" in seen]
    if len(for_apps) > 1:
        servers = ", ".join(call.server for call in for_apps)
        why = (
            f"The apps of several servers this host opened ({servers}) have a tool {quoted(name)}: the gateway "
            "cannot tell whose app calls it. A host can name it <server>__<tool>."
        )
        raise fail("app_call_refused", CALL_OPERATION, why)
    if for_apps or found:
        return (for_apps or [call for call, _ in found])[0]
    prefixed = _prefixed(opened, name)
    if prefixed is None and failed is not None:
        raise failed
    return prefixed
