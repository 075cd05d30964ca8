"""What loading the MCP SDK imports: run once, in `heavy`'s import thread (`heavy.SDK`).

Every SDK module the sidecar uses is imported here, the OAuth client's included, so that once
`heavy.SDK` is ready no thread imports a part of the SDK for the first time.
"""

from __future__ import annotations

MODULES = (
    "httpx2",
    "mcp",
    "mcp.client.auth",
    "mcp.client.auth.oauth2",
    "mcp.client.auth.utils",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.shared.auth",
    "mcp.shared.exceptions",
    "mcp.shared.inbound",
    "mcp.shared.message",
    "mcp_types",
    "mcp_types.version",
)


def import_sdk() -> None:
    import importlib
    import warnings

    from mcp_sidecar.startup import collector_paused

    with collector_paused():
        for name in MODULES:
            importlib.import_module(name)
    from mcp.shared.exceptions import MCPDeprecationWarning

    # resources/subscribe is how handshake-era servers offer watches; the SDK warns on every use.
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
