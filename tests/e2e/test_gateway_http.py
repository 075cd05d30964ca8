"""`mcp-sidecar mcp --http`: the gateway over Streamable HTTP, driven by the SDK's `Client`.

The gateway runs as a real subprocess on 127.0.0.1:0 and names its URL (and token) on stderr;
the fixture `basic.py` is its upstream server. Both protocol eras: the handshake era (one
`Mcp-Session-Id` per host) and 2026-07-28.
"""

from __future__ import annotations

import asyncio
import signal
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_sidecar.gateway import http as gateway_http
from mcp_sidecar.gateway.face import Gateway
from mcp_sidecar.gateway.options import Address
from mcp_sidecar.gateway.run import gateway_app
from support.http_gateway import HttpGateway, gateway_command, gateway_env, http_client, http_gateway, http_host
from support.servers import fixture_path
from support.sidecar import wait_until, write_config

pytestmark = pytest.mark.e2e

ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


def basic() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(fixture_path("basic.py")), "stdio"]}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    write_config(path, {"basic": basic()})
    return path


@pytest.fixture
def gateway(home: Path) -> Iterator[HttpGateway]:
    with http_gateway(home) as served:
        yield served


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def names(host: Any) -> list[str]:
    return [t.name for t in (await host.list_tools()).tools]


class ListChanged:
    """Counts `notifications/tools/list_changed` a host receives, and lists its tools again on each, as
    Claude Code and Gemini CLI do (the activation's answer waits for that list)."""

    def __init__(self) -> None:
        self.count = 0
        self.event = asyncio.Event()
        self.host: Any = None
        self._relisting: set[asyncio.Task[Any]] = set()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.seen()

    def seen(self) -> None:
        self.count += 1
        self.event.set()
        if self.host is not None:
            task = asyncio.ensure_future(self.host.list_tools())
            self._relisting.add(task)
            task.add_done_callback(self._relisting.discard)

    async def first(self, timeout: float = 30) -> None:
        async with asyncio.timeout(timeout):
            await self.event.wait()


async def activate_and_call(host: Any) -> None:
    """list → activate basic.echo → the list has basic__echo with its schema → call it."""
    assert await names(host) == ["mcp_tools", "mcp_call"]
    activated = await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
    assert activated.is_error is False
    assert "basic.echo → basic__echo" in text_of(activated)
    listed = {t.name: t for t in (await host.list_tools()).tools}
    assert sorted(listed) == ["basic__echo", "mcp_call", "mcp_tools"]
    schema = listed["basic__echo"].input_schema
    assert schema["properties"]["text"]["type"] == "string"
    assert schema["required"] == ["text"]
    called = await host.call_tool("basic__echo", {"text": "over http"})
    assert called.is_error is False
    assert text_of(called) == "over http"


async def test_handshake_era_list_activate_list_changed_call_and_the_token_is_in_no_log(
    gateway: HttpGateway,
) -> None:
    changed = ListChanged()
    async with http_host(gateway.url, gateway.headers, legacy=True, message_handler=changed) as host:
        changed.host = host
        assert host.protocol_version == "2025-11-25"
        capabilities = host.server_capabilities
        assert capabilities is not None
        assert capabilities.tools is not None
        assert capabilities.tools.list_changed is True  # as on stdio: the host knows to list again
        await activate_and_call(host)
        await changed.first()
    # Refused requests too: none of them may echo what it was sent, nor the real token.
    async with http_client({"Authorization": "Bearer not-the-token"}) as http:
        assert (await http.post(gateway.url, json=INITIALIZE, headers={"Accept": ACCEPT})).status_code == 401
    assert gateway.stop() == 0
    stderr = gateway.stderr()
    assert "Traceback" not in stderr
    # The token: once on stderr (the line naming the URL), nowhere in the log file.
    assert stderr.count(gateway.token) == 1
    assert gateway.token in gateway.announced
    log = gateway.log()
    assert "gateway: serving Streamable HTTP at" in log  # -vv logged, to the file
    assert gateway.token not in log


async def test_modern_era_list_activate_call_and_the_change_comes_through_listen(gateway: HttpGateway) -> None:
    async with http_host(gateway.url, gateway.headers, legacy=False) as host:
        assert host.protocol_version == "2026-07-28"
        async with host.listen(tools_list_changed=True) as subscription:
            changed = ListChanged()
            changed.host = host

            async def pump() -> None:
                async for _event in subscription:
                    changed.seen()

            listening = asyncio.create_task(pump())
            try:
                await activate_and_call(host)
                await changed.first()
            finally:
                listening.cancel()


async def test_two_sessions_have_separate_tool_lists(gateway: HttpGateway) -> None:
    async with http_host(gateway.url, gateway.headers) as first, http_host(gateway.url, gateway.headers) as second:
        activated = await first.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        assert activated.is_error is False
        assert await names(first) == ["mcp_tools", "mcp_call", "basic__echo"]
        assert await names(second) == ["mcp_tools", "mcp_call"]
        refused = await second.call_tool("basic__echo", {"text": "x"})
        assert refused.is_error is True
        assert "'basic__echo' is not activated yet" in text_of(refused)


async def test_requests_without_the_right_token_get_401(gateway: HttpGateway) -> None:
    async def status(headers: dict[str, str]) -> tuple[int, str]:
        async with http_client(headers) as http:
            response = await http.post(gateway.url, json=INITIALIZE, headers={"Accept": ACCEPT})
            return response.status_code, response.headers.get("www-authenticate", "")

    assert await status({}) == (401, 'Bearer realm="mcp-sidecar"')
    assert await status({"Authorization": "Bearer wrong"}) == (401, 'Bearer realm="mcp-sidecar"')
    assert await status({"Authorization": f"Basic {gateway.token}"}) == (401, 'Bearer realm="mcp-sidecar"')
    assert await status({"Authorization": f"Bearer {gateway.token}x"}) == (401, 'Bearer realm="mcp-sidecar"')
    assert (await status({"Authorization": f"bearer {gateway.token}"}))[0] == 200  # the scheme is case-insensitive
    # Every method, not only POST: the event stream and the end of a session too.
    async with http_client() as http:
        assert (await http.get(gateway.url, headers={"Accept": "text/event-stream"})).status_code == 401
        assert (await http.delete(gateway.url)).status_code == 401


async def test_a_foreign_host_or_origin_is_refused(gateway: HttpGateway) -> None:
    port = gateway.authority.rpartition(":")[2]

    async def status(**headers: str) -> int:
        async with http_client(gateway.headers) as http:
            sent = {"Accept": ACCEPT, **headers}
            return (await http.post(gateway.url, json=INITIALIZE, headers=sent)).status_code

    # DNS rebinding: a page of evil.example.com whose name now resolves to 127.0.0.1.
    assert await status(Host=f"evil.example.com:{port}") == 421
    assert await status(Host="127.0.0.1:1") == 421  # another port is another origin
    assert await status(Origin=f"http://evil.example.com:{port}") == 403
    assert await status(Origin=f"https://127.0.0.1:{port}") == 403
    assert await status(Origin=f"http://127.0.0.1:{port}") == 200
    assert await status(Host=f"localhost:{port}", Origin=f"http://localhost:{port}") == 200


async def test_token_file_mode_writes_a_0600_file_and_prints_no_token(home: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "gateway.token"
    with http_gateway(home, token_file=token_file) as served:
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert len(served.token) >= 40
        assert served.announced.endswith(f"(send the header: Authorization: Bearer <the token in {token_file}>)")
        async with http_host(served.url, served.headers) as host:
            assert await names(host) == ["mcp_tools", "mcp_call"]
        assert served.stop(signal.SIGINT) == 0
        assert served.token not in served.stderr()
        assert served.token not in served.log()
        assert "Traceback" not in served.stderr()
    assert not token_file.exists()  # worthless once the gateway stopped


async def test_sigterm_with_an_open_event_stream_stops_cleanly(gateway: HttpGateway) -> None:
    async with http_client(gateway.headers) as http:
        opened = await http.post(gateway.url, json=INITIALIZE, headers={"Accept": ACCEPT})
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(gateway.url, json=ready, headers={"Accept": ACCEPT, **session})).status_code == 202
        async with http.stream("GET", gateway.url, headers={"Accept": "text/event-stream", **session}) as stream:
            assert stream.status_code == 200
            assert await asyncio.to_thread(gateway.stop) == 0
    assert "Traceback" not in gateway.stderr()
    assert "gateway: HTTP stopped" in gateway.log()


@pytest.mark.parametrize("address", ["0.0.0.0:0", "192.168.1.10:8765", "example.com:8765", "127.0.0.1", "[::1]:70000"])
def test_only_a_loopback_host_and_port_are_accepted(home: Path, address: str) -> None:
    done = _run(home, "--http", address)
    assert done.returncode == 2
    assert "argument --http:" in done.stderr
    assert "MCP over HTTP at" not in done.stderr


def test_token_file_needs_http(home: Path, tmp_path: Path) -> None:
    done = _run(home, "--token-file", str(tmp_path / "t"))
    assert done.returncode == 2
    assert "mcp-sidecar mcp: --token-file needs --http" in done.stderr


def _run(home: Path, *args: str) -> Any:
    import subprocess

    return subprocess.run(
        gateway_command(home, *args),
        env=gateway_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_address_parsing() -> None:
    from mcp_sidecar.gateway.options import parse_address

    assert parse_address("127.0.0.1:0") == Address("127.0.0.1", 0)
    assert parse_address("localhost:8765") == Address("localhost", 8765)
    assert parse_address("[::1]:8765") == Address("::1", 8765)
    assert parse_address("::1:8765") == Address("::1", 8765)
    assert parse_address("LOCALHOST:1").bind_host == "127.0.0.1"
    with pytest.raises(ValueError, match="is not a loopback address"):
        parse_address("0.0.0.0:1")
    with pytest.raises(ValueError, match="the port must be 0 to 65535"):
        parse_address("127.0.0.1:-1")


async def test_a_session_that_ends_ends_its_host(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process, to see the sessions: the host's DELETE (the SDK's client closing) runs the
    connection's exit stack, whose callback closes the gateway host and ends its sidecar session."""
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    app = gateway_app(project, trust_project=False)
    gateway = Gateway(app)
    sock = gateway_http.listen(Address("127.0.0.1", 0))
    bound = Address("127.0.0.1", sock.getsockname()[1])
    token = "in-process-token-0123456789abcdefghijklmnop"
    server = gateway_http.http_server(gateway, bound, token)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await wait_until(lambda: server.started, what="uvicorn started")
        url = f"http://127.0.0.1:{bound.port}/mcp"
        async with http_host(url, {"Authorization": f"Bearer {token}"}) as host:
            activated = await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
            assert activated.is_error is False
            assert list(app.sessions.active("gateway-1")) == ["basic.echo"]
        # Closing sent DELETE: the session's loop ended and its exit stack closed the host.
        await wait_until(lambda: "gateway-1" not in set(app.sessions), what="the session ended")
        assert app.sessions.active("gateway-1") == {}
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 30)
        sock.close()
        await app.shutdown()
