"""How many questions one server may put to the person: per call, and per minute.

A server that asks again after every decline could otherwise keep a person answering (and its
call's clock stopped) without end. Past either limit a question is declined without being shown,
and the result of every call it came during says so (`CallQuestions.note`).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

MAX_PER_CALL = 10
"""Questions shown while one of our requests runs on the server."""
MAX_PER_MINUTE = 20
"""Questions of one server shown in any 60 seconds, whichever calls they came during."""
WINDOW_S = 60.0


@dataclass
class CallQuestions:
    """The questions a server asked while one of our requests ran on it."""

    shown: int = 0
    declined: int = 0
    """Declined without being shown, past a limit."""
    why: str = ""

    def note(self) -> str | None:
        """What the call's result says, in our words, when some were declined unshown."""
        if not self.declined:
            return None
        many = "question was" if self.declined == 1 else "questions were"
        return f"[mcp-sidecar] {self.declined} more of the server's {many} declined without being shown: {self.why}."


class QuestionBudget:
    """One server's questions: the requests in flight they count against, and the last minute's."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._calls: list[CallQuestions] = []
        self._shown: deque[float] = deque()
        self.declined_in_a_row = 0
        """Questions declined since the last one shown (the server's log notes the first alone)."""

    @contextlib.contextmanager
    def call(self, record: CallQuestions | None = None) -> Iterator[CallQuestions]:
        """One of our requests in flight: questions asked meanwhile count against it (in `record`)."""
        questions = record if record is not None else CallQuestions()
        self._calls.append(questions)
        try:
            yield questions
        finally:
            self._calls.remove(questions)

    def refusal(self) -> str | None:
        """Why the next question may not be shown, or None: it counts as shown.

        A question counts against every request in flight on the server (its request does not say
        which one it belongs to), so one call's flood also stops the questions of calls beside it.
        """
        now = self._clock()
        while self._shown and now - self._shown[0] >= WINDOW_S:
            self._shown.popleft()
        if any(c.shown >= MAX_PER_CALL for c in self._calls):
            why = f"at most {MAX_PER_CALL} are shown during one call"
        elif len(self._shown) >= MAX_PER_MINUTE:
            why = f"at most {MAX_PER_MINUTE} of one server's are shown in a minute"
        else:
            self._shown.append(now)
            self.declined_in_a_row = 0
            for questions in self._calls:
                questions.shown += 1
            return None
        self.declined_in_a_row += 1
        for questions in self._calls:
            questions.declined += 1
            questions.why = why
        return why


__all__ = ["MAX_PER_CALL", "MAX_PER_MINUTE", "CallQuestions", "QuestionBudget"]
