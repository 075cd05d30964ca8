"""Load: 1,000 concurrent `mcp/callTool` requests across 10 servers, a 10,000-call run with
flat memory, and 20 servers discovered at most four at a time. Figures are recorded for
docs/reliability.md; durations are reported, never asserted (the machine is shared).

The servers are tiny.py, a minimal stdio MCP server without the SDK, so the figures measure the
sidecar (and the SDK client inside it) rather than the servers' own start and call costs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from reliability.helpers import figure, mib, rss_kib
from support.rawrpc import RawClient, raw_sidecar
from support.servers import fixture_stdio, peak_listing
from support.sidecar import start_sidecar, wait_until, write_config

SERVERS = 10
BURST = 1_000
RUN = 10_000
WAVE = 250
RSS_GROWTH_LIMIT_KIB = 64 * 1024
"""Generous against allocator noise; a leak of a few hundred bytes per call would exceed it."""


async def call_all(client: RawClient, first_id: int, count: int) -> None:
    """Send `count` echo calls spread over the servers at once, then check every answer."""
    ids = range(first_id, first_id + count)
    for msg_id in ids:
        server = f"s{msg_id % SERVERS}"
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "method": "mcp/callTool",
                "params": {"id": f"{server}.echo", "arguments": {"text": f"call {msg_id}"}},
            }
        )
    wanted = set(ids)

    def done() -> bool:
        return sum(1 for m in client.messages if m.get("id") in wanted) == count

    await client.wait_for(done, 300, f"{count} answers")
    answers = {m["id"]: m for m in client.messages if m.get("id") in wanted}
    client.messages[:] = [m for m in client.messages if m.get("id") not in wanted]
    failed = [m for m in answers.values() if "error" in m or m["result"].get("isError")]
    assert failed == [], failed[:3]
    assert all(answers[i]["result"]["content"][0]["text"] == f"call {i}" for i in ids)


async def test_concurrent_calls_across_ten_servers_and_flat_memory(home: Path) -> None:
    write_config(home, {f"s{i}": fixture_stdio("tiny.py", protocol="legacy") for i in range(SERVERS)})
    async with raw_sidecar(home) as client:
        activated = await client.request("mcp/activate", {"ids": [f"s{i}.echo" for i in range(SERVERS)]}, 120)
        assert [r["status"] for r in activated["result"]["results"]] == ["loaded"] * SERVERS
        pid = client.proc.pid

        started = time.monotonic()
        await call_all(client, 10_000, BURST)
        burst_s = time.monotonic() - started
        figure("load: 1,000 concurrent calls", f"{BURST} calls across {SERVERS} servers, 0 errors, {burst_s:.1f} s")

        start_rss = rss_kib(pid)
        started = time.monotonic()
        for wave in range(RUN // WAVE):
            await call_all(client, 100_000 + wave * WAVE, WAVE)
        run_s = time.monotonic() - started
        end_rss = rss_kib(pid)
        figure(
            "load: 10,000-call run",
            f"{RUN} calls in waves of {WAVE}, 0 errors, {run_s:.1f} s ({RUN / run_s:,.0f} calls/s); "
            f"sidecar RSS {mib(start_rss)} at the start, {mib(end_rss)} at the end",
        )
        assert end_rss - start_rss < RSS_GROWTH_LIMIT_KIB, (start_rss, end_rss)
        status = await client.request("mcp/status", {})
        assert all(row["state"] == "connected" for row in status["result"]["servers"])
        assert client.violations == []


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


async def test_twenty_servers_discovered_four_at_a_time(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    log = tmp_path / "concurrency.log"
    # The startup delay keeps each server busy long enough for overlaps to show.
    servers: dict[str, Any] = {
        f"s{i:02d}": fixture_stdio(
            "tiny.py", "--startup-delay", "0.3", "--concurrency-file", str(log), protocol="legacy"
        )
        for i in range(20)
    }
    write_config(home, servers)
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        found = await sidecar.request("mcp/discover", {"query": "echo", "limit": 50}, 120)
        assert {c["server"] for c in found["candidates"]} == set(servers)
        assert found["unavailable"] == []
    await wait_until(lambda: sum(1 for x in read_lines(log) if x.startswith("stop ")) == 20, 30, "stop lines")
    listed, peak = peak_listing(read_lines(log))
    figure("load: 20 servers discovered", f"{listed} servers listed; at most {peak} at once (bound 4)")
    assert listed == 20
    assert 2 <= peak <= 4, read_lines(log)
