"""MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): the names the wire uses.

A client declares the extension in its MCP client capabilities as
`{"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}`
(an editor in `initializationOptions.mcpCapabilities`, a host in its `initialize`). A tool
names its app in `_meta.ui.resourceUri` (a `ui://` URI) and who may call it in
`_meta.ui.visibility` (`"model"`, `"app"`; both when absent).
"""

from __future__ import annotations

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
SCHEME = "ui://"
MAX_RESOURCE_BYTES = 4 * 1024 * 1024
"""The largest app document served (its HTML as UTF-8, or its decoded blob)."""
SETTINGS: dict[str, list[str]] = {"mimeTypes": [MIME_TYPE]}
"""The extension's settings as the sidecar declares them to a server."""


def declared(capabilities: object) -> bool:
    """MCP client capabilities (JSON) that declare the extension with the app MIME type."""
    if not isinstance(capabilities, dict):
        return False
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and MIME_TYPE in mime_types
