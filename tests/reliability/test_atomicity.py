"""Atomicity: kill -9 the sidecar (with the engine, the default: the engine and the front) at
random points while it writes the configuration and the tool cache. Every file is then the old
or a new version (parseable, one of the versions the sidecar could have written), every edit the
sidecar confirmed is on disk, and the next start succeeds. The kill points come from a seeded
generator, so CI kills at the same moments."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

from reliability.helpers import BlockingClient, figure
from support.servers import fixture_stdio
from support.sidecar import engine_pids

ROUNDS = 6
EDITS_PER_ROUND = 20
BASE_SERVERS = 600
"""Enough definitions that each write of the file takes a while (about 200 KiB)."""


def definition(name: str) -> dict[str, Any]:
    return {"command": "/nonexistent/mcp-server", "args": [name, "x" * 300]}


def kill_after(client: BlockingClient, rng: random.Random, ids: list[int]) -> int:
    """Wait (bounded) until a random number of `ids` were answered, then kill -9 after a random
    delay of up to 30 ms; return how many were answered successfully before the kill."""
    target = rng.randint(0, len(ids) - 1)
    deadline = time.monotonic() + 60
    answered: set[int] = set()
    while len(answered) < target:
        assert time.monotonic() < deadline, f"only {len(answered)} of {target} edits answered"
        for message in client.take_all():
            if message.get("id") in ids:
                assert "result" in message, message
                answered.add(message["id"])
        time.sleep(0.002)
    time.sleep(rng.uniform(0, 0.03))  # the random point within the writes
    # The process that writes: with the engine (the default), the engine behind the client's front.
    for pid in [*engine_pids(client.home), client.proc.pid]:
        os.kill(pid, signal.SIGKILL)
    client.close()
    return len(answered) + sum(1 for m in client.take_all() if m.get("id") in ids and "result" in m)


def test_config_writes_survive_kill_9(home: Path) -> None:
    rng = random.Random(20261130)
    config = home / "mcp.json"
    expected = {f"base{i:04d}": definition(f"base{i:04d}") for i in range(BASE_SERVERS)}
    config.write_text(json.dumps({"mcpServers": expected}, indent=2), encoding="utf-8")
    interrupted = 0
    for round_ in range(ROUNDS):
        client = BlockingClient(home)
        # The previous kill left a file the next start reads without a problem.
        status = client.request("mcp/status", {}, timeout=60)
        assert status["result"]["diagnostics"] == [], status
        names = [f"r{round_}e{k:02d}" for k in range(EDITS_PER_ROUND)]
        ids = []
        for name in names:
            msg_id = client.new_id()
            ids.append(msg_id)
            params = {"scope": "global", "server": name, "definition": definition(name)}
            client.send({"jsonrpc": "2.0", "id": msg_id, "method": "mcp/config/add", "params": params})
        confirmed = kill_after(client, rng, ids)

        servers = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
        added = set(servers) - set(expected)
        # Old or new: everything there before is unchanged, anything new is one of this round's
        # edits written whole, and at least every confirmed edit is there.
        assert {name: servers[name] for name in expected} == expected
        assert added <= set(names)
        assert all(servers[name] == definition(name) for name in added)
        assert len(added) >= confirmed
        interrupted += len(added) < len(names)
        expected = servers
    leftovers = [p.name for p in home.iterdir() if p.name.endswith(".tmp")]
    client = BlockingClient(home)
    try:
        status = client.request("mcp/status", {}, timeout=60)
        assert len(status["result"]["servers"]) == len(expected)
        # The next edit removes the temporary copies killed writers left behind (one more is
        # planted, so the check holds even when no kill landed between a write and its rename).
        (home / ".mcp.json.planted.tmp").write_text("{}", encoding="utf-8")
        removed = client.request("mcp/config/remove", {"scope": "global", "server": "base0000"}, timeout=60)
        assert "result" in removed, removed
        assert [p.name for p in home.iterdir() if p.name.endswith(".tmp")] == []
    finally:
        client.close()
    figure(
        "atomicity: configuration",
        f"{ROUNDS} kill -9 during streams of {EDITS_PER_ROUND} edits ({interrupted} cut a stream short); "
        f"file always old or new, every confirmed edit kept; {len(leftovers)} abandoned temporary file(s), "
        "removed by the next edit",
    )


def test_cache_writes_survive_kill_9(home: Path) -> None:
    rng = random.Random(1130)
    tools = 2_000
    config = home / "mcp.json"
    big = fixture_stdio("tiny.py", "--tools-count", str(tools), protocol="legacy")
    config.write_text(json.dumps({"mcpServers": {"big": big}}), encoding="utf-8")
    counts: set[int] = set()
    for _ in range(ROUNDS // 2):
        client = BlockingClient(home)
        first = client.request("mcp/server/refresh", {"server": "big"}, timeout=120)
        assert "result" in first, first
        ids = []
        for _ in range(8):
            msg_id = client.new_id()
            ids.append(msg_id)
            client.send({"jsonrpc": "2.0", "id": msg_id, "method": "mcp/server/refresh", "params": {"server": "big"}})
        kill_after(client, rng, ids)
        cache_files = [p for p in home.rglob("tools-*.json")]
        assert len(cache_files) == 1, cache_files
        data = json.loads(cache_files[0].read_text(encoding="utf-8"))
        assert data["server"] == "big"
        counts.add(len(data["tools"]))
    assert counts == {tools + 1}
    # The next start serves the tools from the cache file the kills left.
    client = BlockingClient(home)
    try:
        found = client.request("mcp/discover", {"query": "weather forecast", "server": "big", "kind": "tools"}, 60)
        assert found["result"]["candidates"], found
    finally:
        client.close()
    leftovers = [p.name for p in home.rglob("*.tmp")]
    figure(
        "atomicity: tool cache",
        f"{ROUNDS // 2} kill -9 during streams of refreshes ({tools} tools, one cache file); "
        f"file always parseable and whole, next start served it; {len(leftovers)} temporary file(s) left behind",
    )
