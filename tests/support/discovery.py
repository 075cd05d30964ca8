"""Helpers for the discovery end-to-end tests: requests, candidate ids, cache files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.sidecar import SidecarClient

BASIC_TOOLS = ["echo", "add", "get_env", "fail", "slow", "crash", "cwd", "redefine"]
HINTS = {
    "invalid_params": "Check the request against docs/protocol.md.",
    "protocol_error": "Check the server's MCP compatibility and the `protocol` setting (auto or legacy).",
    "connection_failed": (
        "Check the server executable, working directory, endpoint, network and TLS configuration; "
        "the server log (mcp/server/logs) may say more."
    ),
    "server_not_found": "Check the server name with mcp/status; names are case-sensitive.",
    "server_disabled": "Enable the server first (mcp enable <server>).",
    "not_supported": "This version of the sidecar does not offer this operation yet; see docs/protocol.md.",
}


async def discover(sidecar: SidecarClient, query: str = "", **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request("mcp/discover", {"query": query, **params})
    return result


def ids(result: dict[str, Any]) -> list[str]:
    """Tool ids, resource URIs, templates and prompt names of the candidates, in order."""
    out = []
    for c in result["candidates"]:
        out.append(c.get("id") or c.get("uri") or c.get("uriTemplate") or f"{c['server']}:{c['name']}")
    return out


async def status_row(sidecar: SidecarClient, server: str) -> dict[str, Any]:
    status = await sidecar.request("mcp/status")
    rows: list[dict[str, Any]] = [r for r in status["servers"] if r["name"] == server]
    [row] = rows
    return row


def without_score(candidate: dict[str, Any]) -> dict[str, Any]:
    score = candidate["score"]
    assert isinstance(score, float)
    assert score > 0
    return {k: v for k, v in candidate.items() if k != "score"}


def cache_files(home: Path) -> dict[str, Path]:
    """server name → its tool cache file under MCP_SIDECAR_HOME."""
    directory = home / "cache" / "catalogs"
    out: dict[str, Path] = {}
    for path in directory.glob("tools-*.json") if directory.is_dir() else []:
        out[json.loads(path.read_text(encoding="utf-8"))["server"]] = path
    return out


def cached_names(home: Path, server: str) -> list[str]:
    data = json.loads(cache_files(home)[server].read_text(encoding="utf-8"))
    return [tool["name"] for tool in data["tools"]]


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


async def call(sidecar: SidecarClient, tool_id: str, arguments: dict[str, Any], session: str) -> str:
    activated = await sidecar.request("mcp/activate", {"ids": [tool_id], "session": session})
    assert activated["results"][0]["status"] in ("loaded", "already loaded"), activated
    result = await sidecar.request("mcp/callTool", {"id": tool_id, "arguments": arguments, "session": session})
    assert result["isError"] is False, result
    text: str = result["content"][0]["text"]
    return text


def changed(sidecar: SidecarClient, server: str, kind: str) -> int:
    return sum(1 for n in sidecar.notifications["mcp/catalogChanged"] if n == {"server": server, "kind": kind})
