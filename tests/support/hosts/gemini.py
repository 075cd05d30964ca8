"""The Gemini API's `generateContent` family, as Gemini CLI uses it (`GOOGLE_GEMINI_BASE_URL`)."""

from __future__ import annotations

import json
from typing import Any

from support.hosts.dialect import Offered, Result, sse, texts
from support.hosts.script import Decision

MODEL = "gemini-2.5-pro"


class Gemini:
    def offered(self, body: dict[str, Any]) -> list[Offered]:
        return [
            Offered(str(declaration.get("name", "")), str(declaration.get("description", "")))
            for tool in body.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
        ]

    def results(self, body: dict[str, Any]) -> list[Result]:
        contents = body.get("contents") or []
        if not contents or contents[-1].get("role") != "user":
            return []
        return [
            Result(
                str(part["functionResponse"].get("name", "?")), texts(part["functionResponse"].get("response")), None
            )
            for part in contents[-1].get("parts") or []
            if isinstance(part.get("functionResponse"), dict)
        ]

    def announced(self, body: dict[str, Any]) -> list[str]:
        return []

    def context(self, body: dict[str, Any]) -> str:
        parts = [self.system(body)]
        for content in body.get("contents") or []:
            parts += [str(part["text"]) for part in content.get("parts") or [] if "text" in part]
        return "\n".join(parts)

    def system(self, body: dict[str, Any]) -> str:
        instruction = body.get("systemInstruction") or {}
        return texts(instruction.get("parts", instruction) if isinstance(instruction, dict) else instruction)


def instance(schema: Any) -> Any:
    """The smallest value of a JSON schema (Gemini's upper-case type names too): what a side
    request asking for JSON (the CLI's model router, its next-speaker check) gets back. Where it
    matters the answer is the quiet one: the user speaks next."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: instance(properties.get(name)) for name in schema.get("required") or properties}
    return {"string": "", "integer": 1, "number": 1, "boolean": False, "array": []}.get(kind)


def json_answer(body: Any) -> str | None:
    """The JSON text a side request's `generationConfig` asks for, or None when it asks for none."""
    config = body.get("generationConfig") if isinstance(body, dict) else None
    if not isinstance(config, dict) or config.get("responseMimeType") != "application/json":
        return None
    value = instance(config.get("responseJsonSchema") or config.get("responseSchema") or {})
    if isinstance(value, dict) and "next_speaker" in value:
        value["next_speaker"] = "user"
    return json.dumps(value)


def response(decision: Decision) -> dict[str, Any]:
    part: dict[str, Any] = (
        {"functionCall": {"name": decision.tool, "args": decision.arguments}}
        if decision.kind == "call"
        else {"text": decision.text}
    )
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": MODEL,
    }


def stream(decision: Decision) -> bytes:
    return sse([(None, response(decision))])
