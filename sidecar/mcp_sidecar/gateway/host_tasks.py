"""Tasks the gateway makes of its hosts' tool calls (2026-07-28, `io.modelcontextprotocol/tasks`, SEP-2663).

The gateway advertises the extension in its 2026-07-28 capabilities. A host's `tools/call` whose
request names the extension in its client capabilities runs as a job of the gateway's; when the
upstream server makes a task of it (`long_calls.task_made`, either era), the host is answered at
once with a task of the gateway's own, `{resultType: "task", taskId, status: "working", createdAt,
lastUpdatedAt, ttlMs, pollIntervalMs}`, and follows it:

- `tasks/get {taskId}` → the task (`resultType: "complete"`): `working` with the upstream task's
  latest status message as `statusMessage`; `completed` with `result`, the call's answer as the
  host would have had it (a failed call is an `isError` result, as always here); `cancelled`;
  `failed` with `error` only when the gateway itself failed;
- `tasks/update {taskId, inputResponses}` → an acknowledgement (a 2026-07-28 host is asked no
  questions through the gateway, so nothing is outstanding and responses are ignored);
- `tasks/cancel {taskId}` → an acknowledgement; the call is cancelled, which cancels the upstream
  task (`tasks/cancel` upstream, either era).

A call whose server answers without a task is answered as ever, as is every call of a host that
does not name the extension. Task ids are unguessable (they are the only key: the spec's tasks
have no owner a server could check); a finished task is kept KEEP_FINISHED_S for the host to read,
at most MAX_TASKS are kept, and a call past that many running ones is answered without a task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp_sidecar import long_calls, tasks
from mcp_sidecar.output.sanitize import one_line

log = logging.getLogger(__name__)

EXTENSION = "io.modelcontextprotocol/tasks"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
POLL_INTERVAL_MS = 1000
"""The gateway's hint to its hosts: its own state changes only as fast as upstream polls."""
TTL_MS = 3_600_000
"""A task lives this long from its creation at most (a call's time limit is an hour at most)."""
KEEP_FINISHED_S = 600.0
"""How long a finished task's result stays readable."""
MAX_TASKS = 100
MESSAGE_CHARS = 300
TASK_NOT_FOUND = "Task not found"

ProgressSink = Callable[[float | None, float | None, str | None], None]


@dataclass(slots=True)
class TaskProgress:
    """A call's progress while the gateway may still answer it: to the host's request until a task is
    made of it, then each status message into the task (read by the host's next `tasks/get`)."""

    task: HostTask | None = None

    def around(self, sink: ProgressSink | None) -> ProgressSink:
        def report(value: float | None, total: float | None, message: str | None) -> None:
            task = self.task
            if task is None:
                if sink is not None:
                    sink(value, total, message)
            elif message:
                task.message = one_line(message)[:MESSAGE_CHARS]
                task.updated_at = _stamp()

        return report


Work = Callable[[TaskProgress], Awaitable[dict[str, Any]]]
"""The call, its progress given: its answer for the host."""


def follows_tasks(meta: Any) -> bool:
    """Whether a 2026-07-28 request's `_meta` names the extension in its client capabilities."""
    capabilities = meta.get(CAPABILITIES_KEY) if isinstance(meta, dict) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class HostTask:
    task_id: str
    job: asyncio.Task[dict[str, Any]]
    created_at: str = field(default_factory=_stamp)
    updated_at: str = ""
    message: str | None = None
    cancelled: bool = False
    finished_at: float | None = None

    def view(self) -> dict[str, Any]:
        """The task as `tasks/get` answers it (and as it was created, without `resultType`)."""
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at or self.created_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        if self.message:
            out["statusMessage"] = self.message
        if out["status"] == "completed":
            out["result"] = self.job.result()
        elif out["status"] == "failed":
            out["error"] = {"code": -32603, "message": "The gateway could not finish the call."}
        return out

    @property
    def status(self) -> str:
        if self.cancelled or (self.job.done() and self.job.cancelled()):
            return "cancelled"
        if not self.job.done():
            return "working"
        return "failed" if self.job.exception() is not None else "completed"


class HostTasks:
    """The gateway's tasks, by id."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._tasks: dict[str, HostTask] = {}
        self._clock = clock

    async def run(self, work: Work) -> dict[str, Any]:
        """The call's answer when it ends without a task upstream, else a task of the gateway's."""
        made = asyncio.Event()
        progress = TaskProgress()

        async def job() -> dict[str, Any]:
            long_calls.TASK_MADE.set(made.set)
            return await work(progress)

        self._drop_old()
        if len(self._tasks) >= MAX_TASKS:
            return await work(progress)
        running = tasks.spawn(job(), "gateway-host-task")
        waiting = asyncio.ensure_future(made.wait())
        try:
            await asyncio.wait({running, waiting}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            running.cancel()
            raise
        finally:
            waiting.cancel()
        if running.done():
            return running.result()
        task = HostTask(secrets.token_urlsafe(24), running)
        progress.task = task
        self._tasks[task.task_id] = task
        running.add_done_callback(lambda _: self._finished(task))
        log.info("gateway: a call goes on as task %s...", task.task_id[:6])
        return {"resultType": "task", **task.view()}

    def _finished(self, task: HostTask) -> None:
        task.finished_at = self._clock()
        task.updated_at = _stamp()

    def _drop_old(self) -> None:
        now = self._clock()
        for task_id, task in list(self._tasks.items()):
            if task.finished_at is not None and now - task.finished_at >= KEEP_FINISHED_S:
                del self._tasks[task_id]
        if len(self._tasks) >= MAX_TASKS:
            ended = [t for t in self._tasks.values() if t.finished_at is not None]
            finished = sorted(ended, key=lambda t: t.finished_at or 0.0)
            for task in finished[: len(self._tasks) - MAX_TASKS + 1]:
                del self._tasks[task.task_id]

    def get(self, task_id: str) -> dict[str, Any] | None:
        self._drop_old()
        task = self._tasks.get(task_id)
        return None if task is None else {"resultType": "complete", **task.view()}

    def cancel(self, task_id: str) -> bool:
        task = self._tasks.get(task_id)
        if task is None:
            return False
        if not task.job.done():
            task.cancelled = True
            task.message = "The task was cancelled by request."
            task.updated_at = _stamp()
            task.job.cancel()
        return True

    def known(self, task_id: str) -> bool:
        return task_id in self._tasks

    def job(self, task_id: str) -> asyncio.Task[dict[str, Any]] | None:
        """The call behind a task, to wait for."""
        task = self._tasks.get(task_id)
        return None if task is None else task.job

    async def close(self) -> None:
        """The gateway stops: every running call is cancelled (so are their upstream tasks)."""
        running = [t.job for t in self._tasks.values() if not t.job.done()]
        for job in running:
            job.cancel()
        for job in running:
            with contextlib.suppress(BaseException):
                await job


__all__ = ["EXTENSION", "HostTask", "HostTasks", "TaskProgress", "follows_tasks"]
