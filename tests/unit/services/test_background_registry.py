"""One client's background calls (`services/background.py`), with calls that are coroutines of the test.

A call goes to the background when it outlives the threshold: here a call that ends only when the test
lets it, so it is running at any threshold; the end-to-end tests (`tests/e2e/test_background_calls.py`) run the same
registry behind a real sidecar and gateway.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, fail
from mcp_sidecar.protocol.results import CallToolResult
from mcp_sidecar.services import background
from mcp_sidecar.services.background import BackgroundCall, BackgroundCalls, ProgressSink

SOON = 0.01
"""A threshold every call of these tests outlives: none ends before the test lets it."""
ANSWER = cast("CallToolResult", {"id": "s.t", "server": "s", "tool": "t", "isError": False, "content": []})


class Call:
    """A call that reports what it is told to, then ends when `finish` is set."""

    def __init__(self, *, fails: SidecarError | None = None) -> None:
        self.fails = fails
        self.finish = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.sink: ProgressSink | None = None
        self.started = asyncio.Event()

    async def __call__(self, progress: ProgressSink | None) -> CallToolResult:
        self.sink = progress
        self.started.set()
        try:
            await self.finish.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        if self.fails is not None:
            raise self.fails
        return ANSWER


class Sent(list[tuple[str, dict[str, Any]]]):
    def __call__(self, method: str, params: Any) -> None:
        self.append((method, dict(params)))

    def methods(self) -> list[str]:
        return [m for m, _ in self]


async def gone(calls: BackgroundCalls, call: Call, session: str = "chat") -> BackgroundCall:
    ran = await calls.run("s.t", session, call, None)
    assert isinstance(ran, BackgroundCall)
    return ran


async def test_without_a_threshold_the_call_holds_its_caller_and_nothing_is_kept() -> None:
    sent = Sent()
    calls = BackgroundCalls(sent)
    call = Call()
    call.finish.set()
    assert await calls.run("s.t", "chat", call, None) == ANSWER
    assert calls.list() == []
    assert sent == []


async def test_a_call_that_ends_first_is_answered_as_ever() -> None:
    calls = BackgroundCalls(Sent(), after=60.0)
    call = Call()
    call.finish.set()
    assert await calls.run("s.t", "chat", call, None) == ANSWER
    assert calls.list() == []


async def test_a_failure_within_the_threshold_is_raised_as_it_was() -> None:
    calls = BackgroundCalls(Sent(), after=60.0)
    call = Call(fails=fail("timeout", "call", "The call timed out.", "s"))
    call.finish.set()
    with pytest.raises(SidecarError) as raised:
        await calls.run("s.t", "chat", call, None)
    assert raised.value.diagnostic.code == "timeout"


async def test_a_call_past_the_threshold_goes_to_the_background_and_its_result_is_delivered_once() -> None:
    sent = Sent()
    calls = BackgroundCalls(sent, after=SOON)
    call = Call()
    ran = await gone(calls, call)
    assert ran.view()["status"] == "running"
    assert sent.methods() == [methods.CALL_BACKGROUND]
    assert sent[0][1]["callId"] == ran.call_id
    assert sent[0][1]["tool"] == "s.t"
    view, outcome = await calls.result(ran.call_id, 0)
    assert (view["status"], outcome) == ("running", None)  # still running: kept
    call.finish.set()
    view, outcome = await calls.result(ran.call_id, 30)
    assert view["status"] == "completed"
    assert "endedAt" in view
    assert outcome == ANSWER
    with pytest.raises(SidecarError) as again:
        await calls.result(ran.call_id, 0)
    assert again.value.diagnostic.code == "call_not_found"
    assert calls.list() == []


async def test_progress_is_kept_and_sent_at_most_once_a_second() -> None:
    sent = Sent()
    now = [100.0]
    calls = BackgroundCalls(sent, after=SOON, clock=lambda: now[0])
    call = Call()
    ran = await gone(calls, call)
    assert call.sink is not None
    for step in range(1, 501):  # a flood, within one second
        call.sink(float(step), 500.0, f"step {step}\x1b[31m")
    progress = [p for m, p in sent if m == methods.CALL_PROGRESS]
    assert len(progress) == 1
    assert progress[0]["progress"] == {"progress": 1.0, "total": 500.0, "message": "step 1"}
    assert calls.list()[0]["progress"] == {"progress": 500.0, "total": 500.0, "message": "step 500"}
    now[0] += background.PROGRESS_EVERY_S
    call.sink(None, None, "later")
    assert [p for m, p in sent if m == methods.CALL_PROGRESS][-1]["progress"]["message"] == "later"
    call.sink(float("nan"), None, None)
    assert calls.list()[0]["progress"]["progress"] == 500.0  # a value that is no number is not kept
    call.finish.set()
    await calls.result(ran.call_id, 30)
    assert sent.methods()[-1] == methods.CALL_FINISHED


async def test_progress_before_the_background_goes_to_the_caller() -> None:
    heard: list[tuple[float | None, float | None, str | None]] = []
    calls = BackgroundCalls(Sent(), after=60.0)
    call = Call()
    running = asyncio.ensure_future(calls.run("s.t", "chat", call, lambda v, t, m: heard.append((v, t, m))))
    await asyncio.wait_for(call.started.wait(), 5)
    assert call.sink is not None
    call.sink(1.0, 2.0, "half")
    call.finish.set()
    assert await asyncio.wait_for(running, 5) == ANSWER
    assert heard == [(1.0, 2.0, "half")]


async def test_cancel_stops_the_call_and_leaves_it_cancelled() -> None:
    sent = Sent()
    calls = BackgroundCalls(sent, after=SOON)
    call = Call()
    ran = await gone(calls, call)
    assert calls.cancel(ran.call_id)["status"] == "running"  # until the job has ended
    await asyncio.wait_for(call.cancelled.wait(), 5)
    view, outcome = await calls.result(ran.call_id, 30)
    assert (view["status"], outcome) == ("cancelled", None)
    assert methods.CALL_FINISHED in sent.methods()


async def test_a_failure_in_the_background_is_kept_as_its_diagnostic() -> None:
    calls = BackgroundCalls(Sent(), after=SOON)
    call = Call(fails=fail("connection_failed", "call", "The server went away.", "s"))
    ran = await gone(calls, call)
    call.finish.set()
    view, outcome = await calls.result(ran.call_id, 30)
    assert view["status"] == "failed"
    assert isinstance(outcome, Diagnostic)
    assert outcome.code == "connection_failed"


async def test_a_session_sees_only_its_own_calls() -> None:
    calls = BackgroundCalls(Sent(), after=SOON)
    mine, theirs = Call(), Call()
    ran = await gone(calls, mine, "mine")
    await gone(calls, theirs, "theirs")
    assert [c["session"] for c in calls.list("mine")] == ["mine"]
    with pytest.raises(SidecarError) as refused:
        await calls.result(ran.call_id, 0, session="theirs")
    assert refused.value.diagnostic.code == "call_not_found"
    with pytest.raises(SidecarError):
        calls.cancel(ran.call_id, session="theirs")
    assert not mine.cancelled.is_set()


async def test_a_session_end_releases_its_calls_and_cancels_the_running_ones() -> None:
    calls = BackgroundCalls(Sent(), after=SOON)
    mine, theirs = Call(), Call()
    await gone(calls, mine, "mine")
    await gone(calls, theirs, "theirs")
    assert calls.end_session("mine") == 1
    await asyncio.wait_for(mine.cancelled.wait(), 5)
    assert [c["session"] for c in calls.list()] == ["theirs"]
    calls.close()
    await asyncio.wait_for(theirs.cancelled.wait(), 5)
    assert calls.list() == []


async def test_past_the_bound_a_call_holds_its_caller() -> None:
    calls = BackgroundCalls(Sent(), after=SOON)
    running = [Call() for _ in range(background.MAX_CALLS)]
    for call in running:
        await gone(calls, call)
    one_more = Call()
    one_more.finish.set()
    assert await calls.run("s.t", "chat", one_more, None) == ANSWER
    assert len(calls.list()) == background.MAX_CALLS
    calls.close()


async def test_the_caller_giving_up_before_the_threshold_cancels_the_call() -> None:
    calls = BackgroundCalls(Sent(), after=60.0)
    call = Call()
    running = asyncio.ensure_future(calls.run("s.t", "chat", call, None))
    await asyncio.wait_for(call.started.wait(), 5)
    running.cancel()
    await asyncio.wait_for(call.cancelled.wait(), 5)
    assert calls.list() == []
