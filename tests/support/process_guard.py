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
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and has_mark(p.name, token)]


def has_mark(pid: int | str, token: str) -> bool:
    try:
        return f"{TOKEN_VAR}={token}".encode() in _proc(pid, "environ").split(b"\0")
    except OSError:
        return False


def _proc(pid: int | str, name: str) -> bytes:
    return (Path("/proc") / str(pid) / name).read_bytes()


def forked_only(pid: int) -> bool:
    """A child between fork and exec: its parent's command line and environment, so it carries the
    parent's mark for a moment (every server a marked process starts does). Not a process of its own
    yet: counting it would see one process more than runs."""
    try:
        parent = int(_proc(pid, "stat").rsplit(b")", 1)[1].split()[1])
        return _proc(pid, "cmdline") == _proc(parent, "cmdline") and _proc(pid, "environ") == _proc(parent, "environ")
    except (OSError, IndexError, ValueError):
        return False


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
    seen: dict[int, str] = field(default_factory=dict)
    """Every marked process counted, with its command line (what a failed count names)."""

    def alive(self) -> list[int]:
        return marked(self.token)

    def note(self, pids: list[int]) -> None:
        for pid in pids:
            with contextlib.suppress(OSError):
                self.seen[pid] = _proc(pid, "cmdline").replace(b"\0", b" ").decode(errors="replace")[:300]


@asynccontextmanager
async def process_guard(cap: int, token: str | None = None) -> AsyncIterator[Guard]:
    """Watch the processes marked with `token` (start them with `TOKEN_VAR=token`) while the block runs."""
    guard = Guard(token or new_token(), cap)

    async def watch() -> None:
        while True:
            pids = guard.alive()
            # Marked after its exec too (a child read just before it, then compared just after, is not).
            running = [pid for pid in pids if not forked_only(pid) and has_mark(pid, guard.token)]
            guard.note(running)
            guard.most = max(guard.most, len(running))
            if len(running) > guard.cap:
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
