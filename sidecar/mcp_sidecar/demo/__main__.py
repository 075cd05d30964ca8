"""`python -m mcp_sidecar.demo`: a small stdio MCP server for first runs and examples."""

from __future__ import annotations

from mcp_sidecar.demo.server import build

build().run("stdio")
