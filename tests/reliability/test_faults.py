"""Fault injection with real processes: what tests/e2e/test_failures.py does not already cover.

Covered there (and not repeated here): a server that crashes at start, crashes mid-call (stdio
and HTTP), hangs on initialize (both eras, stdio and HTTP), writes garbage lines, or is
missing; a refused HTTP endpoint; reconnect and shutdown during a hanging attempt. A call
that hangs is tests/e2e/test_calls.py::test_timeout_ms_bounds_a_call; catalogs of 10,001
entries or 4.8 MiB are tests/e2e/test_discovery.py::test_oversized_tool_catalog_is_unavailable.

Here: a crash loop (the sidecar backs off instead of spawning a process per request), a
100 MiB line on stdout, stdout closed by a server that keeps running, a flood of resource
updates, and HTTP endpoints that reset connections, answer byte by byte, redirect to another
origin or answer HTML. One interactive sidecar serves the module, so each test also proves
it survived the ones before.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mcp_sidecar.pygls_shim import client_process
from reliability.helpers import figure, mib, rss_kib
from support.servers import basic_stdio, fixture_path, http_server, pid_alive, started_pids
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, wait_until, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

HTTP_MODES = ("reset", "slow", "redirect", "html")


@dataclass(frozen=True, slots=True)
class Setup:
    sidecar: SidecarClient
    counters: Path

    def starts(self, server: str) -> list[int]:
        return started_pids(self.counters / server)

    @property
    def pid(self) -> int:
        process = client_process(self.sidecar.lsp)
        assert process is not None
        return process.pid


def recorded(script: str, counter: Path, *args: str, **options: object) -> dict[str, object]:
    """Run a fixture script through `sh`, which first appends its pid (kept by `exec`) to `counter`."""
    return {
        "command": "sh",
        "args": ["-c", 'echo $$ >> "$0"; exec "$@"', str(counter), sys.executable, str(fixture_path(script)), *args],
        **options,
    }


@pytest.fixture(scope="module")
def http_urls() -> Iterator[dict[str, str]]:
    with ExitStack() as stack:
        yield {mode: stack.enter_context(http_server("bad_http.py", "--mode", mode)) for mode in HTTP_MODES}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory, http_urls: dict[str, str]) -> AsyncIterator[Setup]:
    home = tmp_path_factory.mktemp("home")
    counters = tmp_path_factory.mktemp("counters")
    servers: dict[str, Any] = {
        "crash-loop": recorded("crash_on_start.py", counters / "crash-loop"),
        "dies-after-connect": recorded(
            "tiny.py", counters / "dies-after-connect", "--exit-after-initialize", protocol="legacy"
        ),
        "big-line": recorded("misbehave.py", counters / "big-line", "big-line", timeoutMs=3000, protocol="legacy"),
        "closes-stdout": recorded("misbehave.py", counters / "closes-stdout", "close-stdout", protocol="legacy"),
        "flood": basic_stdio("--resources", "--watchable", protocol="legacy"),
        "healthy": basic_stdio(),
        **{f"http-{mode}": {"url": url, "timeoutMs": 2000} for mode, url in http_urls.items()},
    }
    write_config(home, servers)
    async with start_sidecar(home, interactive=True) as sidecar:
        yield Setup(sidecar, counters)
    pids = [pid for f in counters.iterdir() for pid in started_pids(f)]
    await wait_until(lambda: not any(pid_alive(p) for p in pids), within=15, what="server processes to exit")


async def still_serving(setup: Setup) -> None:
    """The sidecar answers and a healthy server's tool still works."""
    sidecar = setup.sidecar
    await sidecar.request("mcp/activate", {"ids": ["healthy.echo"]})
    result = await sidecar.request("mcp/callTool", {"id": "healthy.echo", "arguments": {"text": "alive"}})
    assert result["content"] == [{"type": "text", "text": "alive"}]


async def test_a_crash_loop_backs_off_instead_of_spawning_a_storm(setup: Setup) -> None:
    sidecar = setup.sidecar
    requests = 30
    for _ in range(requests):
        error = await sidecar.error("mcp/server/tools", {"server": "crash-loop"}, timeout=30)
        assert (diagnostic_of(error)["code"], diagnostic_of(error)["server"]) == ("connection_failed", "crash-loop")
        assert diagnostic_of(error)["message"] == "The server closed the connection."
    # The first failure is retried at once; then the sidecar waits 1 s, 2 s, 4 s... before
    # starting the server again, answering with the last diagnostic meanwhile.
    spawned = len(setup.starts("crash-loop"))
    figure("faults: crash loop", f"{requests} requests in a row started the crashing server {spawned} times")
    assert 2 <= spawned <= 4, spawned
    row = next(r for r in (await sidecar.request("mcp/status"))["servers"] if r["name"] == "crash-loop")
    assert (row["state"], row["lastDiagnostic"]["code"]) == ("failed", "connection_failed")

    # It is a pause, not a verdict: once it ends, the next request starts the server again.
    deadline = time.monotonic() + 20
    while len(setup.starts("crash-loop")) == spawned:
        assert time.monotonic() < deadline, "the pause never ended"
        error = await sidecar.error("mcp/server/tools", {"server": "crash-loop"}, timeout=30)
        assert diagnostic_of(error)["code"] == "connection_failed"
        await asyncio.sleep(0.1)
    assert len(setup.starts("crash-loop")) == spawned + 1
    # An explicit reconnect retries at once, whatever the pause (now 2 s).
    error = await sidecar.error("mcp/server/reconnect", {"server": "crash-loop"}, timeout=30)
    assert diagnostic_of(error)["code"] == "connection_failed"
    assert len(setup.starts("crash-loop")) == spawned + 2
    await still_serving(setup)


async def test_a_server_that_dies_right_after_connecting_backs_off_too(setup: Setup) -> None:
    sidecar = setup.sidecar
    requests = 30
    for _ in range(requests):
        error = await sidecar.error("mcp/server/tools", {"server": "dies-after-connect"}, timeout=30)
        assert (diagnostic_of(error)["code"], diagnostic_of(error)["server"]) == (
            "connection_failed",
            "dies-after-connect",
        )
    spawned = len(setup.starts("dies-after-connect"))
    figure("faults: dies after connecting", f"{requests} requests in a row started the server {spawned} times")
    assert 2 <= spawned <= 4, spawned
    await still_serving(setup)


async def test_a_100_mib_line_on_stdout_is_bounded(setup: Setup) -> None:
    sidecar = setup.sidecar
    before = rss_kib(setup.pid)
    error = await sidecar.error("mcp/server/tools", {"server": "big-line"}, timeout=60)
    after = rss_kib(setup.pid)
    figure(
        "faults: 100 MiB stdout line",
        f"{diagnostic_of(error)['code']}; sidecar RSS {mib(before)} before, {mib(after)} after",
    )
    assert diagnostic_of(error)["code"] in ("protocol_error", "timeout"), error.data
    assert "xxxx" not in str(error.data)
    [pid] = setup.starts("big-line")
    await wait_until(lambda: not pid_alive(pid), within=15, what="the big-line server to be stopped")
    assert after - before < 400 * 1024
    await still_serving(setup)


async def test_a_server_that_closes_stdout_but_keeps_running(setup: Setup) -> None:
    sidecar = setup.sidecar
    error = await sidecar.error("mcp/server/tools", {"server": "closes-stdout"}, timeout=30)
    assert (diagnostic_of(error)["code"], diagnostic_of(error)["server"]) == ("connection_failed", "closes-stdout")
    [pid] = setup.starts("closes-stdout")
    # It would run on (for two minutes) by itself: the sidecar stopped it.
    await wait_until(lambda: not pid_alive(pid), within=15, what="the server to be stopped")
    await still_serving(setup)


async def test_a_flood_of_resource_updates_is_coalesced(setup: Setup) -> None:
    sidecar = setup.sidecar
    uri, flood = "notes://readme", 5_000
    created = await sidecar.request("mcp/resource/subscribe", {"server": "flood", "uri": uri})
    assert created["created"] is True
    await sidecar.request("mcp/activate", {"ids": ["flood.touch"], "session": "flood"})
    before = rss_kib(setup.pid)
    started = time.monotonic()
    result = await sidecar.request(
        "mcp/callTool",
        {"id": "flood.touch", "arguments": {"uri": uri, "times": flood}, "session": "flood"},
        timeout=120,
    )
    assert result["isError"] is False

    async def counted() -> int:
        listed = await sidecar.request("mcp/resource/subscriptions")
        updates: int = next(w["updates"] for w in listed["watches"] if w["uri"] == uri)
        return updates

    deadline = time.monotonic() + 60
    while (updates := await counted()) < flood:
        assert time.monotonic() < deadline, f"only {updates} of {flood} updates counted"
    elapsed = time.monotonic() - started
    after = rss_kib(setup.pid)
    notified = [n for n in sidecar.notifications["mcp/resourceUpdated"] if n["server"] == "flood"]
    figure(
        "faults: notification flood",
        f"{flood} updates in {elapsed:.1f} s ({flood / elapsed:,.0f}/s) -> {len(notified)} notification(s); "
        f"sidecar RSS {mib(before)} before, {mib(after)} after",
    )
    assert updates == flood
    assert notified == [{"server": "flood", "uri": uri, "changed": True}]
    assert after - before < 100 * 1024
    await still_serving(setup)


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        ("reset", "connection_failed"),
        ("slow", "timeout"),
        ("redirect", "connection_failed"),
        ("html", "protocol_error"),
    ],
)
async def test_misbehaving_http_endpoints(setup: Setup, mode: str, code: str) -> None:
    sidecar = setup.sidecar
    server = f"http-{mode}"
    error = await sidecar.error("mcp/server/tools", {"server": server}, timeout=30)
    figure(f"faults: HTTP {mode}", f"{diagnostic_of(error)['code']}: {diagnostic_of(error)['message']}")
    assert (diagnostic_of(error)["code"], diagnostic_of(error)["server"]) == (code, server), error.data
    assert "<html" not in str(error.data).lower()
    assert "localhost" not in str(error.data)
    await still_serving(setup)
