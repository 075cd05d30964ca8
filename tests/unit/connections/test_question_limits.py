"""How many questions one server may put to the person (`connections/questions.py`)."""

from __future__ import annotations

from typing import Any

from mcp_sidecar.connections.client_hooks import ClientHooks, ClientOffer, ClientSide
from mcp_sidecar.connections.questions import MAX_PER_CALL, MAX_PER_MINUTE, CallQuestions, QuestionBudget
from mcp_sidecar.connections.stderr_log import StderrLog


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_a_call_is_shown_ten_questions_and_told_of_the_rest() -> None:
    budget = QuestionBudget(Clock())
    with budget.call() as questions:
        shown = [budget.refusal() for _ in range(MAX_PER_CALL)]
        refused = [budget.refusal() for _ in range(3)]
    assert shown == [None] * MAX_PER_CALL
    assert refused == ["at most 10 are shown during one call"] * 3
    assert (questions.shown, questions.declined) == (10, 3)
    assert questions.note() == (
        "[mcp-sidecar] 3 more of the server's questions were declined without being shown: "
        "at most 10 are shown during one call."
    )
    assert CallQuestions().note() is None


def test_a_server_is_shown_twenty_questions_a_minute_over_all_its_calls() -> None:
    clock = Clock()
    budget = QuestionBudget(clock)
    for _ in range(MAX_PER_MINUTE // MAX_PER_CALL):
        with budget.call():
            assert [budget.refusal() for _ in range(MAX_PER_CALL)] == [None] * MAX_PER_CALL
    with budget.call() as third:
        assert budget.refusal() == "at most 20 of one server's are shown in a minute"
        clock.now += 59.9
        assert budget.refusal() is not None  # the first of the twenty is 59.9 s old
        clock.now += 0.1
        assert budget.refusal() is None  # a minute after the first, room for one more
        assert budget.declined_in_a_row == 0
    assert (third.shown, third.declined) == (1, 2)
    assert third.note() == (
        "[mcp-sidecar] 2 more of the server's questions were declined without being shown: "
        "at most 20 of one server's are shown in a minute."
    )


def test_a_question_counts_against_every_call_in_flight_on_its_server() -> None:
    budget = QuestionBudget(Clock())
    with budget.call() as first:
        for _ in range(MAX_PER_CALL):
            budget.refusal()
        with budget.call() as second:
            assert budget.refusal() is not None  # the first call's flood stops the questions beside it
        assert (second.shown, second.declined) == (0, 1)
    with budget.call() as later:
        assert budget.refusal() is None
    assert (first.shown, first.declined, later.shown) == (10, 1, 1)


async def test_past_the_limit_a_form_is_declined_and_sampling_refused_without_asking() -> None:
    shown: list[Any] = []

    async def ask(request: object, timeout: float) -> Any:
        shown.append(request)
        return {"action": "decline"}

    side = ClientSide(offer=lambda: ClientOffer(elicitation_form=True, sampling=True), ask=ask)
    hooks = ClientHooks("pushy", side, StderrLog(), lambda level, logger, text, notify: None)
    callbacks = hooks.kwargs()
    elicit, sample = callbacks["elicitation_callback"], callbacks["sampling_callback"]
    import mcp_types as types

    form = types.ElicitRequestFormParams(message="Say yes.", requested_schema={"type": "object", "properties": {}})
    request = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))],
        max_tokens=5,
    )
    questions = CallQuestions()
    with hooks.request_in_flight(questions):
        answers = [await elicit(None, form) for _ in range(MAX_PER_CALL + 1)]
        refused = await sample(None, request)
    assert len(shown) == MAX_PER_CALL
    assert [a.action for a in answers] == ["decline"] * (MAX_PER_CALL + 1)
    assert isinstance(refused, types.ErrorData)
    assert (refused.code, refused.message) == (-1, "Declined without asking the user: too many requests")
    assert questions.declined == 2
    notes = [line.text for line in hooks.log.lines if "declined without being shown" in line.text]
    assert len(notes) == 1  # one line for the run of refusals, not one per question
