"""MCP fixture server for the VS Code suite's browser-step tests (stdio).

Tools:
    pay()          the first call fails with MCP error -32042 (URLElicitationRequiredError): one
                   URL step, id "pay-1", at https://pay.example/approve?id=pay-1; later calls
                   answer "paid"
    finish(id)     sends notifications/elicitation/complete for `id`: the step is done in the
                   browser (a real server sends it when its web flow ends)
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import ElicitRequestURLParams

STEP_URL = "https://pay.example/approve?id=pay-1"


def main() -> None:
    server: MCPServer[object] = MCPServer("steps", version="0.1.0")
    issued: set[str] = set()

    def pay() -> str:
        if "pay-1" not in issued:
            issued.add("pay-1")
            step = ElicitRequestURLParams(
                mode="url", message="Approve the payment in your bank's page.", url=STEP_URL, elicitation_id="pay-1"
            )
            raise UrlElicitationRequiredError([step], "The payment needs your approval first.")
        return "paid"

    async def finish(elicitation_id: str, ctx: Context[Any, Any]) -> str:
        await ctx.session.send_elicit_complete(elicitation_id)
        return "finished"

    server.add_tool(pay, description="Pay; the first time, after a step in the browser.")
    server.add_tool(finish, description="Mark a browser step done.")
    anyio.run(server.run_stdio_async)


if __name__ == "__main__":
    main()
