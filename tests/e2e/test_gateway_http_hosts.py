"""Several hosts on one `mcp-sidecar mcp --http` gateway: what one host's server says reaches no
other host, and no host (with the token or without) can keep the others out.

The gateway runs as a real subprocess on 127.0.0.1:0 (or in process, where a test needs short
limits); the hosts are the SDK's `Client` over Streamable HTTP, in both protocol eras.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from support.http_gateway import http_gateway, http_host
from support.servers import fixture_path
from support.sidecar import wait_until, write_config

pytestmark = pytest.mark.e2e


def asks() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(fixture_path("asks.py")), "stdio"], "protocol": "legacy"}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def logged_count(stop: Path) -> int:
    """How many messages `log_until` sent so far (0 before its call started)."""
    counted = stop.with_name(stop.name + ".count")
    text = counted.read_text(encoding="utf-8") if counted.exists() else ""
    return int(text) if text.isdecimal() else 0


class Heard:
    """The log messages one host received."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.texts.append(str(params.data))

    def any(self, tag: str) -> bool:
        return any(f"{tag}-PRIVATE-" in text for text in self.texts)


# -- item: logs reach only the host whose call is running ------------------------------------


@pytest.mark.parametrize("legacy", [True, False], ids=["2025-11-25", "2026-07-28"])
async def test_a_servers_log_messages_reach_only_the_host_whose_call_runs(
    tmp_path: Path, legacy: bool
) -> None:
    """Host A's call logs A-PRIVATE-N all along; host B's call on the same server starts while it
    does. Before: in the 2026-07-28 era every request was one host, and B got A's messages."""
    home = tmp_path / "home"
    write_config(home, {"asks": asks()})
    stop_a, stop_b = tmp_path / "a.stop", tmp_path / "b.stop"
    heard_a, heard_b = Heard(), Heard()
    with http_gateway(home) as served:
        async with (
            http_host(served.url, served.headers, legacy=legacy, logging_callback=heard_a, log_level="warning") as a,
            http_host(served.url, served.headers, legacy=legacy, logging_callback=heard_b, log_level="warning") as b,
        ):
            for host in (a, b):
                activated = await host.call_tool("mcp_tools", {"activate": ["asks.log_until"]})
                assert not activated.is_error, text_of(activated)
            call_a = asyncio.create_task(a.call_tool("asks__log_until", {"tag": "A", "path": str(stop_a)}))
            await wait_until(lambda: heard_a.any("A"), what="A's call logging to A")
            call_b = asyncio.create_task(b.call_tool("asks__log_until", {"tag": "B", "path": str(stop_b)}))
            await wait_until(lambda: logged_count(stop_b) >= 1, what="B's call running on the server")
            overlap = logged_count(stop_a)
            await wait_until(lambda: logged_count(stop_a) >= overlap + 10, what="A logging while B's call runs")
            stop_a.touch()
            assert text_of(await call_a).startswith("A logged ")
            stop_b.touch()
            assert text_of(await call_b).startswith("B logged ")
    assert not heard_b.any("A"), heard_b.texts
    assert not heard_a.any("B"), heard_a.texts
