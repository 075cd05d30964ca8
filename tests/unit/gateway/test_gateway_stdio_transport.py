"""The gateway's stdio transport: how it splits the host's input, and what it waits for at the end of it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage

from mcp_sidecar.gateway import eras, stdio


async def _lines(data: bytes, limit: int) -> list[bytes | Exception | None]:
    reader = asyncio.StreamReader(limit=limit)
    reader.feed_data(data)
    reader.feed_eof()
    found: list[bytes | Exception | None] = []
    while (line := await stdio.next_line(reader)) is not None:
        found.append(line)
    return found


async def test_lines_are_split_and_an_unterminated_last_line_is_kept() -> None:
    assert await _lines(b'{"a":1}\n\n{"b":2}', limit=64) == [b'{"a":1}\n', b"\n", b'{"b":2}']


async def test_a_line_over_the_limit_is_dropped_whole_and_reading_goes_on() -> None:
    found = await _lines(b"short\n" + b"x" * 200 + b"\nafter\n", limit=16)
    assert found[0] == b"short\n"
    assert isinstance(found[1], ValueError)
    assert found[2:] == [b"after\n"]


def test_a_line_that_is_no_message_reaches_the_session_as_its_error() -> None:
    assert isinstance(eras.parse(b"not json\n"), ValueError)
    parsed = eras.parse(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}\n')
    assert isinstance(parsed, SessionMessage)
    assert isinstance(parsed.message, types.JSONRPCRequest)
    assert parsed.message.id == 7


def _message(raw: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(raw)
    return parsed


async def test_the_end_of_input_waits_for_the_answers_of_requests_read() -> None:
    unanswered = stdio.Unanswered()
    unanswered.read(_message('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'))
    unanswered.read(_message('{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{}}'))
    unanswered.read(_message('{"jsonrpc":"2.0","id":3,"method":"tools/list"}'))
    waiting = asyncio.ensure_future(unanswered.answered())
    unanswered.written(1)
    await asyncio.sleep(0)
    assert not waiting.done()  # request 3 is still open; listen (2) never counted
    unanswered.read(_message('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}'))
    await asyncio.wait_for(waiting, 5)  # a cancelled request is never answered: nothing left to wait for
