"""An activation's answer is true when the host's model reads it.

Claude Code and Gemini CLI list their tools again after `list_changed`, but build the model's
next request from the tool result before that list is in: the answer naming `basic__echo` waits
until the host's `tools/list` has been answered. Codex (by default) never lists again: after the
wait, its answer says to call the tools with `mcp_call`, which every host lists from the start.
Proxy mode's list never changes with an activation, so it sends no `list_changed` for one.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from support.rawhost import TOOLS_CHANGED, RawHost, modern, raw_gateway
from support.servers import fixture_path
from support.sidecar import restart_engine, wait_until, write_config

ACTIVATE = {"name": "mcp_tools", "arguments": {"activate": ["basic.echo"]}}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    write_config(path, {"basic": {"command": sys.executable, "args": [str(fixture_path("basic.py")), "stdio"]}})
    return path


@contextlib.asynccontextmanager
async def relisting(host: RawHost, params: Any = None) -> AsyncIterator[None]:
    task = asyncio.ensure_future(host.relist(params))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def _tools_listed(message: dict[str, Any]) -> bool:
    return "tools" in (message.get("result") or {})


async def test_the_answer_waits_for_the_hosts_new_list(home: Path) -> None:
    async with raw_gateway(home) as host:
        await host.handshake()
        async with relisting(host):
            request = host.request("tools/call", ACTIVATE)
            answer = await host.answer(request)
            text = _text(answer["result"])
            assert "basic.echo → basic__echo · loaded" in text
            assert "mcp_call" not in text
            relisted = host.index(lambda m: _tools_listed(m) and "basic__echo" in str(m))
            assert relisted < host.index(lambda m: m.get("id") == request)  # listed before the answer came
        called = await host.result("tools/call", {"name": "basic__echo", "arguments": {"text": "hi"}})
        assert _text(called) == "hi"


async def test_a_2026_host_listening_for_changes_gets_the_same_truth(home: Path) -> None:
    async with raw_gateway(home) as host:
        host.request("subscriptions/listen", modern({"notifications": {"toolsListChanged": True}}))
        await host.wait_for("the listen acknowledgement", lambda m: "acknowledged" in str(m.get("method")))
        async with relisting(host, modern()):
            answer = await host.answer(host.request("tools/call", modern(ACTIVATE)))
        assert "basic.echo → basic__echo · loaded" in _text(answer["result"])
        assert host.notifications(TOOLS_CHANGED)
        assert len(host.notifications("notifications/subscriptions/acknowledged")) == 1  # the front's, not twice


async def test_a_host_that_never_lists_again_is_told_to_use_mcp_call(home: Path) -> None:
    async with raw_gateway(home, "--list-wait", "0.3") as host:
        await host.handshake()
        listed = await host.result("tools/list")
        assert [t["name"] for t in listed["tools"]] == ["mcp_tools", "mcp_call"]  # from the start
        text = _text(await host.result("tools/call", ACTIVATE))
        assert "basic__echo" not in text
        assert " ✔ basic.echo · loaded" in text
        assert "Your host has not added the loaded tools to your tools: call each with mcp_call" in text
        assert "Call each loaded tool with mcp_call" not in text  # said once
        assert 'mcp_call({"id": "basic.echo", "arguments": {…}})' in text
        called = await host.result(
            "tools/call", {"name": "mcp_call", "arguments": {"id": "basic.echo", "arguments": {"text": "hi"}}}
        )
        assert _text(called) == "hi"
        found = _text(await host.result("tools/call", {"name": "mcp_tools", "arguments": {"query": "echo text"}}))
        assert "[loaded]" in found
        assert "[loaded as" not in found
        assert "callable now with mcp_call" in found


async def test_proxy_mode_sends_no_list_changed_for_an_activation(home: Path) -> None:
    async with raw_gateway(home, "--tools", "proxy") as host:
        await host.handshake()
        text = _text(await host.result("tools/call", ACTIVATE))
        assert "mcp_call" in text
        await host.result("ping")  # anything told with the activation has been written by now
        assert host.notifications(TOOLS_CHANGED) == []
        listed = await host.result("tools/list")
        assert [t["name"] for t in listed["tools"]] == ["mcp_tools", "mcp_call"]


async def test_an_activation_from_the_cache_starts_its_server_at_once(tmp_path: Path) -> None:
    """So the host's first call does not wait for a server start that could have begun earlier."""
    home = tmp_path / "home"
    started = tmp_path / "started.txt"
    args = [str(fixture_path("basic.py")), "stdio", "--counter-file", str(started)]
    write_config(home, {"basic": {"command": sys.executable, "args": args}})
    async with raw_gateway(home, "--list-wait", "0") as host:
        await host.handshake()
        await host.result("tools/call", {"name": "mcp_tools", "arguments": {"query": "echo"}})  # cached on disk
    assert len(started.read_text().split()) == 1
    await restart_engine(home)  # the next gateway starts from the disk cache
    async with raw_gateway(home, "--list-wait", "0") as host:
        await host.handshake()
        text = _text(await host.result("tools/call", ACTIVATE))
        assert "basic.echo → basic__echo · loaded" in text
        await wait_until(lambda: len(started.read_text().split()) == 2, what="the server started after activation")


async def test_a_host_that_lists_only_after_the_answer_gets_native_names_from_then_on(home: Path) -> None:
    """Codex with `mcp_tool_list_changed` lists its tools again once an activation's answer has
    arrived, never while it waits: the first answer says `mcp_call`, the next ones need not wait."""
    async with raw_gateway(home, "--list-wait", "0.3") as host:
        await host.handshake()
        first = _text(await host.result("tools/call", ACTIVATE))
        assert "call each with mcp_call" in first
        listed = await host.result("tools/list")  # as the answer arrived
        assert "basic__echo" in [t["name"] for t in listed["tools"]]
        second = _text(await host.result("tools/call", {"name": "mcp_tools", "arguments": {"activate": ["basic.add"]}}))
        assert "basic.add → basic__add · loaded" in second
        assert "mcp_call" not in second


def _ticks(pid: int) -> int:
    """When a process was created, in clock ticks since the machine booted (from /proc)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="reads /proc")
async def test_a_query_waiting_for_the_sdk_starts_its_servers_meanwhile(tmp_path: Path) -> None:
    """A first query comes while the SDK is still being imported: its server starts then, not after."""
    home = tmp_path / "home"
    started = tmp_path / "started.txt"
    args = [str(fixture_path("basic.py")), "stdio", "--counter-file", str(started)]
    write_config(home, {"basic": {"command": sys.executable, "args": args}})
    async with raw_gateway(home) as host:
        launched = time.time() - (time.monotonic() - host.started)  # the wall clock when it was started
        await host.handshake()
        found = _text(await host.result("tools/call", {"name": "mcp_tools", "arguments": {"query": "echo"}}))
        assert "basic.echo" in found
        server = int(started.read_text().split()[0])
        spawned_after = (_ticks(server) - _ticks(host.proc.pid)) / os.sysconf("SC_CLK_TCK")
    log = (home / "gateway.log").read_text()
    stamp = next(line[:23] for line in log.splitlines() if "the SDK is in" in line)
    sdk_after = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").astimezone().timestamp() - launched
    assert spawned_after < sdk_after, (spawned_after, sdk_after)
