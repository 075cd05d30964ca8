"""Bounded HTTP answers: a Streamable HTTP server's message is at most 64 MiB, like a stdio line.

The server (`bad_http.py --mode mcp`) answers its `big` tool with 300 MB of text, generated
as it is sent: a chunked JSON body, the same with its length declared, the same gzip-compressed
(300 MB in about 300 KB), and an event stream. Each must end with `protocol_error` while the
sidecar holds at most the limit, never the body: its peak RSS (VmHWM) is checked against the
body's size, nothing is spilled, and the next request on the same server is answered. An event
of 8 MiB, over the SDK's own 1 MiB event bound but under ours, is a result like any other.
One sidecar serves the module, so each test also proves it survived the ones before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from mcp_sidecar.pygls_shim import client_process
from reliability.helpers import figure, mib
from support.servers import http_server
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

BIG_BYTES = 300_000_000
LIMIT = 64 * 1024 * 1024
TOO_LARGE = "The server's answer is larger than 64 MiB, the most one message may be."
SERVERS: dict[str, tuple[str, ...]] = {
    "json-chunked": ("--answer", "json"),
    "json-declared": ("--answer", "json", "--content-length"),
    "json-gzip": ("--answer", "json", "--gzip"),
    "sse-chunked": ("--answer", "sse"),
    "sse-8mib": ("--answer", "sse", "--big-bytes", str(8 * 1024 * 1024)),
}


def peak_kib(pid: int) -> int:
    """The process's peak resident set size so far (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for pid {pid}")


@dataclass(frozen=True, slots=True)
class Setup:
    sidecar: SidecarClient
    home: Path
    start_peak_kib: int

    @property
    def pid(self) -> int:
        process = client_process(self.sidecar.lsp)
        assert process is not None
        return process.pid

    def spill_files(self) -> list[Path]:
        directory = self.home / "cache" / "spill"
        return sorted(directory.iterdir()) if directory.is_dir() else []


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(
                http_server(
                    "bad_http.py",
                    "--mode",
                    "mcp",
                    *(args if "--big-bytes" in args else (*args, "--big-bytes", str(BIG_BYTES))),
                )
            )
            for name, args in SERVERS.items()
        }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory, urls: dict[str, str]) -> AsyncIterator[Setup]:
    home = tmp_path_factory.mktemp("home")
    servers: dict[str, Any] = {
        name: {"url": url, "protocol": "legacy", "timeoutMs": 60_000} for name, url in urls.items()
    }
    write_config(home, servers)
    async with start_sidecar(home) as sidecar:
        await sidecar.request(
            "mcp/activate", {"ids": [f"{name}.{tool}" for name in servers for tool in ("big", "echo")]}
        )
        process = client_process(sidecar.lsp)
        assert process is not None
        yield Setup(sidecar, home, peak_kib(process.pid))


async def still_answers(setup: Setup, server: str) -> None:
    result = await setup.sidecar.request("mcp/callTool", {"id": f"{server}.echo", "arguments": {}})
    assert result["content"] == [{"type": "text", "text": "alive"}]


@pytest.mark.parametrize("server", ["json-chunked", "json-declared", "json-gzip", "sse-chunked"])
async def test_an_http_answer_over_64_mib_is_a_protocol_error_without_holding_it(setup: Setup, server: str) -> None:
    sidecar = setup.sidecar
    spilled_before = setup.spill_files()
    try:
        result = await sidecar.request("mcp/callTool", {"id": f"{server}.big", "arguments": {}}, timeout=120)
    except JsonRpcException as exc:
        error = exc
    else:  # the whole answer was taken (and spilled): say so without printing 300 MB
        peak = peak_kib(setup.pid)
        figure(f"http limits: {server}", f"300 MB answer taken whole; sidecar peak RSS {mib(peak)}")
        raise AssertionError(f"the call succeeded: spill {result.get('spill')}, peak RSS {mib(peak)}")
    peak = peak_kib(setup.pid)
    diag = diagnostic_of(error)
    figure(
        f"http limits: {server}",
        f"300 MB answer -> {diag['code']}; sidecar peak RSS {mib(setup.start_peak_kib)} before the first, "
        f"{mib(peak)} after this one",
    )
    assert (diag["code"], diag["server"], diag["message"]) == ("protocol_error", server, TOO_LARGE)
    assert "xxxxxxxx" not in str(diag)
    # At most the limit is held (and parsed) at once: far from the 286 MiB of the body.
    assert peak * 1024 < BIG_BYTES * 0.8, mib(peak)
    assert (peak - setup.start_peak_kib) * 1024 < LIMIT + 96 * 1024 * 1024, mib(peak - setup.start_peak_kib)
    assert setup.spill_files() == spilled_before
    await still_answers(setup, server)


async def test_an_event_over_the_sdk_default_but_under_64_mib_is_a_result(setup: Setup) -> None:
    result = await setup.sidecar.request("mcp/callTool", {"id": "sse-8mib.big", "arguments": {}}, timeout=120)
    assert result["isError"] is False
    assert result["truncated"] is True
    assert result["spill"]["bytes"] > 8 * 1024 * 1024
    [spilled] = [p for p in setup.spill_files() if str(p) == result["spill"]["path"]]
    assert spilled.stat().st_size == result["spill"]["bytes"]
    await still_answers(setup, "sse-8mib")
