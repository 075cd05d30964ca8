"""Reading the wrapper's log (`rpc_tee.py`): what the host and the gateway said to each other, when."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Message:
    """One line between host and gateway: `in` the host sent it, `out` the gateway did."""

    t: float
    direction: str
    msg: dict[str, Any] | None
    raw: str | None = None

    @property
    def method(self) -> str | None:
        return str(self.msg["method"]) if self.msg and "method" in self.msg else None

    @property
    def id(self) -> Any:
        return self.msg.get("id") if self.msg else None

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.id is not None

    def __str__(self) -> str:
        """One short line: time, direction, method or answer, without the `_meta` noise."""
        arrow = "host→gw" if self.direction == "in" else "gw→host"
        if self.msg is None:
            return f"{self.t:.3f} {arrow} (not JSON) {self.raw!r:.120}"
        if self.method is not None:
            params = {k: v for k, v in (self.msg.get("params") or {}).items() if k != "_meta"}
            return f"{self.t:.3f} {arrow} {self.method} id={self.id} {json.dumps(params):.120}"
        body = json.dumps(self.msg.get("error") if "error" in self.msg else self.msg.get("result"))
        return f"{self.t:.3f} {arrow} {'error' if 'error' in self.msg else 'answer'} id={self.id} {body:.120}"


@dataclass(frozen=True)
class Event:
    t: float
    what: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Trace:
    messages: list[Message] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    stderr: list[tuple[float, str]] = field(default_factory=list)

    def requests(self, method: str) -> list[Message]:
        """The host's requests of `method`, in order."""
        return [m for m in self.messages if m.direction == "in" and m.is_request and m.method == method]

    def host_methods(self) -> list[str]:
        """Every method the host sent, requests and notifications, in order."""
        return [m.method for m in self.messages if m.direction == "in" and m.method is not None]

    def answer(self, request: Message) -> Message | None:
        """The gateway's answer to `request`."""
        for m in self.messages:
            if m.direction == "out" and m.method is None and m.id == request.id and m.t >= request.t:
                return m
        return None

    def notifications(self, method: str) -> list[Message]:
        """The gateway's notifications of `method`, in order."""
        return [m for m in self.messages if m.direction == "out" and m.method == method and m.id is None]

    def relisted_before_answering(self, request: Message) -> bool:
        """Whether the host's first `tools/list` after the first `list_changed` sent since
        `request` was answered before `request` was."""
        answer = self.answer(request)
        changed = [n for n in self.notifications("notifications/tools/list_changed") if n.t >= request.t]
        relist = [m for m in self.requests("tools/list") if changed and m.t >= changed[0].t]
        listed = self.answer(relist[0]) if relist else None
        return answer is not None and listed is not None and listed.t <= answer.t

    def calls(self, tool_suffix: str) -> list[Message]:
        """The host's `tools/call` requests of a tool whose name ends with `tool_suffix`."""
        return [
            m
            for m in self.requests("tools/call")
            if m.msg and str(m.msg.get("params", {}).get("name", "")).endswith(tool_suffix)
        ]

    def event(self, what: str) -> Event | None:
        return next((e for e in self.events if e.what == what), None)

    def dump(self) -> str:
        """The whole conversation, one line a message, for an assertion's message."""
        lines = [str(m) for m in self.messages] + [f"{e.t:.3f} event {e.what}" for e in self.events]
        return "\n".join(sorted(lines))


def read_trace(path: Path) -> Trace:
    trace = Trace()
    if not path.exists():
        return trace
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line being written
        t = float(entry["t"])
        direction = entry["dir"]
        if direction == "event":
            detail = {k: v for k, v in entry.items() if k not in ("t", "dir", "what")}
            trace.events.append(Event(t, str(entry["what"]), detail))
        elif direction == "err":
            trace.stderr.append((t, str(entry.get("raw", entry.get("msg", "")))))
        else:
            msg = entry.get("msg")
            trace.messages.append(Message(t, direction, msg if isinstance(msg, dict) else None, entry.get("raw")))
    return trace
