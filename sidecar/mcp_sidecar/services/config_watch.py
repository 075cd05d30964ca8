"""Watch the configuration files and reload when one changes, so an edit made anywhere (an
editor, another sidecar's `/mcp add`, a text editor) reaches every running sidecar.

Polling `stat` twice a second is enough for files people edit by hand, costs nothing, and
works the same on every platform and filesystem. A change is applied once the files have
looked the same for one more poll (debounced), so a burst of writes reloads once.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5

Signature = tuple[tuple[str, tuple[int, int, int, int] | None], ...]


def signature(files: list[Path]) -> Signature:
    """What identifies each file's content without reading it (symlinks followed)."""
    out: list[tuple[str, tuple[int, int, int, int] | None]] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            out.append((str(path), None))
        else:
            out.append((str(path), (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)))
    return tuple(out)


class ConfigWatcher:
    """Polls `files()`; calls `reload()` when their signature moved away from `baseline`."""

    def __init__(self, files: Callable[[], list[Path]], reload: Callable[[], Awaitable[object]]) -> None:
        self._files = files
        self._reload = reload
        self.baseline: Signature = signature(files())
        self._task: asyncio.Task[None] | None = None

    def mark_loaded(self, seen: Signature) -> None:
        """Record what the files looked like just before the configuration was read."""
        self.baseline = seen

    def snapshot(self) -> Signature:
        return signature(self._files())

    def start(self) -> None:
        if self._task is None:
            from mcp_sidecar import tasks

            self._task = tasks.spawn(self._run(), "config-watch")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        pending: Signature | None = None
        while True:
            await asyncio.sleep(POLL_SECONDS)
            current = self.snapshot()
            if current == self.baseline:
                pending = None
                continue
            if current != pending:
                pending = current  # still changing, or just changed: wait for one quiet poll
                continue
            pending = None
            log.info("configuration files changed; reloading")
            try:
                await self._reload()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.error("reloading after a file change failed: %s", type(exc).__name__)
                self.baseline = current  # do not retry the same content in a loop
