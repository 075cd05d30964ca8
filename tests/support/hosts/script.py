"""What the fake model answers, turn by turn: a tool call or a final text.

A script is plain data (it crosses into the network namespace as JSON). Each model request of the
conversation (one that offers tools) takes the next turn; a request after the last turn gets the
text `FINAL`. A call names its tool by the end of the name the host offered (`mcp_tools` matches
`mcp__sidecar__mcp_tools`, `__echo` matches `mcp__sidecar__basic__echo`), so one script fits
every host's naming; `exact` asks for the whole name.

`Await` is not a turn of its own: while no tool the model can see (offered, or announced by name
as Claude Code's tool search does) ends with its name, each request gets its `filler` call instead
(at most `limit` times); once one does, the request gets the next turn. A test uses it to reach a
tool however late the host shows it, and reads the requests to see how late that was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

FINAL = "Done."
"""The text of a request after the script's last turn."""


@dataclass(frozen=True)
class Call:
    """Call the one offered tool whose name ends with `tool` (or is `tool`, when `exact`)."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    exact: bool = False

    def matches(self, name: str) -> bool:
        return name == self.tool if self.exact else name.endswith(self.tool)


@dataclass(frozen=True)
class Say:
    """Answer with this text and no tool call: the host's run ends."""

    text: str


@dataclass(frozen=True)
class Await:
    """Until a visible tool's name ends with `tool`, answer `filler` (at most `limit` times)."""

    tool: str
    filler: Call
    limit: int = 8

    def seen(self, visible: list[str]) -> bool:
        return any(name.endswith(self.tool) for name in visible)


Turn = Call | Say | Await


def _call_json(call: Call) -> dict[str, Any]:
    return {"call": call.tool, "arguments": call.arguments, "exact": call.exact}


def _call_from(item: dict[str, Any]) -> Call:
    return Call(str(item["call"]), dict(item.get("arguments", {})), bool(item.get("exact", False)))


def to_json(turns: list[Turn]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for turn in turns:
        if isinstance(turn, Call):
            out.append(_call_json(turn))
        elif isinstance(turn, Await):
            out.append({"await": turn.tool, "filler": _call_json(turn.filler), "limit": turn.limit})
        else:
            out.append({"say": turn.text})
    return out


def from_json(data: list[dict[str, Any]]) -> list[Turn]:
    turns: list[Turn] = []
    for item in data:
        if "call" in item:
            turns.append(_call_from(item))
        elif "await" in item:
            turns.append(Await(str(item["await"]), _call_from(item["filler"]), int(item["limit"])))
        else:
            turns.append(Say(str(item["say"])))
    return turns


@dataclass(frozen=True)
class Decision:
    """What the fake model answered one request: a call of `tool` (the offered name), or `text`."""

    kind: Literal["call", "say"]
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""


class Cursor:
    """Where the model is in its script."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = turns
        self.index = 0
        self.waited = 0

    def next(self, offered: list[str], visible: list[str]) -> Decision:
        """The answer to a request that offers `offered` tools and shows `visible` names."""
        while self.index < len(self.turns):
            turn = self.turns[self.index]
            if not isinstance(turn, Await):
                self.index += 1
                return decide(turn, offered)
            if turn.seen(visible) or self.waited >= turn.limit:
                self.index += 1
                self.waited = 0
                continue
            self.waited += 1
            return decide(turn.filler, offered)
        return decide(None, offered)


def decide(turn: Call | Say | None, offered: list[str]) -> Decision:
    """The answer to a request offering `offered` tools: a call needs exactly one offered match,
    else the model says which tool it could not find (and the host's run ends there)."""
    if turn is None:
        return Decision("say", text=FINAL)
    if isinstance(turn, Say):
        return Decision("say", text=turn.text)
    matching = [name for name in offered if turn.matches(name)]
    if len(matching) != 1:
        return Decision("say", text=f"[fake model] {len(matching)} offered tools match {turn.tool!r}: {matching}")
    return Decision("call", tool=matching[0], arguments=turn.arguments)
