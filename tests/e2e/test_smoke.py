from __future__ import annotations

import sys
from pathlib import Path

from support.servers import fixture_path
from support.sidecar import SidecarClient, write_config


def basic(*args: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(fixture_path("basic.py")), "stdio", *args]}


async def test_activate_and_call_over_stdio(home: Path, sidecar: SidecarClient) -> None:
    write_config(home, {"basic": basic()})
    status = await sidecar.request("mcp/status")
    assert [row["state"] for row in status["servers"]] == ["idle"]
    activated = await sidecar.request("mcp/activate", {"ids": ["basic.add"]})
    assert [r["status"] for r in activated["results"]] == ["loaded"]
    result = await sidecar.request("mcp/callTool", {"id": "basic.add", "arguments": {"a": 2, "b": 3}})
    assert result["isError"] is False
    assert result["content"][0]["text"] == "5"
