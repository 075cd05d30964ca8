"""The gateway's own stdio transport, seen from a raw host: pipes, the diverted descriptors, the end of input."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from support.sidecar import write_config

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


async def _start(home: Path, stderr: Any, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    write_config(home, {})
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_sidecar",
        "mcp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env={**os.environ, "MCP_SIDECAR_HOME": str(home), **(env or {})},
    )


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


async def test_requests_written_before_the_input_ends_are_all_answered(tmp_path: Path) -> None:
    proc = await _start(tmp_path / "home", asyncio.subprocess.DEVNULL)
    assert proc.stdin is not None
    proc.stdin.write(b"not json\n\n" + _line(INITIALIZE))
    proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode())  # no newline: the end
    proc.stdin.close()
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    answers = {m["id"]: m for m in map(json.loads, out.splitlines()) if "id" in m}
    assert set(answers) == {1, 2}
    assert answers[1]["result"]["serverInfo"]["name"] == "mcp-sidecar"
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["mcp_tools", "mcp_call"]
    assert proc.returncode == 0


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
async def test_while_serving_stdin_reads_null_and_stdout_goes_to_stderr(tmp_path: Path) -> None:
    """A stray print, or a descriptor a child inherits, cannot reach the host's stream: in the process
    that serves it. (A front of the engine only relays; the engine it starts has the null device
    for 0 and 1, and its servers are its children.)"""
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        proc = await _start(tmp_path / "home", stderr, {"MCP_SIDECAR_ENGINE": "off"})
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(_line(INITIALIZE))
        answer = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        assert answer["id"] == 1
        fds = Path(f"/proc/{proc.pid}/fd")
        assert os.readlink(fds / "0") == os.devnull
        assert os.readlink(fds / "1") == os.readlink(fds / "2") == str(log)
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 60)
    assert proc.returncode == 0
