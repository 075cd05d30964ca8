"""The floor of `gateway.py`'s start-up figure: an `MCPServer` with one tool, over stdio, nothing else."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def echo(text: str) -> str:
    """Echo the given text back."""
    return text


if __name__ == "__main__":
    server.run("stdio")
