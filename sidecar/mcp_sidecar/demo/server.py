"""A small MCP server with a few harmless tools, written with the SDK's MCPServer."""

from __future__ import annotations

import datetime
from typing import Any


def build() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "demo",
        instructions="A demo server bundled with mcp-sidecar: arithmetic, text and time tools.",
    )

    @server.tool(description="Add two numbers and return the sum.")
    def add(a: float, b: float) -> float:
        total = a + b
        return int(total) if total.is_integer() else total  # 2 + 3 prints as 5, not 5.0

    @server.tool(description="Echo the given text back unchanged.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Count the words, lines and characters of a text.")
    def count_words(text: str) -> dict[str, int]:
        return {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}

    @server.tool(description="The current date and time in UTC, in ISO 8601 form.")
    def current_time() -> str:
        return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")

    @server.resource("demo://readme", mime_type="text/markdown", description="What this demo server offers.")
    def readme() -> str:
        return "# Demo server\n\nTools: add, echo, count_words, current_time.\n"

    @server.prompt(description="Ask for a short summary of a text.")
    def summarize(text: str) -> str:
        return f"Summarize the following text in two sentences:\n\n{text}"

    return server
