"""`task_calls.follow_task`, the 2026-07-28 tasks extension's loop, against a scripted server on a fake clock.

`sleep` advances the fake clock instead of waiting, so nothing here sleeps. The end-to-end tests
(`tests/e2e/test_tasks_extension.py`) run the same loop against a real server.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_sidecar import long_calls
from mcp_sidecar.connections.task_calls import (
    MAX_INPUT_ROUNDS,
    TaskMisbehaved,
    TaskState,
    TaskTimedOut,
    follow_task,
)

DONE = {"content": [{"type": "text", "text": "done"}], "isError": False}
ASKED = {"method": "elicitation/create", "params": {"message": "Which?", "requestedSchema": {"type": "object"}}}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


class Wire:
    """A server whose task goes through `script`, one state per `tasks/get`, then stays at its last."""

    def __init__(self, *script: TaskState) -> None:
        self.script = list(script)
        self.asked: list[str] = []
        self.cancelled = asyncio.Event()
        self.blocked: asyncio.Event | None = None
        self.getting = asyncio.Event()

    async def get(self, task_id: str) -> TaskState:
        self.asked.append(f"get {task_id}")
        self.getting.set()
        if self.blocked is not None:
            await self.blocked.wait()
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    async def answer(self, key: str, request: Any) -> Any:
        self.asked.append(f"answer {key}")
        return {"action": "accept", "content": {"key": key}}

    async def update(self, task_id: str, responses: dict[str, Any]) -> None:
        self.asked.append(f"update {task_id} {sorted(responses)}")

    async def cancel(self, task_id: str, timeout_s: float) -> None:
        self.asked.append(f"cancel {task_id}")
        self.cancelled.set()


def working(message: str | None = None, poll_ms: int | None = 500, **extra: Any) -> TaskState:
    return TaskState("t1", "working", message, 60_000, poll_ms, **extra)


async def test_polls_at_the_servers_pace_reports_each_change_and_ends_at_the_first_end() -> None:
    clock, reports = Clock(), []
    wire = Wire(working("step 1"), working("step 1"), TaskState("t1", "completed", "step 1", result=DONE), working())
    end = await follow_task(wire, working(), 30, lambda v, t, m: reports.append(m), sleep=clock.sleep, clock=clock)
    assert (end.status, end.result) == ("completed", DONE)
    assert wire.asked == ["get t1", "get t1", "get t1"]  # nothing after the end: delivered once
    assert clock.sleeps == [0.5, 0.5, 0.5]
    assert reports == ["working", "step 1", "completed"]


async def test_questions_are_answered_once_per_key_and_sent_with_tasks_update() -> None:
    clock = Clock()
    asking = TaskState("t1", "input_required", None, 60_000, 250, {"a": ASKED, "b": ASKED})
    still = TaskState("t1", "input_required", None, 60_000, 250, {"a": ASKED, "b": ASKED, "c": ASKED})
    wire = Wire(asking, still, TaskState("t1", "completed", result=DONE))
    end = await follow_task(wire, working(), 30, None, sleep=clock.sleep, clock=clock)
    assert end.status == "completed"
    assert wire.asked == [
        "get t1",
        "answer a",
        "answer b",
        "update t1 ['a', 'b']",
        "get t1",
        "answer c",
        "update t1 ['c']",
        "get t1",
    ]


async def test_a_status_the_extension_does_not_define_cancels_and_raises() -> None:
    clock = Clock()
    wire = Wire(TaskState("t1", "paused"))
    with pytest.raises(TaskMisbehaved, match="status"):
        await follow_task(wire, working(), 30, None, sleep=clock.sleep, clock=clock)
    assert wire.asked[-1] == "cancel t1"


async def test_questions_without_end_are_cut_off() -> None:
    clock = Clock()

    class Asking(Wire):
        rounds = 0

        async def get(self, task_id: str) -> TaskState:
            self.rounds += 1
            return TaskState("t1", "input_required", None, 60_000, 250, {f"k{self.rounds}": ASKED})

    wire = Asking()
    with pytest.raises(TaskMisbehaved, match=f"more than {MAX_INPUT_ROUNDS} rounds"):
        await follow_task(wire, working(), 30, None, sleep=clock.sleep, clock=clock)
    assert wire.asked.count("cancel t1") == 1


async def test_a_task_that_never_ends_times_out_at_its_ttl_and_is_cancelled() -> None:
    clock = Clock()
    wire = Wire(TaskState("t1", "working", None, 2_000, 500))
    with pytest.raises(TaskTimedOut):
        await follow_task(wire, TaskState("t1", "working", None, 2_000, 500), 1, None, sleep=clock.sleep, clock=clock)
    assert wire.asked[-1] == "cancel t1"
    assert clock.now - 100.0 == pytest.approx(2.0)  # the TTL (2 s), longer than the call's 1 s


async def test_the_callers_cancellation_sends_tasks_cancel_and_the_caller_learns_of_the_task() -> None:
    wire = Wire(working())
    wire.blocked = asyncio.Event()
    made: list[bool] = []

    async def call() -> TaskState:
        long_calls.TASK_MADE.set(lambda: made.append(True))
        return await follow_task(wire, working(poll_ms=250), 30, None)

    pending = asyncio.ensure_future(call())
    await asyncio.wait_for(wire.getting.wait(), 10)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await asyncio.wait_for(wire.cancelled.wait(), 10)
    assert made == [True]
