"""What the caller of a tool call learns while the call runs: that its server made a task of it.

A front that can answer its own client before the call ends (the gateway, for a host that follows
tasks) sets `TASK_MADE` around the call; the connection that follows a task (`connections/
task_calls.py`, either era) calls `task_made()` once the server made one. A context variable, since
the call runs in the caller's asyncio task (or one it spawned, which copies the context): nothing
between the two layers passes it on, and neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

TASK_MADE: ContextVar[Callable[[], None] | None] = ContextVar("mcp_sidecar_task_made", default=None)


def task_made() -> None:
    """The server of the call in flight in this context made a task of it: tell whoever asked."""
    tell = TASK_MADE.get()
    if tell is not None:
        tell()


__all__ = ["TASK_MADE", "task_made"]
