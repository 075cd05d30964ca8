"""Several hosts on one `mcp-sidecar mcp --http` gateway: what one host's server says reaches no
other host, and no host (with the token or without) can keep the others out.

The gateway runs as a real subprocess on 127.0.0.1:0 (or in process, where a test needs short
limits); the hosts are the SDK's `Client` over Streamable HTTP, in both protocol eras.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_sidecar.gateway import http as gateway_http
from mcp_sidecar.gateway.face import Gateway
from mcp_sidecar.gateway.http_guard import ConnectionLimits
from mcp_sidecar.gateway.http_sessions import SessionLimits
from mcp_sidecar.gateway.options import Address
from mcp_sidecar.gateway.run import gateway_app
from support.http_gateway import http_client, http_gateway, http_host
from support.servers import fixture_path
from support.sidecar import wait_until, write_config

pytestmark = pytest.mark.e2e


CANARY = "canary-http-hosts-3f7a2c"


def asks() -> dict[str, Any]:
    """asks.py with a secret of its own: its `log_things` warning carries it (the gateway writes ***)."""
    return {
        "command": sys.executable,
        "args": [str(fixture_path("asks.py")), "stdio"],
        "protocol": "legacy",
        "env": {"SECRET": CANARY},
    }


def canary_pieces(text: str) -> int:
    """Occurrences of any 8-character piece of the canary (a cut secret leaks its start)."""
    return sum(text.count(CANARY[i : i + 8]) for i in range(len(CANARY) - 7))


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
async def test_a_servers_log_messages_reach_only_the_host_whose_call_runs(tmp_path: Path, legacy: bool) -> None:
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
                activated = await host.call_tool("mcp_tools", {"activate": ["asks.log_until", "asks.log_things"]})
                assert not activated.is_error, text_of(activated)
            assert text_of(await a.call_tool("asks__log_things", {})) == "logged"
            await wait_until(lambda: "a warning with the secret ***" in heard_a.texts, what="A's warning, redacted")
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
    assert "a warning with the secret ***" not in heard_b.texts  # A's call alone was running
    assert canary_pieces("\n".join(heard_a.texts + heard_b.texts) + served.log() + served.stderr()) == 0


# -- item: the session table cannot be filled to keep new hosts out ---------------------------

ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


async def open_session(http: Any, url: str) -> str:
    """A raw `initialize` (nothing after it): the session id the gateway gave."""
    answer = await http.post(url, json=INITIALIZE, headers={"Accept": ACCEPT})
    assert answer.status_code == 200, answer.text
    session: str = answer.headers["mcp-session-id"]
    return session


async def post(http: Any, url: str, session: str, message: dict[str, Any]) -> int:
    """POST `message` on `session`: the HTTP status (404 once the session is gone)."""
    headers = {"Accept": ACCEPT, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
    status: int = (await http.post(url, json=message, headers=headers)).status_code
    return status


async def test_sessions_never_used_cannot_keep_a_new_host_out(tmp_path: Path) -> None:
    """128 `initialize`s never used again; before, every new host got 503 for a day."""
    home = tmp_path / "home"
    write_config(home, {"asks": asks()})
    with http_gateway(home) as served:
        async with http_client(served.headers) as http:
            idle = [await open_session(http, served.url) for _ in range(128)]
            async with http_host(served.url, served.headers) as host:
                activated = await host.call_tool("mcp_tools", {"activate": ["asks.log_things"]})
                assert not activated.is_error, text_of(activated)
            assert await post(http, served.url, idle[0], LIST) == 404  # the oldest never-used one made room
            assert await post(http, served.url, idle[-1], LIST) == 200
        log = served.log()
    assert "Too many open sessions" not in log
    assert "gateway: HTTP session ended to make room for a new one (never used)" in log


async def test_a_full_table_ends_a_never_used_session_first_then_the_one_used_least_recently(
    tmp_path: Path,
) -> None:
    """127 used sessions and one never used (the newest): a new host takes the never-used one's
    place; with all used, the place of the one idle longest, while the one used a moment ago stays."""
    home = tmp_path / "home"
    write_config(home, {"asks": asks()})
    with http_gateway(home) as served:
        async with http_client(served.headers) as http:
            used = []
            for _ in range(127):
                session = await open_session(http, served.url)
                assert await post(http, served.url, session, LIST) == 200
                used.append(session)
            assert await post(http, served.url, used[0], LIST) == 200  # the first is the latest used now
            never = await open_session(http, served.url)
            newcomer = await open_session(http, served.url)
            assert await post(http, served.url, never, LIST) == 404  # never used, though the newest
            assert await post(http, served.url, used[1], LIST) == 200
            assert await post(http, served.url, newcomer, LIST) == 200  # used now: all 128 are
            assert await open_session(http, served.url)
            assert await post(http, served.url, used[2], LIST) == 404  # idle longest
            assert await post(http, served.url, used[0], LIST) == 200
        log = served.log()
    assert "gateway: HTTP session ended to make room for a new one (never used)" in log
    assert "gateway: HTTP session ended to make room for a new one (idle longest)" in log


@contextlib.asynccontextmanager
async def in_process(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **limits: Any
) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """The gateway's HTTP server in this process (to give it short limits): its URL and token header."""
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    app = gateway_app(project, trust_project=False)
    sock = gateway_http.listen(Address("127.0.0.1", 0))
    bound = Address("127.0.0.1", sock.getsockname()[1])
    token = "in-process-token-0123456789abcdefghijklmnop"
    server = gateway_http.http_server(Gateway(app), bound, token, **limits)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await wait_until(lambda: server.started, what="uvicorn started")
        yield f"http://127.0.0.1:{bound.port}/mcp", {"Authorization": f"Bearer {token}"}
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 30)
        sock.close()
        await app.shutdown()


async def test_a_session_that_never_calls_anything_ends_after_its_short_idle_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    write_config(home, {"asks": asks()})
    caplog.set_level(logging.INFO, logger="mcp_sidecar.gateway.http_sessions")
    limits = SessionLimits(unused_idle_s=0.5, sweep_s=0.1)
    async with in_process(home, tmp_path, monkeypatch, sessions=limits) as (url, headers), http_client(headers) as http:
        used = await open_session(http, url)
        assert await post(http, url, used, LIST) == 200
        idle = await open_session(http, url)
        await wait_until(
            lambda: "HTTP session ended after 0.5 s without calling anything" in caplog.text, what="the sweep"
        )
        assert await post(http, url, idle, LIST) == 404
        assert await post(http, url, used, LIST) == 200  # used: its limit is the day's
    assert caplog.text.count("without calling anything") == 1


# -- item: connections without a token cannot use up the gateway's file descriptors ---------

IDLE_CONNECTIONS = 300
OPEN_FILES = 256


async def idle_connection(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """A TCP connection to the gateway that sends nothing (None: the connection was not accepted in time)."""
    try:
        return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
    except (TimeoutError, OSError):
        return None


async def closed_by_the_gateway(reader: asyncio.StreamReader) -> bool:
    try:
        return await reader.read(1) == b""
    except OSError:
        return True  # reset: closed too


async def test_idle_connections_without_a_token_cannot_stall_a_host(tmp_path: Path) -> None:
    """300 idle TCP connections against a 256-descriptor limit: before, the gateway could accept
    nothing more and a host's requests stalled; now those without a token are closed (the oldest
    past 32 at once, the rest once their request head is 10 s late) and the host is answered."""
    home = tmp_path / "home"
    write_config(home, {"asks": asks()})
    with http_gateway(home, open_files=OPEN_FILES) as served:
        port = int(served.authority.rsplit(":", 1)[1])
        opened = await asyncio.gather(*(idle_connection(port) for _ in range(IDLE_CONNECTIONS)))
        idle = [pair for pair in opened if pair is not None]
        assert len(idle) > OPEN_FILES  # more than the gateway could hold at once
        try:
            async with asyncio.timeout(60):
                async with http_host(served.url, served.headers) as host:
                    found = await host.call_tool("mcp_tools", {"query": "log things"})
            assert "asks.log_things" in text_of(found)
            async with asyncio.timeout(60):
                closed = await asyncio.gather(*(closed_by_the_gateway(reader) for reader, _ in idle))
            assert all(closed)
        finally:
            for _, writer in idle:
                writer.close()
        log = served.log()
    assert "out of system resource" not in served.stderr() + log  # before: the failed accepts, 2 million lines a minute


async def read_answer(reader: asyncio.StreamReader) -> bytes:
    """One HTTP answer with a Content-Length body: its status line."""
    status = await reader.readline()
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    await reader.readexactly(length)
    return status


async def dripped_until_closed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> int:
    """Send a request head one header line every 0.2 s (a slow client's pace) until the gateway closes
    the connection: the lines it took (bounded by the caller's timeout)."""
    sent = 0
    while not reader.at_eof():
        try:
            writer.write(b"X-Slow: " + b"a" * 10 + b"\r\n")
            await writer.drain()
        except OSError:
            break
        sent += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reader.read(1), 0.2)  # b"" (the close) ends the loop
    return sent


async def test_a_request_head_that_comes_too_slowly_is_closed_first_or_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A head sent a line at a time never ends: closed once it is a second late, as the first request
    of a connection and as the next one after a request with the token was answered."""
    home = tmp_path / "home"
    write_config(home, {"asks": asks()})
    limits = ConnectionLimits(header_read_s=1.0)
    async with in_process(home, tmp_path, monkeypatch, connections=limits) as (url, headers):
        port = int(url.split(":")[2].split("/")[0])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        async with asyncio.timeout(30):
            assert await dripped_until_closed(reader, writer) >= 1
        writer.close()

        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        token = headers["Authorization"]
        writer.write(f"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {token}\r\n\r\n".encode())
        assert await read_answer(reader) == b"HTTP/1.1 404 Not Found\r\n"
        writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        async with asyncio.timeout(30):
            assert await dripped_until_closed(reader, writer) >= 1
        writer.close()


async def test_past_the_limit_the_oldest_connection_without_the_token_is_closed_a_hosts_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 2 kept: of 5 idle connections the 3 oldest are closed at once (the head limit is a
    minute), while the host's connections, which showed the token, keep working."""
    home = tmp_path / "home"
    write_config(home, {"asks": asks()})
    limits = ConnectionLimits(header_read_s=60.0, max_unauthenticated=2)
    async with in_process(home, tmp_path, monkeypatch, connections=limits) as (url, headers):
        port = int(url.split(":")[2].split("/")[0])
        async with http_host(url, headers) as host:
            assert not (await host.call_tool("mcp_tools", {"query": "log"})).is_error
            idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(5)]
            async with asyncio.timeout(30):
                assert await asyncio.gather(*(closed_by_the_gateway(r) for r, _ in idle[:3])) == [True] * 3
            found = await host.call_tool("mcp_tools", {"query": "log things"})
            assert "asks.log_things" in text_of(found)
            for _, writer in idle:
                writer.close()
