"""Smoke tests for the fixture MCP servers, using the SDK client directly."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

from support.servers import FIXTURES, http_server, server_everything_js

Mode = Literal["legacy", "auto"]
BASIC_TOOLS = {"echo", "add", "get_env", "fail", "slow", "crash", "cwd", "redefine"}
CONNECT_TIMEOUT = 30.0


def stdio_params(script: str, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(FIXTURES / script), *args], env=env)


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


async def list_all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools += page.tools
        if (cursor := page.next_cursor) is None:
            return tools


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_basic_stdio(mode: Mode) -> None:
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(stdio_params("basic.py", "stdio", env={"SIDECAR_PROBE": "ok"}), mode=mode) as client:
            tools = await list_all_tools(client)
            assert {tool.name for tool in tools} == BASIC_TOOLS
            descriptions = {tool.name: tool.description for tool in tools}
            assert descriptions["echo"] == "Echo the given text back."
            assert descriptions["add"] == "Add two integers."

            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert not result.is_error
            assert result.structured_content == {"result": 5}
            assert isinstance(result.content[0], types.TextContent)
            assert result.content[0].text == "5"

            env_result = await client.call_tool("get_env", {"name": "SIDECAR_PROBE"})
            assert isinstance(env_result.content[0], types.TextContent)
            assert env_result.content[0].text == "ok"

            failed = await client.call_tool("fail", {"message": "boom"})
            assert failed.is_error
            assert isinstance(failed.content[0], types.TextContent)
            assert "boom" in failed.content[0].text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_leaky_sends_back_its_secrets_in_every_form(mode: Mode) -> None:
    """leaky.py (the results audit's server) in both eras: a secret in every form, and its headers over HTTP."""
    secret = 'Zq8"k/+x'
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(stdio_params("leaky.py", "stdio", env={"LEAK_A": secret}), mode=mode) as client:
            tools = await list_all_tools(client)
            assert {tool.description for tool in tools} == {f"Sends back its secrets (like {secret})."}
            result = await client.call_tool("leak_text", {})
            assert isinstance(result.content[0], types.TextContent)
            assert "LEAK_A url-all: Zq8%22k%2F%2Bx\ninlineZq8%22k%2F%2Bxinline" in result.content[0].text
            read = await client.read_resource("leak://value/LEAK_A")
            assert isinstance(read.contents[0], types.TextResourceContents)
            assert read.contents[0].text == secret
    with http_server("leaky.py") as url, anyio.fail_after(CONNECT_TIMEOUT):
        transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers={"X-Leak-Key": secret}))
        async with Client(transport, mode=mode) as client:
            read = await client.read_resource("leak://value/header-x-leak-key")
            assert isinstance(read.contents[0], types.TextResourceContents)
            assert read.contents[0].text == secret


@pytest.mark.asyncio
@pytest.mark.parametrize(("mode", "expected_version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_basic_http(mode: Mode, expected_version: str) -> None:
    with http_server("basic.py") as url, anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(url, mode=mode) as client:
            assert client.protocol_version == expected_version
            tools = await list_all_tools(client)
            assert {tool.name for tool in tools} == BASIC_TOOLS
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}
            echoed = await client.call_tool("echo", {"text": "hi"})
            assert isinstance(echoed.content[0], types.TextContent)
            assert echoed.content[0].text == "hi"


@pytest.mark.asyncio
async def test_paginate_and_synthetic_tools() -> None:
    params = stdio_params("basic.py", "stdio", "--paginate", "2", "--tools-count", "5")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(params, mode="legacy") as client:
            first = await client.list_tools(cache_mode="bypass")
            assert len(first.tools) == 2
            assert first.next_cursor is not None
            tools = await list_all_tools(client)
            names = [tool.name for tool in tools]
            assert len(names) == len(set(names)) == len(BASIC_TOOLS) + 5
            synthetic = [tool for tool in tools if tool.name.startswith("synthetic_")]
            assert [tool.name for tool in synthetic] == [f"synthetic_{i:04d}" for i in range(5)]
            assert len({tool.description for tool in synthetic}) == 5
            with pytest.raises(MCPError):
                await client.list_tools(cursor="not-a-cursor", cache_mode="bypass")


@pytest.mark.asyncio
async def test_redefine_change_legacy_sends_list_changed() -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(stdio_params("basic.py", "stdio"), mode="legacy", message_handler=on_message) as client:
            assert client.server_capabilities is not None
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed
            before = {tool.name: tool for tool in await list_all_tools(client)}
            assert "prefix" not in before["echo"].input_schema.get("properties", {})

            result = await client.call_tool("redefine", {"mode": "change"})
            assert not result.is_error
            await changed.wait()

            after = {tool.name: tool for tool in await list_all_tools(client)}
            assert "prefix" in after["echo"].input_schema["required"]
            assert after["echo"].input_schema != before["echo"].input_schema

            await client.call_tool("redefine", {"mode": "remove"})
            await client.call_tool("redefine", {"mode": "add"})
            names = {tool.name for tool in await list_all_tools(client)}
            assert "add" not in names
            assert "extra" in names


@pytest.mark.asyncio
async def test_redefine_change_modern_listen_stream() -> None:
    with http_server("basic.py") as url, anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(url, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed
                result = await client.call_tool("redefine", {"mode": "change"})
                assert not result.is_error
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        break
            after = {tool.name: tool for tool in await list_all_tools(client)}
            assert "prefix" in after["echo"].input_schema["required"]


@pytest.mark.asyncio
async def test_crash_on_start_fails_to_connect() -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        with anyio.fail_after(CONNECT_TIMEOUT):
            with pytest.raises(BaseException) as excinfo:  # noqa: PT011 - SDK wraps it in ExceptionGroups
                async with Client(stdio_client(stdio_params("crash_on_start.py"), errlog=errlog), mode="legacy"):
                    pass
        leaves = list(_leaves(excinfo.value))
        assert any(isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED for leaf in leaves), leaves
        errlog.seek(0)
        assert "fatal: startup failed" in errlog.read()


def test_server_everything_installed() -> None:
    path = server_everything_js()
    if path is None:
        pytest.skip("run `npm ci` in tests/ to install server-everything")
    assert path.name == "index.js"
