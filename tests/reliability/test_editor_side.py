"""Faults on the editor's side: the client disappears mid-request, cancels every request, or
shuts down with 50 requests pending. Every request is answered exactly once (or the process
exits because its client is gone), nothing written is lost, and no server is left behind."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from reliability.helpers import figure
from support.rawrpc import RawClient, raw_sidecar
from support.servers import basic_stdio, pid_alive, started_pids
from support.sidecar import wait_until, write_config

REQUEST_CANCELLED = -32800


async def send_request(client: RawClient, msg_id: int, method: str, params: dict[str, Any]) -> None:
    await client.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def answered_once(client: RawClient, ids: list[int]) -> dict[int, dict[str, Any]]:
    by_id: dict[int, dict[str, Any]] = {}
    for message in client.messages:
        if "method" not in message and message.get("id") in ids:
            assert message["id"] not in by_id, f"two answers to id {message['id']}"
            by_id[message["id"]] = message
    return by_id


def written_files(home: Path) -> tuple[set[str], list[Path]]:
    """The configured server names, and the cache files (each checked to parse)."""
    config = json.loads((home / "mcp.json").read_text(encoding="utf-8"))
    caches = [p for p in home.rglob("*.json") if p.name != "mcp.json"]
    for path in caches:
        json.loads(path.read_text(encoding="utf-8"))
    return set(config["mcpServers"]), caches


async def test_client_disappears_mid_request(home: Path, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    # Public lists, so the catalog goes to the disk cache (a modern server's private lists do not).
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter), "--cache-hints", "0:public")})
    async with raw_sidecar(home) as client:
        added = await client.request(
            "mcp/config/add", {"scope": "global", "server": "added", "definition": {"command": "true"}}
        )
        assert "result" in added, added
        listed = await client.request("mcp/server/tools", {"server": "basic"})
        assert "result" in listed, listed
        activated = await client.request("mcp/activate", {"ids": ["basic.slow"]})
        assert activated["result"]["results"][0]["status"] == "loaded"
        [pid] = started_pids(counter)
        await send_request(client, 900, "mcp/callTool", {"id": "basic.slow", "arguments": {"seconds": 3}})
        await send_request(client, 901, "mcp/discover", {"query": "slow"})
        # The editor goes away without shutdown or exit: both pipes close under the sidecar.
        # (It drains requests already asked for, up to a minute, for scripts that pipe and
        # close; their answers now go nowhere.)
        pipe = client.proc._transport.get_pipe_transport(1)  # type: ignore[attr-defined]  # see pyproject.toml
        assert pipe is not None
        pipe.close()
        await client.close_stdin()
        assert await asyncio.wait_for(client.proc.wait(), 45) in (0, 1)
        await wait_until(lambda: not pid_alive(pid), 15, "the MCP server to end")
    # What was written before is intact: the configuration edit and the catalog cache.
    servers, caches = written_files(home)
    assert servers == {"basic", "added"}
    # The catalog, and beside it its tool definitions' token figures when they were counted in time.
    [catalog] = [p for p in caches if p.name.startswith("tools-")]
    assert {p.name for p in caches} <= {catalog.name, catalog.name.replace("tools-", "tokens-", 1)}, caches
    figure("editor: client disappears", f"exited, server stopped, config and {len(caches)} cache file(s) intact")


async def test_every_request_cancelled(home: Path, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    async with raw_sidecar(home) as client:
        activated = await client.request("mcp/activate", {"ids": ["basic.slow", "basic.echo"]})
        assert [r["status"] for r in activated["result"]["results"]] == ["loaded", "loaded"]
        requests: list[tuple[str, dict[str, Any]]] = [
            ("mcp/callTool", {"id": "basic.slow", "arguments": {"seconds": 30}}),
            ("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "x"}}),
            ("mcp/discover", {"query": "echo"}),
            ("mcp/status", {}),
            ("mcp/server/refresh", {"server": "basic"}),
        ] * 12
        ids = list(range(1000, 1000 + len(requests)))
        for msg_id, (method, params) in zip(ids, requests, strict=True):
            await send_request(client, msg_id, method, params)
            await client.notify("$/cancelRequest", {"id": msg_id})
        await client.wait_for(lambda: len(answered_once(client, ids)) == len(ids), 60, "an answer to every request")
        answers = answered_once(client, ids)
        cancelled = [m for m in answers.values() if m.get("error", {}).get("code") == REQUEST_CANCELLED]
        for message in answers.values():
            if "error" in message and message["error"]["code"] != REQUEST_CANCELLED:
                assert message["error"]["data"]["code"] == "cancelled", message
        figure(
            "editor: cancel every request",
            f"{len(ids)} requests, each cancelled at once: {len(cancelled)} answered -32800, "
            f"{len(ids) - len(cancelled)} had finished first; all answered once",
        )
        client.messages.clear()
        # The connection survived the cancellations: one server process, still answering.
        echoed = await client.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "after"}})
        assert echoed["result"]["content"] == [{"type": "text", "text": "after"}]
        assert len(started_pids(counter)) == 1
        assert client.violations == []


async def test_shutdown_with_50_requests_pending(home: Path, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    async with raw_sidecar(home) as client:
        activated = await client.request("mcp/activate", {"ids": ["basic.slow"]})
        assert activated["result"]["results"][0]["status"] == "loaded"
        [pid] = started_pids(counter)
        ids = list(range(2000, 2050))
        for msg_id in ids:
            await send_request(client, msg_id, "mcp/callTool", {"id": "basic.slow", "arguments": {"seconds": 60}})
        shutdown = await client.request("shutdown", timeout=30)
        assert shutdown["result"] is None
        await client.wait_for(lambda: len(answered_once(client, ids)) == len(ids), 30, "an answer to every request")
        answers = answered_once(client, ids)
        assert all("error" in m for m in answers.values()), answers
        codes = sorted({m["error"]["code"] for m in answers.values()})
        await client.notify("exit")
        assert await client.wait_exit(30) == 0
        await wait_until(lambda: not pid_alive(pid), 15, "the MCP server to end")
        assert client.violations == []
    figure("editor: shutdown with 50 pending", f"all 50 answered with errors {codes} before exit 0")
