"""The Anthropic Messages API, as Claude Code uses it (`ANTHROPIC_BASE_URL`)."""

from __future__ import annotations

import json
from typing import Any

from support.hosts.dialect import Offered, Result, sse, texts
from support.hosts.script import Decision

MODEL = "claude-sonnet-4-5"


class Anthropic:
    def offered(self, body: dict[str, Any]) -> list[Offered]:
        """Tools the model sees: a tool with `defer_loading` only once a `tool_reference` in the
        conversation (a tool search's result) names it; before, it is a name in a system message."""
        loaded = set(self.referenced(body))
        return [
            Offered(str(tool.get("name", "")), str(tool.get("description", "")))
            for tool in body.get("tools") or []
            if not tool.get("defer_loading") or tool.get("name") in loaded
        ]

    def referenced(self, body: dict[str, Any]) -> list[str]:
        """The tools `tool_reference` blocks of the conversation's tool results name, in order."""
        return [
            str(reference.get("tool_name"))
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list)
            for reference in block["content"]
            if isinstance(reference, dict) and reference.get("type") == "tool_reference"
        ]

    def deferred(self, body: dict[str, Any]) -> list[str]:
        return [str(tool.get("name", "")) for tool in body.get("tools") or [] if tool.get("defer_loading")]

    def results(self, body: dict[str, Any]) -> list[Result]:
        """The tool results of the user message after the last assistant turn (Claude Code may
        put `system` messages after it)."""
        messages = [m for m in body.get("messages") or [] if m.get("role") != "system"]
        if not messages or messages[-1].get("role") != "user" or not isinstance(messages[-1].get("content"), list):
            return []
        names = {
            block.get("id"): block.get("name")
            for message in messages
            if message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_use"
        }
        return [
            Result(
                str(names.get(block.get("tool_use_id"), "?")), texts(block.get("content", "")), block.get("is_error")
            )
            for block in messages[-1]["content"]
            if block.get("type") == "tool_result"
        ]

    def announced(self, body: dict[str, Any]) -> list[str]:
        """Names listed after "The following deferred tools are now available via ToolSearch" in
        any message: that list, not the tool, is what the model sees of a deferred tool."""
        names: list[str] = []
        for message in body.get("messages") or []:
            for text in _block_texts(message.get("content")):
                for part in text.split(DEFERRED)[1:]:
                    names += _name_lines(part.split(":\n", 1)[-1])
        return names

    def system(self, body: dict[str, Any]) -> str:
        """The system prompt and the `system` messages (where Claude Code puts its environment,
        the deferred tools and the servers' instructions)."""
        parts = [texts(body.get("system", ""))]
        for message in body.get("messages") or []:
            if message.get("role") == "system":
                parts += _block_texts(message.get("content"))
        return "\n".join(parts)

    def context(self, body: dict[str, Any]) -> str:
        parts = [texts(body.get("system", ""))]
        for message in body.get("messages") or []:
            parts += _block_texts(message.get("content"))
        return "\n".join(parts)


DEFERRED = "The following deferred tools are now available via ToolSearch"


def _block_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(block["text"]) for block in content if isinstance(block, dict) and "text" in block]
    return []


def _name_lines(text: str) -> list[str]:
    """The tool names a deferred-tools list gives, one a line, up to the first line that is not one."""
    names = []
    for line in text.split("\n"):
        if not line or not all(c.isalnum() or c in "_-" for c in line):
            break
        names.append(line)
    return names


def message(decision: Decision, number: int) -> dict[str, Any]:
    """The whole message of a non-streamed answer."""
    return {
        "id": f"msg_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [_block(decision, number)],
        "stop_reason": "tool_use" if decision.kind == "call" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def _block(decision: Decision, number: int) -> dict[str, Any]:
    if decision.kind == "call":
        return {"type": "tool_use", "id": f"toolu_{number:04d}", "name": decision.tool, "input": decision.arguments}
    return {"type": "text", "text": decision.text}


def stream(decision: Decision, number: int) -> bytes:
    """The same message as server-sent events: start, one content block, its delta, stop."""
    whole = message(decision, number)
    block = whole["content"][0]
    if block["type"] == "tool_use":
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    head = {**whole, "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    return sse(
        [
            ("message_start", {"type": "message_start", "message": head}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )
