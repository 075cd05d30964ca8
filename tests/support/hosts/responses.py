"""The OpenAI Responses API, as Codex uses it (a model provider with `wire_api = "responses"`)."""

from __future__ import annotations

import json
from typing import Any

from support.hosts.dialect import Offered, Result, sse, texts
from support.hosts.script import Decision

MODEL = "gpt-5.1-codex"


SEPARATOR = "__"


def qualified(namespace: str | None, name: str) -> str:
    """A namespace member's name as these tests write it: `mcp__sidecar` + `__` + `basic__echo`
    (Codex names a server's namespace `mcp__SERVER` and its members by their MCP names)."""
    return f"{namespace}{SEPARATOR}{name}" if namespace else name


def _flat_tools(tools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(qualified name, tool) for each function, a namespace's members under the namespace's name."""
    out: list[tuple[str, dict[str, Any]]] = []
    for tool in tools:
        if tool.get("type") == "namespace":
            namespace = str(tool.get("name", ""))
            out += [(qualified(namespace, name), member) for name, member in _flat_tools(tool.get("tools") or [])]
        elif "name" in tool:
            out.append((str(tool["name"]), tool))
    return out


class Responses:
    def offered(self, body: dict[str, Any]) -> list[Offered]:
        return [Offered(name, str(tool.get("description", ""))) for name, tool in _flat_tools(body.get("tools") or [])]

    def namespaces(self, body: dict[str, Any]) -> dict[str, str]:
        """Each tool namespace's name and description (Codex puts an MCP server's tools in one)."""
        return {
            str(tool.get("name")): str(tool.get("description", ""))
            for tool in body.get("tools") or []
            if tool.get("type") == "namespace"
        }

    def results(self, body: dict[str, Any]) -> list[Result]:
        items = [item for item in body.get("input") or [] if isinstance(item, dict)]
        names = {
            item.get("call_id"): qualified(item.get("namespace"), str(item.get("name", "")))
            for item in items
            if item.get("type") == "function_call"
        }
        tail: list[dict[str, Any]] = []
        for item in reversed(items):
            if item.get("type") != "function_call_output":
                break
            tail.insert(0, item)
        return [
            Result(str(names.get(item.get("call_id"), "?")), _output_text(item.get("output")), None) for item in tail
        ]

    def announced(self, body: dict[str, Any]) -> list[str]:
        return []

    def system(self, body: dict[str, Any]) -> str:
        return texts(body.get("instructions", ""))

    def context(self, body: dict[str, Any]) -> str:
        parts = [texts(body.get("instructions", ""))]
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") == "message":
                parts.append(texts(item.get("content", "")))
        return "\n".join(parts)


def _output_text(output: Any) -> str:
    if isinstance(output, list):
        return "\n".join(str(part.get("text", json.dumps(part))) for part in output if isinstance(part, dict))
    return texts(output)


def split_name(name: str, namespaces: dict[str, str]) -> tuple[str | None, str]:
    """An offered name as (namespace, tool name) again, for the call item."""
    for namespace in sorted(namespaces, key=len, reverse=True):
        if name.startswith(namespace + SEPARATOR):
            return namespace, name[len(namespace) + len(SEPARATOR) :]
    return None, name


def stream(decision: Decision, number: int, namespaces: dict[str, str]) -> bytes:
    """`response.created`, one output item done, `response.completed`."""
    response = {"id": f"resp_{number:04d}", "object": "response", "model": MODEL, "status": "in_progress", "output": []}
    if decision.kind == "call":
        namespace, name = split_name(decision.tool, namespaces)
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{number:04d}",
            "call_id": f"call_{number:04d}",
            "name": name,
            "arguments": json.dumps(decision.arguments),
            "status": "completed",
        }
        if namespace is not None:
            item["namespace"] = namespace
    else:
        item = {
            "type": "message",
            "id": f"msg_{number:04d}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": decision.text, "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 20,
    }
    done = {**response, "status": "completed", "output": [item], "usage": usage}
    return sse(
        [
            ("response.created", {"type": "response.created", "response": response}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": done}),
        ]
    )
