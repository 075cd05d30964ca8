"""`$/progress` from a server's progress (services/progress.py) and URL-step completions (ClientHooks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcp_sidecar.connections.client_hooks import ClientHooks, ClientSide
from mcp_sidecar.connections.stderr_log import StderrLog
from mcp_sidecar.services import progress
from mcp_sidecar.services.progress import WorkDone, work_done


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr("mcp_sidecar.services.progress.time.monotonic", fake)
    return fake


def recorder() -> tuple[list[dict[str, Any]], Any]:
    sent: list[dict[str, Any]] = []

    def notify(method: str, params: Mapping[str, Any]) -> None:
        assert method == "$/progress"
        sent.append(dict(params["value"]))

    return sent, notify


def test_reports_are_one_per_interval_and_a_finished_call_cannot_flood(clock: Clock) -> None:
    sent, notify = recorder()
    work = WorkDone(notify, "t", "s.tool")
    work.begin()
    for step in range(1, 51):  # 50 reports within one interval: the first and the one reaching 100 %
        work.report(step * 2, 100, f"step {step}")
    assert [v.get("percentage") for v in sent[1:]] == [2, 100]
    for _ in range(300):  # a server that keeps reporting 100 %
        work.report(100, 100, "again")
    assert len(sent) == 3
    clock.now += 2 * progress.REPORT_EVERY_S
    work.report(100, 100, "later")
    assert sent[-1] == {"kind": "report", "percentage": 100, "message": "later"}
    work.end()
    work.end()
    work.report(1, 1, "after the end")
    assert [v["kind"] for v in sent] == ["begin", "report", "report", "report", "end"]


def test_percentages_never_go_back_and_odd_numbers_are_left_out(clock: Clock) -> None:
    sent, notify = recorder()
    work = WorkDone(notify, 7, "s.tool")
    for value, total in ((50, 100), (10, 100), (1e308, 1e-308), (float("nan"), 1.0)):
        work.report(value, total, None)
        clock.now += 1
    assert [v.get("percentage") for v in sent] == [50, 50, None, None]


def test_messages_are_one_clean_bounded_line(clock: Clock) -> None:
    sent, notify = recorder()
    WorkDone(notify, "t", "x").report(None, None, "a\x1b[2Jb\nc" + "d" * 500)
    assert sent[0]["message"] == "ab c" + "d" * 196


def test_without_a_token_nothing_is_sent() -> None:
    sent, notify = recorder()
    with work_done(notify, None, "s.tool") as sink:
        assert sink is None

    def failing_call() -> None:
        with work_done(notify, "t", "s.tool") as sink:
            assert sink is not None
            raise RuntimeError

    with pytest.raises(RuntimeError):
        failing_call()
    assert [v["kind"] for v in sent] == ["begin", "end"]  # ended however the block ends


def test_a_completion_reaches_the_editor_once_and_only_for_a_step_the_person_took() -> None:
    hooks = ClientHooks("s", ClientSide(), StderrLog(), lambda level, logger, text, notify: None)
    assert hooks.completed("never-asked") is False
    hooks.asked_urls.add("e-1")
    assert [hooks.completed("e-1") for _ in range(200)] == [True] + [False] * 199
    assert hooks.is_completed("e-1")
    assert not hooks.is_completed("never-asked")
