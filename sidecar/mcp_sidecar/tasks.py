"""Every background task starts here, so none is garbage-collected mid-flight or fails silently."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

_running: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
    task = asyncio.get_running_loop().create_task(coro, name=name)
    _running.add(task)
    task.add_done_callback(_finished)
    return task


def _finished(task: asyncio.Task[Any]) -> None:
    _running.discard(task)
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        # Only the type: exception text may carry server output or credentials.
        log.error("background task %s failed: %s", task.get_name(), type(exc).__name__)


def running() -> frozenset[asyncio.Task[Any]]:
    return frozenset(_running)
