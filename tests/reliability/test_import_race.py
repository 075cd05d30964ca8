"""Requests in the first moments after a start never meet a half-imported SDK (issue 30).

The SDK loads lazily, in a thread (`heavy.SDK`), started by the first connection or by the
warm-up a second after `initialized`. A request that imported an SDK-backed module on the event
loop meanwhile (a login, an account lookup for `get`) could get a partially initialised module
and answer `operation_failed`; so could the connection whose import it disturbed. Each start here
sends every kind of request at once right after `initialize` (a call and a read on both protocol
eras, a discovery, a completion, a prompt preview, a `/mcp` command line), `get`, a login and a
logout with them or a few milliseconds later, and these again at staggered moments over the first
1.5 s, so some meet the connection's import and some the warm-up's; no answer may be `operation_failed` or an internal
error, and the log may hold no unexpected failure. The same for the gateway (`mcp-sidecar mcp`,
both eras: `initialize` or `server/discover`, then `tools/call mcp_tools`, `prompts/list`,
`resources/read`, ...) and for the CLI (one command per process).

On main before the fix, starts of the editor face failed (a login's ImportError or
_DeadlockError, and reads of the connecting server with it). CI runs few starts, two at a time
(about a minute and a half on 2 cores): 4 of the editor face (one per first moment of FIRST_S), 2
of the gateway (one per era) and each CLI command once. MCP_SIDECAR_RACE_STARTS=50 runs 50 of each
face (the CLI's 50 spread over its commands), as the issue asks: 4.5 minutes here, 0 failures.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from support.cli import cli
from support.gateway import gateway_params, text_of
from support.rawrpc import RawClient, raw_sidecar
from support.servers import fixture_path, free_port
from support.sidecar import write_config

STARTS = int(os.environ.get("MCP_SIDECAR_RACE_STARTS", "0"))
"""0: CI's few starts (below); otherwise this many starts of each face."""
EDITOR_STARTS = STARTS or 4
GATEWAY_STARTS = STARTS or 2
PARALLEL = 2
FIRST_S = (0.0, 0.05, 0.1, 0.2)
"""When a start first sends the requests that touch the SDK on the event loop (`get`, login,
logout), by start: with the burst, or a few milliseconds later, as the connections' import begins."""
STAGGER_S = (0.15, 0.3, 0.5, 0.8, 1.05, 1.3, 1.5)
"""When they are sent again: across the connection's import and the warm-up's (a second after
`initialized`)."""
ANSWER_LIMIT_S = 120.0
UNEXPECTED = re.compile(r"failed unexpectedly|importing .+ failed|background task .+ failed|Traceback")
"""Log lines of a failure nobody classified (handlers/base.py, heavy.py, tasks.py)."""


def servers(web_port: int) -> dict[str, Any]:
    """basic.py in both protocol eras, and an HTTP server that uses OAuth (nothing listens there)."""
    basic = [str(fixture_path("basic.py")), "stdio", "--resources", "--prompts", "--completions"]
    return {
        "old": {"command": sys.executable, "args": basic, "protocol": "legacy"},
        "new": {"command": sys.executable, "args": basic, "protocol": "auto"},
        "web": {"url": f"http://127.0.0.1:{web_port}/mcp"},
    }


def unexpected_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if UNEXPECTED.search(line)]


async def in_parallel(count: int, start: Callable[[int], Awaitable[None]]) -> None:
    """`count` starts, PARALLEL at a time."""
    slots = asyncio.Semaphore(PARALLEL)

    async def one(index: int) -> None:
        async with slots:
            await start(index)

    await asyncio.gather(*(one(i) for i in range(count)))


# -- the editor face (`python -m mcp_sidecar`) ----------------------------------------------------


def editor_burst() -> list[tuple[str, dict[str, Any]]]:
    requests: list[tuple[str, dict[str, Any]]] = []
    for server in ("old", "new"):
        requests += [
            ("mcp/callTool", {"id": f"{server}.echo", "arguments": {"text": "hi"}, "activate": True}),
            ("mcp/read", {"server": server, "uri": "notes://readme"}),
            (
                "mcp/complete",
                {"server": server, "template": "notes://{folder}/{name}", "argument": {"name": "folder", "value": "i"}},
            ),
            ("mcp/prompt/preview", {"server": server, "name": "review_code", "arguments": {"code": "x = 1"}}),
        ]
    return [
        *requests,
        ("mcp/discover", {"query": "echo text"}),
        ("mcp/command", {"line": "/mcp tools old"}),
        ("mcp/status", {}),
    ]


def staggered() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("mcp/auth/login", {"server": "web", "noBrowser": True}),
        ("mcp/server/get", {"server": "web"}),
        ("mcp/auth/logout", {"server": "web"}),
        (
            "mcp/read",
            {"server": "old", "template": "notes://{folder}/{name}", "arguments": {"folder": "a", "name": "b"}},
        ),
    ]


class Burst:
    def __init__(self, client: RawClient) -> None:
        self.client = client
        self.sent: dict[int, str] = {}

    async def send(self, method: str, params: dict[str, Any]) -> None:
        msg_id = 1000 + len(self.sent)
        self.sent[msg_id] = method
        await self.client.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    async def failures(self) -> list[str]:
        found = []
        for msg_id, method in self.sent.items():
            answer = await self.client.response(msg_id, ANSWER_LIMIT_S)
            error = answer.get("error") or {}
            code = (error.get("data") or {}).get("code")
            if code == "operation_failed" or error.get("code") == -32603:
                found.append(f"{method}: {json.dumps(error)[:300]}")
        return found


async def editor_start(tmp_path: Path, index: int, failures: list[str]) -> None:
    home = tmp_path / f"editor{index}"
    home.mkdir()
    write_config(home, servers(free_port()))
    async with raw_sidecar(home) as client:
        await client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _initialize()})
        await client.response(1, ANSWER_LIMIT_S)
        await client.notify("initialized", {})
        burst = Burst(client)
        loop = asyncio.get_running_loop()
        begun = loop.time()
        for method, params in editor_burst():
            await burst.send(method, params)
        for delay in (FIRST_S[index % len(FIRST_S)], *STAGGER_S):
            await asyncio.sleep(max(0.0, begun + delay * (1 + index % 3 / 10) - loop.time()))
            for method, params in staggered():
                await burst.send(method, params)
        failed = await burst.failures()
        failures += [f"start {index}: {f}" for f in failed]
        failures += [f"start {index} log: {line}" for line in unexpected_lines(client.stderr_text())]


def _initialize() -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": None,
        "capabilities": {},
        "initializationOptions": {"trustedWorkspace": False, "interactive": False},
    }


async def test_every_request_right_after_initialize_is_answered_without_operation_failed(tmp_path: Path) -> None:
    failures: list[str] = []
    await in_parallel(EDITOR_STARTS, lambda i: editor_start(tmp_path, i, failures))
    assert failures == []


# -- the gateway (`mcp-sidecar mcp`) ------------------------------------------------------------


async def gateway_requests(host: Client) -> list[str]:
    """Everything a host may send first, at once; what came back as an unexplained failure."""
    calls: list[Awaitable[Any]] = [
        host.list_tools(),
        host.call_tool("mcp_tools", {"query": "echo text"}),
        host.call_tool("mcp_tools", {"activate": ["old.echo", "new.echo"]}),
        host.call_tool("mcp_tools", {"read": {"server": "old", "uri": "notes://readme"}}),
        host.call_tool("mcp_tools", {"read": {"server": "new", "uri": "notes://changelog"}}),
        host.list_prompts(),
        host.get_prompt("old__review_code", {"code": "x = 1"}),
        host.list_resources(),
        host.read_resource("mcp-sidecar://new/notes://readme"),
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    failed = []
    for result in results:
        text = text_of(result) if isinstance(result, types.CallToolResult) else repr(result)
        if "operation_failed" in text or "unexpected error" in text or "Internal error" in text:
            failed.append(text[:300])
    return failed


async def gateway_start(tmp_path: Path, index: int, failures: list[str]) -> None:
    home = tmp_path / f"gateway{index}"
    home.mkdir()
    write_config(home, servers(free_port()))
    mode: Any = "legacy" if index % 2 == 0 else "auto"
    params = gateway_params(home, "--resources")
    async with Client(params, read_timeout_seconds=ANSWER_LIMIT_S, mode=mode) as host:
        failed = await gateway_requests(host)
    failures += [f"gateway {index} ({mode}): {f}" for f in failed]
    log = home / "gateway.log"
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    failures += [f"gateway {index} log: {line}" for line in unexpected_lines(text)]


async def test_the_gateways_first_requests_in_both_eras_are_answered_without_operation_failed(tmp_path: Path) -> None:
    failures: list[str] = []
    await in_parallel(GATEWAY_STARTS, lambda i: gateway_start(tmp_path, i, failures))
    assert failures == []


# -- the CLI (one command per process) -----------------------------------------------------------

CLI_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("call", "old.echo", '{"text": "hi"}'),
    ("call", "new.echo", '{"text": "hi"}'),
    ("read", "old", "notes://readme"),
    ("discover", "echo text"),
    ("complete", "new", "notes://{folder}/{name}", "folder", "i"),
    ("prompt", "old", "review_code", "code=x"),
    ("get", "web"),
    ("login", "web", "--no-browser"),
    ("run", "tools new"),
)


@pytest.mark.parametrize("command", CLI_COMMANDS, ids=lambda c: "-".join(c[:2]))
async def test_each_cli_command_right_after_start_never_answers_operation_failed(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, servers(free_port()))
    failures: list[str] = []

    async def start(index: int) -> None:
        run = await cli(home, *command, "--json", "-v")
        for stream in (run.stdout, run.stderr):
            if "operation_failed" in stream:
                failures.append(f"run {index}: {stream[-300:]}")
        failures.extend(f"run {index} log: {line}" for line in unexpected_lines(run.stderr))

    runs = -(-STARTS // len(CLI_COMMANDS)) if STARTS else 1
    await in_parallel(runs, start)
    assert failures == []
