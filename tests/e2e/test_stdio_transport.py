"""connections/stdio.py with real processes: a server is stopped however its owner is cancelled."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_sidecar.connections import stdio
from mcp_sidecar.connections.sdk_streams import load_sdk
from support.sidecar import wait_until

# Closing its stdin does not end it, only SIGTERM does; it notes the end of its stdin in the
# file named by its argument, so a test can wait for the shutdown to have begun. It first notes that
# it runs (`<file>.started`): on a loaded machine a stop begun before Python got that far would
# end it by SIGTERM before it could note anything.
DEAF_SERVER = (
    "import pathlib, sys, time; pathlib.Path(sys.argv[1] + '.started').write_text('');"
    " sys.stdin.buffer.read(); pathlib.Path(sys.argv[1]).write_text('eof'); time.sleep(60)"
)


@pytest.fixture(autouse=True)
def not_hurried(monkeypatch: pytest.MonkeyPatch) -> None:
    """The unhurried stop these tests are about: a test run earlier in this process may have called
    `stdio.hurry()` (a process ending on a signal), after which a stop sends SIGTERM with the closed stdin."""
    monkeypatch.setattr(stdio, "_hurried", False)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def wait_dead(pid: int, within: float) -> None:
    await wait_until(lambda: not alive(pid), within, f"process {pid} to end")


async def spawn_deaf(marker: Path) -> stdio.ServerProcess:
    """The deaf server, once it runs."""
    server = await stdio.spawn(sys.executable, ["-c", DEAF_SERVER, str(marker)], {}, None, subprocess.DEVNULL)
    started = marker.with_name(marker.name + ".started")
    await wait_until(started.exists, 60, "the deaf server to start")
    return server


async def test_stop_finishes_even_when_its_caller_is_cancelled_twice(tmp_path: Path) -> None:
    eof = tmp_path / "eof"
    server = await spawn_deaf(eof)
    pid = server.pid
    caller = asyncio.create_task(stdio.stop(server))
    # The first thing stop() does is close the server's stdin.
    await wait_until(eof.exists, 10, "stop() to close the server's stdin")
    caller.cancel()
    await asyncio.wait([caller], timeout=5)
    assert caller.cancelled()  # the caller is gone; the shielded stop goes on without it
    caller.cancel()
    await wait_dead(pid, within=stdio.STDIN_GRACE_S + stdio.TERM_GRACE_S + 3)
    await wait_until(lambda: server.returncode is not None, 5, "the stopped server to be reaped")


async def test_leaving_the_transport_stops_the_server_despite_repeated_cancels(tmp_path: Path) -> None:
    await load_sdk()
    eof = tmp_path / "eof"
    server = await spawn_deaf(eof)
    pid = server.pid
    entered = asyncio.Event()

    async def owner() -> None:
        async with stdio.transport(server):
            entered.set()
            await asyncio.Event().wait()  # until cancelled

    task = asyncio.create_task(owner())
    await asyncio.wait_for(entered.wait(), 10)
    assert server.taken_over
    task.cancel()  # the owner leaves the transport: stdin closes, the deaf server ignores it
    await wait_until(eof.exists, 10, "the transport to close the server's stdin")
    task.cancel()  # a second cancel lands in the middle of the shutdown's waits
    await wait_dead(pid, within=stdio.STDIN_GRACE_S + stdio.TERM_GRACE_S + 3)
