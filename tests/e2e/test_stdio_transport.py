"""connections/stdio.py with real processes: a server is stopped however its owner is cancelled."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from mcp_sidecar.connections import stdio
from mcp_sidecar.connections.sdk_streams import load_sdk

# Never reads stdin, so closing it changes nothing: only SIGTERM ends it.
DEAF_SERVER = "import time; time.sleep(60)"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def wait_dead(pid: int, within: float) -> float:
    start = time.monotonic()
    while alive(pid):
        assert time.monotonic() - start < within, f"process {pid} still alive after {within} s"
        await asyncio.sleep(0.05)
    return time.monotonic() - start


async def spawn_deaf() -> stdio.ServerProcess:
    return await stdio.spawn(sys.executable, ["-c", DEAF_SERVER], {}, None, subprocess.DEVNULL)


async def test_stop_finishes_even_when_its_caller_is_cancelled_twice() -> None:
    server = await spawn_deaf()
    pid = server.process.pid
    caller = asyncio.create_task(stdio.stop(server.process))
    await asyncio.sleep(0.1)
    caller.cancel()
    await asyncio.sleep(0.1)
    caller.cancel()
    took = await wait_dead(pid, within=stdio.STDIN_GRACE_S + stdio.TERM_GRACE_S + 3)
    assert took < stdio.STDIN_GRACE_S + stdio.TERM_GRACE_S + 3
    assert server.process.returncode is not None


async def test_leaving_the_transport_stops_the_server_despite_repeated_cancels() -> None:
    await load_sdk()
    server = await spawn_deaf()
    pid = server.process.pid
    entered = asyncio.Event()

    async def owner() -> None:
        async with stdio.transport(server):
            entered.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(owner())
    await entered.wait()
    assert server.taken_over
    task.cancel()  # the owner leaves the transport: stdin closes, the deaf server ignores it
    await asyncio.sleep(0.3)
    task.cancel()  # a second cancel lands in the middle of the shutdown's waits
    await wait_dead(pid, within=stdio.STDIN_GRACE_S + stdio.TERM_GRACE_S + 3)
