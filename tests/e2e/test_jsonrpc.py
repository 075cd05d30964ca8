"""The JSON-RPC surface over stdio, driven by a hand-framed client (no LSP library).

These prove what a headless script relies on: no `initialize` needed, a standard error for
every malformed message with the process still answering afterwards, nothing but framed
JSON-RPC on stdout, and a clean exit that leaves no MCP server behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_sidecar.protocol import methods
from support.rawrpc import RawClient, encode, frame, raw_sidecar
from support.servers import basic_stdio, pid_alive, started_pids
from support.sidecar import wait_until, write_config

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
NOT_JSON = "Parse error: the message is not valid UTF-8 JSON."
NOT_JSON_RPC = "Invalid request: expected a JSON-RPC 2.0 object."


def error_of(response: dict[str, Any]) -> tuple[int, str]:
    assert "result" not in response, response
    return response["error"]["code"], response["error"]["message"]


async def still_answers(client: RawClient) -> None:
    response = await client.request("mcp/status", {})
    assert [row["name"] for row in response["result"]["servers"]] == ["demo"]


async def test_a_script_may_skip_initialize(home: Path) -> None:
    async with raw_sidecar(home) as client:
        # No params at all is a valid JSON-RPC request too.
        response = await client.request("mcp/status")
        assert response["id"] == 1
        status = response["result"]
        assert [(r["name"], r["scope"], r["state"]) for r in status["servers"]] == [("demo", "builtin", "idle")]
        assert status["diagnostics"] == []
        active = await client.request("mcp/activeTools")
        assert active["result"] == {"session": "default", "tools": [], "tokens": 0, "budget": None}
        assert client.violations == []


MALFORMED: list[tuple[str, bytes, tuple[int, str]]] = [
    ("truncated JSON", b'{"jsonrpc": "2.0", "id": 7, "method": "mcp/status"', (PARSE_ERROR, NOT_JSON)),
    ("invalid UTF-8", b"\xff\xfe{}", (PARSE_ERROR, NOT_JSON)),
    ("invalid UTF-8 in a string", b'{"jsonrpc": "2.0", "id": 7, "method": "mcp/\xe9"}', (PARSE_ERROR, NOT_JSON)),
    ("an empty body", b"", (PARSE_ERROR, NOT_JSON)),
    ("100000 nested lists", b"[" * 100_000 + b"]" * 100_000, (PARSE_ERROR, NOT_JSON)),
    (
        "deep nesting inside params",
        b'{"jsonrpc": "2.0", "id": 7, "method": "mcp/activate", "params": {"ids": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}",
        (PARSE_ERROR, NOT_JSON),
    ),
    ("an array", b"[1, 2]", (INVALID_REQUEST, NOT_JSON_RPC)),
    ("an empty batch", b"[]", (INVALID_REQUEST, NOT_JSON_RPC)),
    ("a string", b'"mcp/status"', (INVALID_REQUEST, NOT_JSON_RPC)),
    ("null", b"null", (INVALID_REQUEST, NOT_JSON_RPC)),
    (
        "a boolean id",
        b'{"jsonrpc": "2.0", "id": true, "method": "mcp/status"}',
        (INVALID_REQUEST, "Invalid request: `id` must be a string or an integer."),
    ),
]


async def test_malformed_messages_get_an_error_with_null_id(home: Path) -> None:
    async with raw_sidecar(home) as client:
        for what, body, expected in MALFORMED:
            await client.send_bytes(frame(body))
            response = await client.response(None)
            assert error_of(response) == expected, what
            await still_answers(client)
            assert client.messages == [], what


async def test_wrong_version_or_shape_is_invalid_request(home: Path) -> None:
    async with raw_sidecar(home) as client:
        await client.send({"jsonrpc": "1.0", "id": 5, "method": "mcp/status"})
        assert error_of(await client.response(5)) == (INVALID_REQUEST, NOT_JSON_RPC)
        await client.send({"id": 6, "method": "mcp/status"})
        assert error_of(await client.response(6)) == (INVALID_REQUEST, NOT_JSON_RPC)
        await client.send({"jsonrpc": "2.0", "id": 8, "method": 5})
        assert error_of(await client.response(8)) == (INVALID_REQUEST, "Invalid request: `method` must be a string.")
        await client.send({"jsonrpc": "2.0", "id": 1.5, "method": "mcp/status"})
        assert error_of(await client.response(None)) == (
            INVALID_REQUEST,
            "Invalid request: `id` must be a string or an integer.",
        )
        await client.send({"jsonrpc": "2.0"})
        assert error_of(await client.response(None)) == (INVALID_REQUEST, "Invalid request: no `method`.")
        await still_answers(client)
        assert client.messages == []


async def test_unknown_method_is_method_not_found(home: Path) -> None:
    async with raw_sidecar(home) as client:
        response = await client.request("mcp/nosuch", {})
        assert error_of(response) == (METHOD_NOT_FOUND, "Method Not Found: mcp/nosuch")
        response = await client.request("mcp/nosuch")
        assert error_of(response)[0] == METHOD_NOT_FOUND
        # An unknown notification gets no answer; the next request is answered normally.
        await client.notify("mcp/nosuchNotification", {})
        await still_answers(client)
        assert client.messages == []


async def test_invalid_params_carry_a_diagnostic(home: Path) -> None:
    async with raw_sidecar(home) as client:
        response = await client.request("mcp/activate", {"ids": "demo.add"})
        message = "`ids` must be a list of 1 to 50 tool ids."
        hint = "Check the request against docs/protocol.md."
        assert response["error"] == {
            "code": INVALID_PARAMS,
            "message": f"[invalid_params] {message} {hint}",
            "data": {"code": "invalid_params", "operation": "activate", "message": message, "hint": hint},
        }
        response = await client.request("mcp/server/get", [])
        assert response["error"]["code"] == INVALID_PARAMS
        assert response["error"]["data"]["message"] == "Params must be a JSON object."
        response = await client.request("mcp/server/get", {"server": 3})
        assert response["error"]["data"]["message"] == "`server` must be a non-empty string."
        response = await client.request("mcp/activeTools", {"session": "s" * 201})
        assert response["error"]["data"]["message"] == "`session` must be at most 200 characters."
        await still_answers(client)


async def test_bad_framing_is_a_parse_error_and_the_stream_recovers(home: Path) -> None:
    async with raw_sidecar(home) as client:
        status = json.dumps({"jsonrpc": "2.0", "id": 21, "method": "mcp/status"}).encode()
        # No Content-Length: the body cannot be delimited; the next frame must still be read.
        await client.send_bytes(frame(status, header=b"Content-Type: application/vscode-jsonrpc"))
        await client.send({"jsonrpc": "2.0", "id": 22, "method": "mcp/status"})
        assert error_of(await client.response(None)) == (PARSE_ERROR, "Parse error: no Content-Length header.")
        assert "result" in await client.response(22)
        # A header line that is not a header at all.
        await client.send_bytes(b"this is not a header\r\n\r\n")
        assert error_of(await client.response(None)) == (PARSE_ERROR, "Parse error: a malformed header.")
        # A header line longer than the reader's buffer limit (1 MiB).
        await client.send_bytes(b"X" * (3 << 20) + b"\r\n\r\n")
        assert error_of(await client.response(None)) == (PARSE_ERROR, "Parse error: a malformed header.")
        await still_answers(client)
        # Header names are case-insensitive and other headers are ignored.
        body = json.dumps({"jsonrpc": "2.0", "id": 23, "method": "mcp/status"}).encode()
        await client.send_bytes(frame(body, header=b"content-length: %d\r\nX-Other: 1" % len(body)))
        assert "result" in await client.response(23)
        # Two frames in one write, and one frame split over several writes.
        await client.send_bytes(
            encode({"jsonrpc": "2.0", "id": 24, "method": "mcp/status"})
            + encode({"jsonrpc": "2.0", "id": 25, "method": "mcp/status"})
        )
        split = encode({"jsonrpc": "2.0", "id": 26, "method": "mcp/status"})
        for start in range(0, len(split), 7):
            await client.send_bytes(split[start : start + 7])
        for msg_id in (24, 25, 26):
            assert "result" in await client.response(msg_id)
        assert client.messages == []


async def test_oversized_message_is_discarded(home: Path) -> None:
    async with raw_sidecar(home) as client:
        size = 64 * 1024 * 1024 + 1
        await client.send_bytes(b"Content-Length: %d\r\n\r\n" % size)
        chunk = b" " * (1 << 20)
        for _ in range(64):
            await client.send_bytes(chunk)
        await client.send_bytes(b" ")
        assert error_of(await client.response(None)) == (INVALID_REQUEST, "Message larger than 67108864 bytes.")
        await still_answers(client)


async def test_every_request_method_is_served(home: Path) -> None:
    async with raw_sidecar(home) as client:
        # `mcp/discover {}` browses every server, which connects them; scope it to a missing one.
        params: dict[str, dict[str, str]] = {methods.DISCOVER: {"server": "no-such-server"}}
        for method in methods.REQUESTS:
            response = await client.request(method, params.get(method, {}))
            if "error" in response:
                # Every method answers; one that cannot work with empty params says why in a diagnostic.
                assert response["error"]["code"] != METHOD_NOT_FOUND, method
                assert set(response["error"]["data"]) >= {"code", "operation", "message", "hint"}, method
        status = await client.request("mcp/status", {})
        assert status["result"]["servers"][0]["state"] == "idle"  # nothing connected


async def test_stdout_carries_only_json_rpc(home: Path) -> None:
    write_config(home, {"basic": basic_stdio("--stderr-line", "basic: hello on stderr")})
    async with raw_sidecar(home, "-vv") as client:
        await client.request("initialize", {"capabilities": {}, "processId": None})
        await client.notify("initialized", {})
        activated = await client.request("mcp/activate", {"ids": ["basic.echo", "basic.fail", "basic.nope"]})
        assert [r["status"] for r in activated["result"]["results"]] == ["loaded", "loaded", "not loaded"]
        echoed = await client.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "héllo ✓"}})
        assert echoed["result"]["content"] == [{"type": "text", "text": "héllo ✓"}]
        failed = await client.request("mcp/callTool", {"id": "basic.fail", "arguments": {"message": "boom"}})
        assert failed["result"]["isError"] is True
        await client.send_bytes(frame(b"{broken"))
        await client.response(None)
        logs = await client.request("mcp/server/logs", {"server": "basic"})
        assert "basic: hello on stderr" in [line["text"] for line in logs["result"]["lines"]]
        assert (await client.request("shutdown"))["result"] is None
        await client.notify("exit")
        assert await client.wait_exit() == 0
        # Every byte of stdout was part of a well-formed frame.
        assert client.violations == []
        assert client.stdout_bytes > 0
        assert "basic: hello on stderr" not in json.dumps(client.messages)


async def test_shutdown_then_exit_exits_zero(home: Path) -> None:
    async with raw_sidecar(home) as client:
        response = await client.request("shutdown")
        assert response == {"jsonrpc": "2.0", "id": 1, "result": None}
        # Requests after shutdown are refused, not left unanswered.
        response = await client.request("mcp/status", {})
        assert error_of(response) == (INVALID_REQUEST, "Invalid request: the sidecar is shutting down.")
        await client.notify("exit")
        assert await client.wait_exit() == 0
        assert client.violations == []


async def test_exit_without_shutdown_exits_one(home: Path) -> None:
    async with raw_sidecar(home) as client:
        await still_answers(client)
        await client.notify("exit")
        assert await client.wait_exit() == 1


async def test_closed_stdin_ends_the_process_and_its_servers(home: Path, tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    async with raw_sidecar(home) as client:
        activated = await client.request("mcp/activate", {"ids": ["basic.echo"]})
        assert activated["result"]["results"][0]["status"] == "loaded"
        [pid] = started_pids(counter)
        assert pid_alive(pid)
        await client.close_stdin()
        assert await client.wait_exit() == 0
        await wait_until(lambda: not pid_alive(pid), 10, "the MCP server to end")
        assert client.violations == []
