"""The gateway's tasks for its hosts (`gateway/host_tasks.py`), with calls that are coroutines of the test.

A call says its server made a task (`long_calls.task_made`) when the test lets it; the end-to-end
tests (`tests/e2e/test_gateway_tasks.py`) run the same table behind a real gateway.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_sidecar import long_calls
from mcp_sidecar.gateway import host_tasks
from mcp_sidecar.gateway.host_tasks import HostTasks, TaskProgress, follows_tasks

ANSWER = {"content": [{"type": "text", "text": "done"}], "isError": False}


class Call:
    """A call whose server makes a task of it (or not), then ends when `finish` is set."""

    def __init__(self, *, makes_task: bool = True) -> None:
        self.makes_task = makes_task
        self.finish = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.progress: TaskProgress | None = None

    async def __call__(self, progress: TaskProgress) -> dict[str, Any]:
        self.progress = progress
        if self.makes_task:
            long_calls.task_made()
        try:
            await self.finish.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return ANSWER


async def ended(table: HostTasks, task_id: str) -> None:
    job = table.job(task_id)
    assert job is not None
    await asyncio.wait_for(asyncio.wait({job}), 10)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_only_a_request_naming_the_extension_follows_tasks() -> None:
    named: dict[str, Any] = {
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
    assert follows_tasks(named)
    assert not follows_tasks({"io.modelcontextprotocol/clientCapabilities": {"extensions": {}}})
    assert not follows_tasks({"io.modelcontextprotocol/clientCapabilities": {}})
    assert not follows_tasks(None)


async def test_a_call_without_a_task_upstream_is_answered_directly() -> None:
    table = HostTasks()
    call = Call(makes_task=False)
    call.finish.set()
    assert await asyncio.wait_for(table.run(call), 10) == ANSWER


async def test_a_task_reports_its_status_message_then_its_result() -> None:
    table = HostTasks()
    call = Call()
    created = await asyncio.wait_for(table.run(call), 10)
    task_id = created["taskId"]
    assert (created["resultType"], created["status"], created["pollIntervalMs"]) == ("task", "working", 1000)
    assert "result" not in created
    assert call.progress is not None
    told: list[Any] = []
    sink = call.progress.around(lambda *report: told.append(report))
    sink(None, None, "step 1\\nof 2")
    got = table.get(task_id)
    assert got is not None
    assert (got["resultType"], got["status"], got["statusMessage"]) == ("complete", "working", "step 1\\nof 2")
    assert told == []  # the host's request was answered: nothing more goes to it
    call.finish.set()
    await ended(table, task_id)
    done = table.get(task_id)
    assert done is not None
    assert (done["status"], done["result"]) == ("completed", ANSWER)
    assert table.get("unknown") is None


async def test_cancel_cancels_the_call() -> None:
    table = HostTasks()
    call = Call()
    task_id = (await asyncio.wait_for(table.run(call), 10))["taskId"]
    assert table.cancel(task_id)
    await asyncio.wait_for(call.cancelled.wait(), 10)
    got = table.get(task_id)
    assert got is not None
    assert got["status"] == "cancelled"
    assert "result" not in got
    assert not table.cancel("unknown")


async def test_finished_tasks_are_dropped_after_a_while_and_the_table_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    table = HostTasks(clock=clock)
    first = Call()
    first_id = (await asyncio.wait_for(table.run(first), 10))["taskId"]
    first.finish.set()
    await ended(table, first_id)
    clock.now += host_tasks.KEEP_FINISHED_S
    assert table.get(first_id) is None
    monkeypatch.setattr(host_tasks, "MAX_TASKS", 2)
    calls = [Call(), Call()]
    for call in calls:
        assert (await asyncio.wait_for(table.run(call), 10))["resultType"] == "task"
    # Two running: the next call is answered without a task, when it ends.
    direct = Call()
    pending = asyncio.ensure_future(table.run(direct))
    await asyncio.sleep(0)
    direct.finish.set()
    assert await asyncio.wait_for(pending, 10) == ANSWER
    for call in calls:
        call.finish.set()
