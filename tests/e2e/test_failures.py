"""Failures end to end: servers that crash, hang, print garbage or die mid-call.

One sidecar serves the whole module, so every test also proves that it survived the failures
of the tests before it; at the end, shutting it down must leave no server process behind.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from support.servers import basic_stdio, fixture_path, free_port, http_server, pid_alive, started_pids
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, wait_until, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

FAST_FAILURE_S = 8.0
"""Well under the SDK's fixed 10 s discovery probe: proves connecting was bounded by timeoutMs."""


@dataclass(frozen=True, slots=True)
class Setup:
    sidecar: SidecarClient
    counters: Path
    http_port: int

    def starts(self, server: str) -> list[int]:
        return started_pids(self.counters / server)


def recorded(script: str, counter: Path, **options: object) -> dict[str, object]:
    """Run a fixture script through `sh`, which first appends its pid (kept by `exec`) to `counter`."""
    return {
        "command": "sh",
        "args": ["-c", 'echo $$ >> "$0"; exec "$1" "$2"', str(counter), sys.executable, str(fixture_path(script))],
        **options,
    }


def module_servers(counters: Path, http_port: int, silent_port: int) -> dict[str, Any]:
    silent_url = f"http://127.0.0.1:{silent_port}/mcp"
    return {
        "healthy": basic_stdio("--counter-file", str(counters / "healthy")),
        "crashes": recorded("crash_on_start.py", counters / "crashes"),
        "hangs-legacy": recorded("hang.py", counters / "hangs-legacy", timeoutMs=1000, protocol="legacy"),
        "hangs-auto": recorded("hang.py", counters / "hangs-auto", timeoutMs=1000),
        "garbage": recorded("garbage.py", counters / "garbage", timeoutMs=1500),
        "no-command": {"command": str(counters / "no-such-server")},
        "crasher": basic_stdio("--counter-file", str(counters / "crasher")),
        "busy": basic_stdio("--counter-file", str(counters / "busy")),
        "hangs-3s": recorded("hang.py", counters / "hangs-3s", timeoutMs=3000),
        "crasher-http": {"url": f"http://127.0.0.1:{http_port}/mcp"},
        "refused-http": {"url": f"http://127.0.0.1:{free_port()}/mcp", "timeoutMs": 2000},
        "silent-http-legacy": {"url": silent_url, "timeoutMs": 1000, "protocol": "legacy"},
        "silent-http-auto": {"url": silent_url, "timeoutMs": 1000},
    }


@pytest.fixture(scope="module")
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections (the kernel's backlog does) but never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        port: int = sock.getsockname()[1]
        yield port


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory, silent_port: int) -> AsyncIterator[Setup]:
    home = tmp_path_factory.mktemp("home")
    counters = tmp_path_factory.mktemp("counters")
    project = tmp_path_factory.mktemp("project")
    http_port = free_port()
    write_config(home, module_servers(counters, http_port, silent_port))
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        yield Setup(sidecar, counters, http_port)
    # Everything the sidecar started is gone after shutdown (the HTTP fixture is not its child).
    pids = [pid for f in counters.iterdir() if f.name != "crasher-http" for pid in started_pids(f)]
    await wait_until(lambda: not any(pid_alive(p) for p in pids), within=10, what="server processes to exit")


@pytest.fixture
def sidecar(setup: Setup) -> SidecarClient:
    return setup.sidecar


async def assert_serving(sidecar: SidecarClient) -> dict[str, Any]:
    status: dict[str, Any] = await sidecar.request("mcp/status", timeout=10)
    assert {row["name"] for row in status["servers"]} == set(module_servers(Path(), 0, 0))
    return status


def row_of(status: dict[str, Any], name: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [row for row in status["servers"] if row["name"] == name]
    [row] = rows
    return row


async def test_crash_on_start_is_connection_failed_and_keeps_stderr_in_logs(setup: Setup) -> None:
    sidecar = setup.sidecar
    error = await sidecar.error("mcp/server/tools", {"server": "crashes"}, timeout=FAST_FAILURE_S)
    assert diagnostic_of(error)["code"] == "connection_failed"
    assert (diagnostic_of(error)["server"], diagnostic_of(error)["operation"]) == ("crashes", "tools")
    assert "fatal" not in diagnostic_of(error)["message"]
    assert "fatal" not in str(error)

    row = row_of(await assert_serving(sidecar), "crashes")
    assert row["state"] == "failed"
    assert row["lastDiagnostic"] == error.data
    assert sidecar.states("crashes") == ["connecting", "failed"]
    logs = await sidecar.request("mcp/server/logs", {"server": "crashes"})
    assert "fatal: startup failed" in [line["text"] for line in logs["lines"]]

    # Its neighbour is unaffected, and the crashing one is retried (and fails) on the next request.
    tools = await sidecar.request("mcp/server/tools", {"server": "healthy"})
    assert {t["name"] for t in tools["tools"]} >= {"echo", "add"}
    again = await sidecar.error("mcp/server/tools", {"server": "crashes"}, timeout=FAST_FAILURE_S)
    assert diagnostic_of(again)["code"] == "connection_failed"
    assert len(setup.starts("crashes")) == 2


@pytest.mark.parametrize("server", ["hangs-legacy", "hangs-auto", "silent-http-legacy", "silent-http-auto"])
async def test_hanging_server_times_out_within_its_timeout(setup: Setup, server: str) -> None:
    sidecar = setup.sidecar
    started = time.monotonic()
    error = await sidecar.error("mcp/server/tools", {"server": server}, timeout=FAST_FAILURE_S)
    assert time.monotonic() - started < FAST_FAILURE_S
    assert diagnostic_of(error)["code"] == "timeout"
    assert diagnostic_of(error)["server"] == server
    assert diagnostic_of(error)["message"] == "The server did not connect within the time limit."
    assert row_of(await assert_serving(sidecar), server)["state"] == "failed"
    assert sidecar.states(server) == ["connecting", "failed"]
    if server.startswith("hangs"):
        # The hung process was stopped, not left behind.
        [pid] = setup.starts(server)
        await wait_until(lambda: not pid_alive(pid), within=10, what=f"{server} to be stopped")


async def test_garbage_on_stdout_is_a_protocol_error(setup: Setup) -> None:
    sidecar = setup.sidecar
    started = time.monotonic()
    error = await sidecar.error("mcp/server/tools", {"server": "garbage"}, timeout=FAST_FAILURE_S)
    assert time.monotonic() - started < FAST_FAILURE_S
    assert diagnostic_of(error)["code"] == "protocol_error"
    assert "hello this is not json" not in str(error.data)
    assert row_of(await assert_serving(sidecar), "garbage")["lastDiagnostic"]["code"] == "protocol_error"
    [pid] = setup.starts("garbage")
    await wait_until(lambda: not pid_alive(pid), within=10, what="garbage to be stopped")


async def test_missing_command_is_connection_failed(sidecar: SidecarClient) -> None:
    error = await sidecar.error("mcp/server/tools", {"server": "no-command"}, timeout=FAST_FAILURE_S)
    assert diagnostic_of(error)["code"] == "connection_failed"
    assert diagnostic_of(error)["message"] == "The server command was not found."
    await assert_serving(sidecar)


async def test_refused_http_endpoint_is_connection_failed(sidecar: SidecarClient) -> None:
    error = await sidecar.error("mcp/server/tools", {"server": "refused-http"}, timeout=FAST_FAILURE_S)
    assert diagnostic_of(error)["code"] == "connection_failed"
    await assert_serving(sidecar)


async def test_crash_during_a_stdio_call_then_reconnect(setup: Setup) -> None:
    sidecar = setup.sidecar
    activated = await sidecar.request("mcp/activate", {"ids": ["crasher.crash", "crasher.echo"]})
    assert [r["status"] for r in activated["results"]] == ["loaded", "loaded"]
    error = await sidecar.error("mcp/callTool", {"id": "crasher.crash", "arguments": {}}, timeout=20)
    assert diagnostic_of(error)["code"] == "connection_failed"
    assert (diagnostic_of(error)["server"], diagnostic_of(error)["operation"]) == ("crasher", "call")
    assert row_of(await assert_serving(sidecar), "crasher")["state"] == "failed"

    result = await sidecar.request("mcp/callTool", {"id": "crasher.echo", "arguments": {"text": "back"}})
    assert result["content"][0]["text"] == "back"
    assert len(setup.starts("crasher")) == 2
    row = row_of(await assert_serving(sidecar), "crasher")
    assert (row["state"], row["lastDiagnostic"]) == ("connected", None)
    logs = await sidecar.request("mcp/server/logs", {"server": "crasher"})
    assert "basic: crash tool called, exiting with code 3" in [line["text"] for line in logs["lines"]]


@pytest.fixture
def crasher_http(setup: Setup) -> Iterator[Path]:
    counter = setup.counters / "crasher-http"
    with http_server("basic.py", "--counter-file", str(counter), port=setup.http_port):
        yield counter


async def test_crash_during_an_http_call_then_reconnect(setup: Setup, crasher_http: Path) -> None:
    sidecar = setup.sidecar
    activated = await sidecar.request("mcp/activate", {"ids": ["crasher-http.crash", "crasher-http.echo"]})
    assert [r["status"] for r in activated["results"]] == ["loaded", "loaded"]
    error = await sidecar.error("mcp/callTool", {"id": "crasher-http.crash", "arguments": {}}, timeout=20)
    assert diagnostic_of(error)["code"] == "connection_failed"
    assert (diagnostic_of(error)["server"], diagnostic_of(error)["operation"]) == ("crasher-http", "call")
    await assert_serving(sidecar)

    with http_server("basic.py", "--counter-file", str(crasher_http), port=setup.http_port):
        result = await sidecar.request("mcp/callTool", {"id": "crasher-http.echo", "arguments": {"text": "back"}})
        assert result["content"][0]["text"] == "back"
        assert len(started_pids(crasher_http)) == 2
        assert row_of(await assert_serving(sidecar), "crasher-http")["state"] == "connected"


async def test_reconnect_during_a_call_leaves_one_healthy_connection(setup: Setup) -> None:
    sidecar = setup.sidecar
    await sidecar.request("mcp/activate", {"ids": ["busy.slow", "busy.echo"]})
    [first] = setup.starts("busy")
    # Sent first, so the sidecar has the call in flight when the reconnect closes its connection.
    call = asyncio.create_task(sidecar.error("mcp/callTool", {"id": "busy.slow", "arguments": {"seconds": 30}}))
    row = await sidecar.request("mcp/server/reconnect", {"server": "busy"})
    assert row["state"] == "connected"
    error = await asyncio.wait_for(call, 20)
    assert diagnostic_of(error)["code"] == "connection_failed"

    # The interrupted call's failure must not touch the new connection.
    row = row_of(await assert_serving(sidecar), "busy")
    assert (row["state"], row["lastDiagnostic"]) == ("connected", None)
    states = sidecar.states("busy")
    assert states[states.index("idle") :] == ["idle", "connecting", "connected"]
    result = await sidecar.request("mcp/callTool", {"id": "busy.echo", "arguments": {"text": "still here"}})
    assert result["content"][0]["text"] == "still here"
    pids = setup.starts("busy")
    assert len(pids) == 2
    await wait_until(lambda: not pid_alive(first), within=10, what="the replaced server to exit")
    assert pid_alive(pids[1])


async def test_reconnect_stops_a_hanging_connection_attempt(setup: Setup) -> None:
    sidecar = setup.sidecar
    started = time.monotonic()
    pending = asyncio.create_task(sidecar.error("mcp/server/tools", {"server": "hangs-3s"}))
    await sidecar.wait_for(lambda: bool(setup.starts("hangs-3s")), timeout=10, what="the server to start")
    [first] = setup.starts("hangs-3s")
    error = await sidecar.error("mcp/server/reconnect", {"server": "hangs-3s"}, timeout=FAST_FAILURE_S)
    assert diagnostic_of(error)["code"] == "timeout"
    # The attempt the reconnect replaced was stopped, not waited out, and its waiter got a diagnostic.
    interrupted = await asyncio.wait_for(pending, 1)
    assert (diagnostic_of(interrupted)["code"], diagnostic_of(interrupted)["server"]) == ("cancelled", "hangs-3s")
    assert time.monotonic() - started < FAST_FAILURE_S
    assert len(setup.starts("hangs-3s")) == 2
    await wait_until(lambda: not pid_alive(first), within=10, what="the replaced attempt's server to exit")
    assert row_of(await assert_serving(sidecar), "hangs-3s")["state"] == "failed"


async def test_shutdown_does_not_wait_for_a_hanging_connection(tmp_path: Path) -> None:
    home = tmp_path / "home"
    counter = tmp_path / "hang-pids"
    write_config(home, {"hangs": recorded("hang.py", counter, timeoutMs=60_000)})
    async with start_sidecar(home) as sidecar:
        pending = asyncio.create_task(sidecar.error("mcp/server/tools", {"server": "hangs"}))
        await sidecar.wait_for(lambda: bool(started_pids(counter)), timeout=10, what="the server to start")
        stopping = time.monotonic()
    assert time.monotonic() - stopping < FAST_FAILURE_S
    await asyncio.wait_for(pending, 10)  # the shutdown cancels requests in flight
    [pid] = started_pids(counter)
    await wait_until(lambda: not pid_alive(pid), within=10, what="the hanging server to be stopped")
