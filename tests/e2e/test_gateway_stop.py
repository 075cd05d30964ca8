"""How a host stops the gateway, and what is left after it: nothing.

Claude Code sends SIGINT and SIGTERM 100 ms later; Codex closes stdin and sends SIGTERM a few
milliseconds later; Gemini CLI sends SIGTERM, then closes stdin. Each way the gateway exits 0,
writes no traceback, and its servers are gone (the exit is quick: `benchmarks/gateway.py` times
it; tests do not).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import pytest

from support.rawhost import raw_gateway
from support.servers import fixture_path
from support.sidecar import wait_until, write_config


def _configure(home: Path, started: Path) -> None:
    args = [str(fixture_path("basic.py")), "stdio", "--counter-file", str(started)]
    write_config(home, {"basic": {"command": sys.executable, "args": args}})


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for its parent."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc")
@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "stdin"])
async def test_a_stopped_gateway_exits_0_quietly_and_leaves_no_server(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    started = tmp_path / "started.txt"
    _configure(home, started)
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("wb") as stderr:
        async with raw_gateway(home, "--list-wait", "0", stderr=stderr) as host:
            await host.handshake()
            await host.result("tools/call", {"name": "mcp_tools", "arguments": {"activate": ["basic.echo"]}})
            await host.result(
                "tools/call", {"name": "mcp_call", "arguments": {"id": "basic.echo", "arguments": {"text": "x"}}}
            )
            server = int(started.read_text().split()[0])
            assert _alive(server)
            if how == "stdin":
                assert host.proc.stdin is not None
                host.proc.stdin.close()
            else:
                host.proc.send_signal(getattr(signal, how))
            code = await asyncio.wait_for(host.proc.wait(), 30)
    assert code == 0
    await wait_until(lambda: not _alive(server), what=f"server {server} gone")
    text = stderr_path.read_text()
    assert "Traceback" not in text
    assert "KeyboardInterrupt" not in text


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_while_the_gateway_starts_ends_it_quietly(tmp_path: Path, signum: int) -> None:
    """Stopped just after its handshake, while the SDK is still being imported on another thread."""
    home = tmp_path / "home"
    _configure(home, tmp_path / "started.txt")
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("wb") as stderr:
        async with raw_gateway(home, stderr=stderr) as host:
            await host.handshake()
            host.proc.send_signal(signum)
            code = await asyncio.wait_for(host.proc.wait(), 30)
    assert code == 0
    assert "Traceback" not in stderr_path.read_text()
    assert not (tmp_path / "started.txt").exists()  # nothing was started: nothing to stop


async def test_the_end_of_input_still_answers_what_was_asked(tmp_path: Path) -> None:
    """A script writes its requests and closes stdin: the answers come first, then the exit."""
    home = tmp_path / "home"
    _configure(home, tmp_path / "started.txt")
    async with raw_gateway(home) as host:
        await host.handshake()
        request = host.request("tools/call", {"name": "mcp_tools", "arguments": {"query": "echo"}})
        assert host.proc.stdin is not None
        host.proc.stdin.close()
        answer = await host.answer(request)
        assert "basic.echo" in answer["result"]["content"][0]["text"]
        assert await asyncio.wait_for(host.proc.wait(), 30) == 0
    assert (tmp_path / "started.txt").read_text().strip()  # the query started the server; the exit stopped it
