"""A watchdog over the processes a test lets loose: counted by a token in their environment,
all killed when there are more than a cap, and all killed when the test ends.

For tests that prove a runaway stops (a gateway whose servers include itself): without the
fix such a test must fail with a bounded number of processes, never fork until the machine
gives out. Each process is found by `TOKEN_VAR=<token>` in `/proc/PID/environ` (readable for
the user's own processes only, so nothing else is ever signalled), and killed by its pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

TOKEN_VAR = "MCP_SIDECAR_TEST_PROCESS_GUARD"
POLL_S = 0.05


def new_token() -> str:
    return secrets.token_hex(8)


def marked(token: str) -> list[int]:
    """The pids of this user's processes whose environment holds `TOKEN_VAR=token`."""
    needle = f"{TOKEN_VAR}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


@dataclass
class Guard:
    token: str
    cap: int
    most: int = 0
    """The most marked processes seen alive at once."""
    tripped: bool = False
    """More than `cap` were alive at once: all were killed."""
    seen: set[int] = field(default_factory=set)

    def alive(self) -> list[int]:
        return marked(self.token)


@asynccontextmanager
async def process_guard(cap: int, token: str | None = None) -> AsyncIterator[Guard]:
    """Watch the processes marked with `token` (start them with `TOKEN_VAR=token`) while the block runs."""
    guard = Guard(token or new_token(), cap)

    async def watch() -> None:
        while True:
            pids = guard.alive()
            guard.seen.update(pids)
            guard.most = max(guard.most, len(pids))
            if len(pids) > guard.cap:
                guard.tripped = True
                kill_all(pids)
            await asyncio.sleep(POLL_S)

    task = asyncio.create_task(watch())
    try:
        yield guard
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        kill_all(guard.alive())
