"""An editor's chat tools follow issue 34's rule (`initializationOptions.chatExposeBudget`, VS Code's
`mcp_tools` and `mcp_call`): while every tool of the servers costs at most the budget, `mcp_call` calls
any tool without an activation and `mcp_tools`' first answer says so, with the total counted as the
gateway counts it (checked here against the servers' own lists, counted with the same tokenizer); above
it, or without the option, `mcp_call` of a tool not activated is refused as ever."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from mcp_sidecar.catalog import token_count
from support.servers import basic_stdio
from support.sidecar import diagnostic_of, start_sidecar, write_config


async def servers_cost(*servers: dict[str, Any]) -> int:
    """The servers' tools, listed by each server directly and counted in this process."""
    counter = token_count.load_counter()
    assert counter is not None
    total = 0
    for server in servers:
        async with Client(StdioServerParameters(command=server["command"], args=server["args"])) as client:
            total += sum(
                counter.tool(t.model_dump(by_alias=True, exclude_none=True)) for t in (await client.list_tools()).tools
            )
    return total


async def test_within_the_budget_mcp_call_needs_no_activation(tmp_path: Path) -> None:
    home = tmp_path / "home"
    basic = basic_stdio()
    write_config(home, {"basic": basic})
    async with start_sidecar(home, options={"chatExposeBudget": 4000}) as sidecar:
        arguments = {"id": "basic.echo", "arguments": {"text": "direct"}, "session": "chat", "forModel": True}
        called = await sidecar.request("mcp/callTool", arguments)
        assert called["isError"] is False
        assert called["content"][0]["text"] == "direct"
        assert called["activation"] == {"id": "basic.echo", "status": "loaded"}
        found = await sidecar.request(
            "mcp/modelTool/invoke", {"arguments": {"query": "echo"}, "includeDirectory": True, "session": "chat"}
        )
    tokens = await servers_cost(basic)
    line = (
        f"Every tool of these servers costs {tokens:,} tokens together, within the 4,000-token budget: call any of "
        "them with mcp_call by its id (from a query) without activating it first."
    )
    assert line in found["text"].splitlines()


async def test_over_the_budget_or_without_one_an_activation_comes_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    for options in ({"chatExposeBudget": 100}, {}):
        async with start_sidecar(home, options=options) as sidecar:
            arguments = {"id": "basic.echo", "arguments": {"text": "x"}, "session": "chat", "forModel": True}
            refused = await sidecar.error("mcp/callTool", arguments)
            assert diagnostic_of(refused)["code"] == "tool_not_active", options
            found = await sidecar.request(
                "mcp/modelTool/invoke", {"arguments": {"query": "echo"}, "includeDirectory": True, "session": "c"}
            )
            assert "without activating it first" not in found["text"]
