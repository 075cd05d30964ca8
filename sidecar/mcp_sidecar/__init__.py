"""mcp-sidecar: one stdio process that owns every MCP connection for an editor."""

__version__ = "0.1.0"
