"""services/app_pages: an app that floods its page with calls gets 429 past the bound, and the
questions it could queue for the person stay bounded."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

from mcp_sidecar.events import AppCallAsked, EventHub
from mcp_sidecar.services.app_pages import MAX_WAITING_CALLS, AppPages


class _Apps:
    async def resource(self, server: str, uri: str) -> dict[str, Any]:
        return {"html": "<html><body>app</body></html>", "ui": None}

    async def call_tool(self, server: str, uri: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "ok"}], "isError": False}


async def _post(url: str, authority: str) -> int:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    body = json.dumps({"name": "refresh", "arguments": {}}).encode()
    head = (
        f"POST {parts.path}call HTTP/1.1\r\nHost: {authority}\r\nOrigin: http://{authority}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    writer.close()
    return status


async def test_calls_past_the_bound_are_refused_while_the_person_has_not_answered() -> None:
    hub = EventHub()
    asked: list[AppCallAsked] = []
    release, all_asked = asyncio.Event(), asyncio.Event()

    async def person(question: AppCallAsked) -> dict[str, bool]:
        asked.append(question)
        if len(asked) == MAX_WAITING_CALLS:
            all_asked.set()
        await release.wait()
        return {"allow": True}

    hub.answer(AppCallAsked, person)
    pages = AppPages(_Apps(), hub)  # type: ignore[arg-type]
    try:
        url = (await pages.open("weather", "ui://apps/dashboard", None, None))["url"]
        authority = urlsplit(url).netloc
        waiting = [asyncio.ensure_future(_post(url, authority)) for _ in range(MAX_WAITING_CALLS)]
        await asyncio.wait_for(all_asked.wait(), 30)
        assert await _post(url, authority) == 429  # one more while all wait on the person
        release.set()
        assert await asyncio.gather(*waiting) == [200] * MAX_WAITING_CALLS
        assert len(asked) == MAX_WAITING_CALLS
        assert await _post(url, authority) == 200  # the bound frees as calls end
    finally:
        pages.close()
