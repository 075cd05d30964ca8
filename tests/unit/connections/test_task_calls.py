"""The task poll loop (`connections/task_calls.py`) against a scripted server, on a clock of its own.

The fake wire answers `tasks/get` from a script and records what it was asked; `sleep` advances
the fake clock instead of waiting, so nothing here sleeps. The end-to-end tests
(`tests/e2e/test_tasks.py`) run the same loop against real servers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

import mcp_types as types
import pydantic
import pytest
from mcp_types import methods

from mcp_sidecar.connections import task_calls
from mcp_sidecar.connections.live_session import LiveSession
from mcp_sidecar.connections.task_calls import TaskState, TaskTimedOut, poll_interval_s, run_task, time_limit_s

RESULT = types.CallToolResult(content=[types.TextContent(type="text", text="done")])


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def elapsed(self) -> float:
        return round(self.now - 100.0, 3)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


class Wire:
    """A server whose task goes through `script` (one state per `tasks/get`), then stays at its last."""

    def __init__(self, first: TaskState | types.CallToolResult, *script: TaskState) -> None:
        self.first = first
        self.script = list(script)
        self.asked: list[tuple[str, float]] = []
        self.cancelled = asyncio.Event()
        self.blocked: asyncio.Event | None = None
        """When set, `tasks/get` waits on it (for a caller to cancel meanwhile)."""
        self.getting = asyncio.Event()
        self.resulting = asyncio.Event()
        self.answer: asyncio.Event | None = None
        """When set, `tasks/result` waits on it (the server asking the person meanwhile)."""
        self.clock = Clock()
        self.on_get: Callable[[], None] = lambda: None

    async def create(self, ttl_ms: int, timeout_s: float) -> TaskState | types.CallToolResult:
        self.asked.append(("create", ttl_ms))
        return self.first

    async def get(self, task_id: str) -> TaskState:
        self.asked.append(("get", self.clock.elapsed()))
        self.getting.set()
        if self.blocked is not None:
            await self.blocked.wait()
        self.on_get()
        if len(self.script) > 1:
            return self.script.pop(0)
        return self.script[0]

    async def result(self, task_id: str) -> types.CallToolResult:
        self.asked.append(("result", self.clock.elapsed()))
        self.resulting.set()
        if self.answer is not None:
            await self.answer.wait()
        return RESULT

    async def cancel(self, task_id: str, timeout_s: float) -> TaskState:
        self.asked.append(("cancel", timeout_s))
        self.cancelled.set()
        return TaskState(task_id, "cancelled")


def working(message: str | None = None, poll_ms: int | None = 1000, ttl_ms: int | None = 60_000) -> TaskState:
    return TaskState("t1", "working", message, ttl_ms, poll_ms)


def ended(status: str = "completed", message: str | None = None) -> TaskState:
    return TaskState("t1", status, message, 60_000, 1000)


class Person:
    """Whether a question of the server's is open; tells when the limit was looked at, past it."""

    def __init__(self) -> None:
        self.asking = False
        self.looked = 0
        self.looked_thrice = asyncio.Event()

    def __call__(self) -> bool:
        self.looked += 1
        if self.looked >= 3:
            self.looked_thrice.set()
        return self.asking


async def run(
    wire: Wire, clock: Clock, timeout_s: float = 30.0, reports: list[Any] | None = None, person: Person | None = None
) -> Any:
    def sink(progress: float | None, total: float | None, message: str | None) -> None:
        assert reports is not None
        reports.append((progress, total, message))

    wire.clock = clock
    return await run_task(
        wire,
        timeout_s,
        sink if reports is not None else None,
        sleep=clock.sleep,
        clock=clock,
        paused=person if person is not None else lambda: False,
    )


@pytest.mark.parametrize(
    ("poll_ms", "expected"), [(600, 0.6), (1, 0.25), (250, 0.25), (60_000, 5.0), (5_000, 5.0), (None, 1.0)]
)
def test_poll_interval_is_the_servers_within_a_floor_and_a_ceiling(poll_ms: int | None, expected: float) -> None:
    assert poll_interval_s(poll_ms) == expected


@pytest.mark.parametrize(
    ("timeout_s", "ttl_ms", "expected"),
    [(30, 1_000, 30), (30, 300_000, 300), (1, 60_000, 60), (30, None, 3600), (30, 10**9, 3600), (7200, None, 7200)],
)
def test_time_limit_is_the_calls_unless_the_ttl_is_longer(
    timeout_s: float, ttl_ms: int | None, expected: float
) -> None:
    assert time_limit_s(timeout_s, ttl_ms) == expected


async def test_polls_at_the_servers_interval_until_the_end_then_fetches_the_result() -> None:
    clock = Clock()
    wire = Wire(working(poll_ms=600), working(poll_ms=600), working(poll_ms=2_000), ended())
    assert await run(wire, clock, timeout_s=30) is RESULT
    # The task asked for lives as long as the call may take; each request gets what time is left.
    assert wire.asked == [("create", 30_000), ("get", 0.6), ("get", 1.2), ("get", 3.2), ("result", 3.2)]
    assert clock.sleeps == [0.6, 0.6, 2.0]


async def test_each_new_status_is_reported_once() -> None:
    clock, reports = Clock(), list[Any]()
    wire = Wire(
        working("Gathering"),
        working("Gathering"),
        working("Analyzing"),
        working(None),
        working("Writing"),
        ended("completed", "Writing"),
    )
    await run(wire, clock, reports=reports)
    assert reports == [
        (None, None, "Gathering"),
        (None, None, "Analyzing"),
        (None, None, "working"),
        (None, None, "Writing"),
        (None, None, "completed"),  # the same message with a new status: the status
    ]


async def test_a_task_ended_at_creation_is_not_polled() -> None:
    clock = Clock()
    wire = Wire(ended("failed", "Tool execution failed"))
    assert await run(wire, clock) is RESULT
    assert [asked for asked, _ in wire.asked] == ["create", "result"]
    assert clock.sleeps == []


@pytest.mark.parametrize("status", ["input_required", "failed", "cancelled"])
async def test_the_result_is_fetched_once_the_server_can_answer_it(status: str) -> None:
    """`input_required`: tasks/result is where the server asks its questions, then answers."""
    clock, reports = Clock(), list[Any]()
    wire = Wire(working(), TaskState("t1", status, None, 60_000, 1000))
    assert await run(wire, clock, reports=reports) is RESULT
    assert [asked for asked, _ in wire.asked] == ["create", "get", "result"]
    assert reports[-1] == (None, None, status.replace("_", " "))


async def test_a_server_that_runs_the_call_at_once_answers_its_result() -> None:
    clock = Clock()
    wire = Wire(RESULT)
    assert await run(wire, clock) is RESULT
    assert wire.asked == [("create", 30_000)]


async def test_out_of_time_cancels_the_task() -> None:
    clock = Clock()
    wire = Wire(working(poll_ms=1000, ttl_ms=1_500), working(poll_ms=1000, ttl_ms=1_500))
    with pytest.raises(TaskTimedOut):
        await run(wire, clock, timeout_s=3)
    # The limit is the call's 3 s (the TTL is shorter): three polls, then tasks/cancel.
    assert [asked for asked, _ in wire.asked] == ["create", "get", "get", "cancel"]
    assert clock.now - 100.0 == pytest.approx(3.0)


async def test_a_longer_ttl_lengthens_the_limit() -> None:
    clock = Clock()
    wire = Wire(working(poll_ms=1000, ttl_ms=10_000), *[working(poll_ms=1000)] * 6, ended())
    assert await run(wire, clock, timeout_s=1) is RESULT
    assert clock.now - 100.0 == pytest.approx(7.0)
    assert "cancel" not in [asked for asked, _ in wire.asked]


async def test_the_callers_cancellation_cancels_the_task_and_is_re_raised() -> None:
    clock = Clock()
    wire = Wire(working(), working())
    wire.blocked = asyncio.Event()
    call = asyncio.create_task(run(wire, clock))
    await asyncio.wait_for(wire.getting.wait(), 5)
    assert wire.asked[-1] == ("get", 1.0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.wait_for(wire.cancelled.wait(), 5)
    assert wire.asked[-1] == ("cancel", task_calls.CANCEL_TIMEOUT_S)


async def question_open_past_the_limit(person: Person, clock: Clock, wire: Wire) -> asyncio.Task[Any]:
    """A call waiting on `tasks/result` while the server asks the person, until past its limit."""
    wire.answer = asyncio.Event()

    def server_asks() -> None:
        person.asking, person.looked = True, 0
        clock.now += 3600  # past the limit (a paused clock would stand still; the limit must not end it)

    wire.on_get = server_asks
    call = asyncio.create_task(run(wire, clock, timeout_s=30, person=person))
    await asyncio.wait_for(wire.resulting.wait(), 5)
    await asyncio.wait_for(person.looked_thrice.wait(), 5)
    return call


async def test_a_question_open_past_the_limit_does_not_end_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_calls, "PAUSED_POLL_S", 0.01)
    clock, person = Clock(), Person()
    wire = Wire(working(), TaskState("t1", "input_required", None, 60_000, 1000))
    call = await question_open_past_the_limit(person, clock, wire)
    assert not call.done()
    assert wire.answer is not None
    wire.answer.set()  # the person answered, the server finished the task
    assert await asyncio.wait_for(call, 5) is RESULT
    assert "cancel" not in [asked for asked, _ in wire.asked]


async def test_the_limit_applies_again_once_the_question_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_calls, "PAUSED_POLL_S", 0.01)
    clock, person = Clock(), Person()
    wire = Wire(working(), TaskState("t1", "input_required", None, 60_000, 1000))
    call = await question_open_past_the_limit(person, clock, wire)
    person.asking = False
    with pytest.raises(TaskTimedOut):
        await asyncio.wait_for(call, 5)
    assert wire.asked[-1] == ("cancel", task_calls.CANCEL_TIMEOUT_S)


def session_with(tool_tasks: dict[str, str], server_tasks: Any) -> LiveSession:
    client = SimpleNamespace(server_capabilities=SimpleNamespace(tasks=server_tasks))
    return cast(LiveSession, SimpleNamespace(tool_tasks=tool_tasks, client=client))


def test_a_tool_runs_as_a_task_only_when_it_may_and_the_server_takes_tasks() -> None:
    takes = types.ServerTasksCapability(
        requests=types.ServerTasksRequestsCapability(tools=types.TasksToolsCapability(call=types.TasksCallCapability()))
    )
    support = {"r": "required", "o": "optional"}
    assert task_calls.runs_as_task(session_with(support, takes), "r")
    assert task_calls.runs_as_task(session_with(support, takes), "o")
    assert not task_calls.runs_as_task(session_with(support, takes), "plain")
    # Without tasks.requests.tools.call the specification forbids task augmentation.
    assert not task_calls.runs_as_task(session_with(support, None), "r")
    assert not task_calls.runs_as_task(session_with(support, types.ServerTasksCapability()), "r")


# -- what the SDK offers (mcp 2.3): pinned, so an SDK upgrade that changes it fails here -----------


def test_the_sdk_validates_a_task_answer_to_tools_call_as_a_call_tool_result() -> None:
    """Why the first `tools/call` of a task bypasses `ClientSession.send_request`."""
    created = {"task": {"taskId": "t", "status": "working", "createdAt": "x", "lastUpdatedAt": "x", "ttl": None}}
    with pytest.raises(pydantic.ValidationError):
        methods.validate_server_result("tools/call", "2025-11-25", created)
    # tasks/* are not in the SDK's tables at all: send_request leaves their answers to us.
    with pytest.raises(KeyError):
        methods.validate_server_result("tasks/get", "2025-11-25", created["task"])
    assert "task" in types.CallToolRequestParams.model_fields
