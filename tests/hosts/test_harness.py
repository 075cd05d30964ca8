"""The host harness itself: the fake model's three APIs, its script, and the logging wrapper.

These need no host and no namespace: the fake model is served on 127.0.0.1 in this process and
asked over HTTP as a host would, and the wrapper runs around `cat`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from support.hosts import anthropic, gemini, responses
from support.hosts.fake_model import Model, serve
from support.hosts.run import TEE
from support.hosts.script import FINAL, Await, Call, Cursor, Say, Turn, from_json, to_json
from support.hosts.trace import read_trace

QUERY = Call("mcp_tools", {"query": "echo"})


def test_a_call_names_its_tool_by_the_end_of_the_offered_name() -> None:
    cursor = Cursor([Call("__echo", {"text": "hi"}), Say("bye")])
    decision = cursor.next(["mcp__sidecar__mcp_tools", "mcp__sidecar__basic__echo"], [])
    assert (decision.kind, decision.tool, decision.arguments) == ("call", "mcp__sidecar__basic__echo", {"text": "hi"})
    assert cursor.next([], []).text == "bye"
    assert cursor.next([], []).text == FINAL


def test_a_call_without_exactly_one_match_says_so_and_calls_nothing() -> None:
    decision = Cursor([Call("echo")]).next(["a__echo", "b__echo"], [])
    assert decision.kind == "say"
    assert decision.text == "[fake model] 2 offered tools match 'echo': ['a__echo', 'b__echo']"
    assert Cursor([Call("echo", exact=True)]).next(["a__echo"], []).kind == "say"


def test_await_answers_its_filler_until_the_tool_is_visible() -> None:
    cursor = Cursor([Await("basic__echo", QUERY), Call("basic__echo")])
    assert cursor.next(["x__mcp_tools"], []).tool == "x__mcp_tools"
    assert cursor.next(["x__mcp_tools"], []).tool == "x__mcp_tools"
    # Announced (Claude's deferred name) is enough to stop waiting; the call needs it offered.
    assert cursor.next(["x__mcp_tools"], ["x__basic__echo"]).kind == "say"
    assert Cursor([Await("nope", QUERY, limit=1), Say("gave up")]).next(["x__mcp_tools"], []).tool == "x__mcp_tools"


def test_a_script_survives_its_trip_as_json() -> None:
    turns: list[Turn] = [
        QUERY,
        Await("echo", QUERY, limit=3),
        Call("ToolSearch", {"query": "select:x"}, exact=True),
        Say("ok"),
    ]
    assert from_json(json.loads(json.dumps(to_json(turns)))) == turns


CLAUDE_BODY: dict[str, Any] = {
    "system": [{"type": "text", "text": "You are Claude Code."}],
    "tools": [
        {"name": "ToolSearch", "description": "search"},
        {"name": "mcp__sidecar__mcp_tools", "description": "find", "defer_loading": True},
        {"name": "mcp__sidecar__basic__echo", "description": "echo", "defer_loading": True},
    ],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "system",
            "content": [
                {
                    "type": "text",
                    "text": "The following deferred tools are now available via ToolSearch. Use it:\n"
                    "mcp__sidecar__mcp_tools\nmcp__sidecar__basic__echo\n\n# MCP Server Instructions",
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {}}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "tool_reference", "tool_name": "mcp__sidecar__mcp_tools"}],
                }
            ],
        },
        {"role": "system", "content": [{"type": "text", "text": "a reminder after the result"}]},
    ],
}


def test_anthropic_offers_a_deferred_tool_only_once_a_tool_reference_loads_it() -> None:
    dialect = anthropic.Anthropic()
    assert [tool.name for tool in dialect.offered(CLAUDE_BODY)] == ["ToolSearch", "mcp__sidecar__mcp_tools"]
    assert dialect.announced(CLAUDE_BODY) == ["mcp__sidecar__mcp_tools", "mcp__sidecar__basic__echo"]
    results = dialect.results(CLAUDE_BODY)
    assert [(r.name, r.is_error) for r in results] == [("ToolSearch", None)]
    assert "tool_reference" in results[0].text
    assert "# MCP Server Instructions" in dialect.system(CLAUDE_BODY)


def _events(payload: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in payload.decode().splitlines() if line.startswith("data: ")]


def test_anthropic_streams_a_tool_call_as_one_block_with_its_input() -> None:
    decision = Cursor([Call("echo", {"text": "hi"})]).next(["echo"], [])
    events = _events(anthropic.stream(decision, 7))
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[1]["content_block"] == {"type": "tool_use", "id": "toolu_0007", "name": "echo", "input": {}}
    assert json.loads(events[2]["delta"]["partial_json"]) == {"text": "hi"}
    assert events[4]["delta"]["stop_reason"] == "tool_use"


CODEX_BODY: dict[str, Any] = {
    "instructions": "be brief",
    "tools": [
        {"type": "function", "name": "exec_command", "description": "run"},
        {
            "type": "namespace",
            "name": "mcp__sidecar",
            "description": "the servers",
            "tools": [{"type": "function", "name": "mcp_tools", "description": "find"}],
        },
    ],
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "namespace": "mcp__sidecar", "name": "mcp_tools", "call_id": "c1", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [
                {"type": "input_text", "text": "Wall time: 0.1 seconds\nOutput:"},
                {"type": "input_text", "text": "x"},
            ],
        },
    ],
}


def test_responses_names_a_namespace_member_namespace__tool_and_calls_it_back_in_its_namespace() -> None:
    dialect = responses.Responses()
    assert [tool.name for tool in dialect.offered(CODEX_BODY)] == ["exec_command", "mcp__sidecar__mcp_tools"]
    assert dialect.namespaces(CODEX_BODY) == {"mcp__sidecar": "the servers"}
    assert [(r.name, r.text) for r in dialect.results(CODEX_BODY)] == [
        ("mcp__sidecar__mcp_tools", "Wall time: 0.1 seconds\nOutput:\nx")
    ]
    decision = Cursor([Call("mcp_tools")]).next(["exec_command", "mcp__sidecar__mcp_tools"], [])
    events = _events(responses.stream(decision, 3, dialect.namespaces(CODEX_BODY)))
    item = events[2]["item"]
    assert (events[2]["type"], item["namespace"], item["name"]) == (
        "response.output_item.done",
        "mcp__sidecar",
        "mcp_tools",
    )
    assert events[-1]["type"] == "response.completed"


def test_gemini_side_requests_get_the_smallest_value_of_their_schema() -> None:
    router = {
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {
                "type": "OBJECT",
                "properties": {"complexity_reasoning": {"type": "STRING"}, "complexity_score": {"type": "INTEGER"}},
                "required": ["complexity_reasoning", "complexity_score"],
            },
        }
    }
    assert json.loads(gemini.json_answer(router) or "") == {"complexity_reasoning": "", "complexity_score": 1}
    speaker = {"generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
        "type": "object", "properties": {"next_speaker": {"type": "string", "enum": ["model", "user"]}}}}}  # fmt: skip
    assert json.loads(gemini.json_answer(speaker) or "") == {"next_speaker": "user"}
    assert gemini.json_answer({"contents": []}) is None


def _post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        data: bytes = answer.read()
        return data


async def test_the_fake_model_answers_a_turn_over_http_and_records_it(tmp_path: Path) -> None:
    record = tmp_path / "model.jsonl"
    model = Model([Call("echo", {"text": "hi"})], record)
    async with serve(model) as port:
        base = f"http://127.0.0.1:{port}"
        side = await asyncio.to_thread(_post, f"{base}/v1/messages", {"messages": [], "max_tokens": 1})
        turn = await asyncio.to_thread(
            _post, f"{base}/v1/messages", {"stream": True, "tools": [{"name": "x__echo"}], "messages": []}
        )
        counted = await asyncio.to_thread(_post, f"{base}/v1beta/models/m:countTokens", {"contents": []})
    assert json.loads(side)["content"] == [{"type": "text", "text": "OK"}]
    assert _events(turn)[1]["content_block"]["name"] == "x__echo"
    assert json.loads(counted) == {"totalTokens": 100}
    entries = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(e["path"], e["turn"]) for e in entries] == [
        ("/v1/messages", None),
        ("/v1/messages", 1),
        ("/v1beta/models/m:countTokens", None),
    ]


def test_the_wrapper_logs_both_ways_refuses_what_it_is_told_and_reports_the_exit(tmp_path: Path) -> None:
    log = tmp_path / "trace.jsonl"
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    refused = {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}
    lines = (json.dumps(request) + "\n" + json.dumps(refused) + "\nnot json\n").encode()
    done = subprocess.run(
        [sys.executable, str(TEE), "--refuse", "prompts/list", str(log), "--", "cat"],
        input=lines,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    out = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    assert request in out  # `cat` answered with the request itself
    assert {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": -32603, "message": "prompts/list refused by the test wrapper"},
    } in out
    trace = read_trace(log)
    assert [m.method for m in trace.messages if m.direction == "in"] == ["tools/list", "prompts/list", None]
    assert trace.answer(trace.requests("prompts/list")[0]) is not None
    assert [e.what for e in trace.events if e.what in ("start", "stdin closed", "exit")] == [
        "start",
        "stdin closed",
        "exit",
    ]
    assert trace.event("exit") is not None


def _trace_of(tmp_path: Path, entries: list[tuple[float, str, dict[str, Any]]]) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps({"t": t, "dir": d, "msg": m}) + "\n" for t, d, m in entries))
    return path


ACTIVATE = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "mcp_tools", "arguments": {}}}
CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
RELIST = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}


def _answer(number: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "result": {}}


def test_an_activation_answered_before_the_re_list_is_told_apart_from_one_that_waited(tmp_path: Path) -> None:
    early = read_trace(
        _trace_of(
            tmp_path,
            [
                (1, "in", ACTIVATE),
                (2, "out", _answer(7)),
                (2, "out", CHANGED),
                (3, "in", RELIST),
                (4, "out", _answer(8)),
            ],
        )
    )
    assert not early.relisted_before_answering(early.requests("tools/call")[0])
    waited = read_trace(
        _trace_of(
            tmp_path,
            [
                (1, "in", ACTIVATE),
                (2, "out", CHANGED),
                (3, "in", RELIST),
                (4, "out", _answer(8)),
                (5, "out", _answer(7)),
            ],
        )
    )
    assert waited.relisted_before_answering(waited.requests("tools/call")[0])
    never = read_trace(_trace_of(tmp_path, [(1, "in", ACTIVATE), (2, "out", CHANGED), (5, "out", _answer(7))]))
    assert not never.relisted_before_answering(never.requests("tools/call")[0])
