"""`mcp-sidecar mcp` over stdio with the SDK's own `Client` as the host, in both protocol eras.

Every test starts the gateway as a real process with real fixture servers upstream: list →
activate → `list_changed` → the native tool with its schema → call it; deactivation by a
reload; a changed tool; names that need a hash; proxy mode; prompts; durable sessions.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.gateway import gateway, text_of, tool_names
from support.servers import fixture_path
from support.sidecar import write_config


def stdio(script: str, *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(fixture_path(script)), "stdio", *args], **extra}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    write_config(path, {"basic": stdio("basic.py", "--prompts")})
    return path


@pytest.mark.parametrize("legacy", [True, False], ids=["handshake", "2026-07-28"])
async def test_activate_then_call_the_native_tool(home: Path, legacy: bool) -> None:
    async with gateway(home, legacy=legacy) as (host, changes):
        listed = (await host.list_tools()).tools
        assert [t.name for t in listed] == ["mcp_tools", "mcp_call"]
        assert "basic" in (listed[0].description or "")  # the server directory
        found = text_of(await host.call_tool("mcp_tools", {"query": "echo text back"}))
        assert "basic.echo" in found
        before = changes.count
        activated = await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        assert not activated.is_error
        assert " ✔ basic.echo → basic__echo · loaded" in text_of(activated)
        assert "   basic__echo(text: string) — Echo the given text back." in text_of(activated)
        await changes.next(before)
        tools = {t.name: t for t in (await host.list_tools()).tools}
        assert set(tools) == {"mcp_tools", "mcp_call", "basic__echo"}
        echo = tools["basic__echo"]
        assert echo.input_schema["required"] == ["text"]
        assert echo.input_schema["properties"]["text"]["type"] == "string"
        assert echo.output_schema is not None  # the server's own output schema, passed through
        assert (echo.description or "").startswith("[basic] Echo the given text back.")
        result = await host.call_tool("basic__echo", {"text": "hi"})
        assert not result.is_error
        assert text_of(result) == "hi"
        assert result.structured_content == {"result": "hi"}


async def test_a_reload_that_disables_the_server_removes_its_tools(home: Path) -> None:
    async with gateway(home) as (host, changes):
        await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        await changes.next(0)
        assert "basic__echo" in await tool_names(host)
        seen = changes.count
        write_config(home, {"basic": stdio("basic.py", "--prompts", disabled=True)})
        await changes.next(seen)
        assert await tool_names(host) == ["mcp_tools", "mcp_call"]
        refused = await host.call_tool("basic__echo", {"text": "hi"})
        assert refused.is_error
        assert text_of(refused) == (
            "basic: [tool_not_active] basic__echo was removed: its server was disabled. "
            "Ask the user to run `mcp-sidecar run enable basic`."
        )


async def test_a_changed_tool_leaves_the_list_and_is_never_called_with_its_old_schema(home: Path) -> None:
    async with gateway(home) as (host, changes):
        await host.call_tool("mcp_tools", {"activate": ["basic.echo", "basic.redefine"]})
        await changes.next(0)
        assert set(await tool_names(host)) == {"mcp_tools", "mcp_call", "basic__echo", "basic__redefine"}
        seen = changes.count
        redefined = await host.call_tool("basic__redefine", {"mode": "change"})
        assert not redefined.is_error
        await changes.next(seen)  # the server's list_changed, checked: echo changed, so it went
        assert set(await tool_names(host)) == {"mcp_tools", "mcp_call", "basic__redefine"}
        refused = await host.call_tool("basic__echo", {"text": "hi"})
        assert refused.is_error
        assert text_of(refused).endswith(
            "basic__echo was removed: its server changed it. Activate it again to see what it takes now: "
            'mcp_tools({"activate": ["basic.echo"]})'
        )
        seen = changes.count
        again = await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        assert not again.is_error
        await changes.next(seen)
        echo = {t.name: t for t in (await host.list_tools()).tools}["basic__echo"]
        assert "prefix" in echo.input_schema["required"]  # the new definition, in full


async def test_names_a_host_would_refuse_get_a_stable_hash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    long_name = "fetch_" + "x" * 70
    tools = ["--tool", "get.item:Get one item by id.", "--tool", "get_item:Get one item, the other way."]
    write_config(home, {"basic": stdio("basic.py", *tools, "--tool", f"{long_name}:A tool with a long name.")})
    ids = ["basic.get.item", "basic.get_item", f"basic.{long_name}"]
    async with gateway(home) as (host, changes):
        activated = text_of(await host.call_tool("mcp_tools", {"activate": ids}))
        await changes.next(0)
        names = [n for n in await tool_names(host) if n not in ("mcp_tools", "mcp_call")]
        assert len(names) == 3
        assert "basic__get_item" in names
        assert all(len(n) <= 64 and n.replace("_", "").replace("-", "").isalnum() for n in names)
        assert len(set(names)) == 3
        for name in names:
            assert f"→ {name}" in activated  # the activation text states every native name
            result = await host.call_tool(name, {"query": "q"})
            assert not result.is_error, text_of(result)
    async with gateway(home) as (host, changes):
        await host.call_tool("mcp_tools", {"activate": list(reversed(ids))})
        await changes.next(0)
        again = [n for n in await tool_names(host) if n not in ("mcp_tools", "mcp_call")]
        assert sorted(again) == sorted(names)  # the same names, whatever the order


async def test_proxy_mode_lists_mcp_tools_and_mcp_call_only(home: Path) -> None:
    async with gateway(home, "--tools", "proxy") as (host, _changes):
        assert await tool_names(host) == ["mcp_tools", "mcp_call"]
        refused = await host.call_tool("mcp_call", {"id": "basic.echo", "arguments": {"text": "hi"}})
        assert refused.is_error
        assert "tool_not_active" in text_of(refused)
        activated = text_of(await host.call_tool("mcp_tools", {"activate": ["basic.echo"]}))
        assert "mcp_call" in activated
        assert await tool_names(host) == ["mcp_tools", "mcp_call"]
        result = await host.call_tool("mcp_call", {"id": "basic.echo", "arguments": {"text": "hi"}})
        assert text_of(result) == "hi"
        bad = await host.call_tool("mcp_call", {"id": 3})
        assert bad.is_error
        assert "invalid_params" in text_of(bad)
        native = await host.call_tool("basic__echo", {"text": "hi"})
        assert native.is_error  # no native names in proxy mode


async def test_prompts_are_listed_namespaced_and_fetched_sanitised(home: Path) -> None:
    async with gateway(home) as (host, changes):
        assert changes.prompts is not None
        first = (await host.list_prompts()).prompts
        assert first == []  # a first start answers at once, with no prompts listed before, then lists them
        await changes.prompts.next(0)
        prompts = {p.name: p for p in (await host.list_prompts()).prompts}
        assert {"basic__review_code", "basic__summarize_notes"} <= set(prompts)
        arguments = {a.name: a.required for a in prompts["basic__review_code"].arguments or []}
        assert arguments["code"] is True
        got = await host.get_prompt("basic__review_code", {"code": "x = 1"})
        [message] = got.messages
        assert message.role == "user"
        assert "x = 1" in getattr(message.content, "text", "")
        with pytest.raises(Exception, match="code"):
            await host.get_prompt("basic__review_code", {})  # a required argument missing
    for legacy in (True, False):  # the next start answers with what was listed, before any server starts
        async with gateway(home, legacy=legacy) as (host, changes):
            again = {p.name for p in (await host.list_prompts()).prompts}
            assert {"basic__review_code", "basic__summarize_notes"} <= again


async def test_server_text_reaches_the_host_sanitised(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, {"hostile": stdio("hostile.py")})
    async with gateway(home) as (host, changes):
        await host.call_tool("mcp_tools", {"activate": ["hostile.clip"]})
        await changes.next(0)
        clip = {t.name: t for t in (await host.list_tools()).tools}["hostile__clip"]
        shown = f"{clip.title}{clip.description}{json.dumps(clip.input_schema)}"
        result = text_of(await host.call_tool("hostile__clip", {}))
        for text in (shown, result):
            assert "\x1b" not in text
            assert "\u202e" not in text
            assert not any(0xE0000 <= ord(c) <= 0xE007F for c in text)


async def test_a_durable_session_restores_its_tools_after_a_restart(home: Path) -> None:
    async with gateway(home, "--session", "work") as (host, changes):
        await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        await changes.next(0)
    saved = home / "cache" / "gateway-sessions" / "work.json"
    kept = json.loads(saved.read_text())
    assert list(kept) == ["tools"]
    assert list(kept["tools"]) == ["basic.echo"]
    assert re.fullmatch(r"[0-9a-f]{64}", kept["tools"]["basic.echo"])  # a digest, no schema
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    async with gateway(home, "--session", "work") as (host, _changes):
        assert set(await tool_names(host)) == {"mcp_tools", "mcp_call", "basic__echo"}
        assert text_of(await host.call_tool("basic__echo", {"text": "back"})) == "back"
    async with gateway(home) as (host, _changes):
        assert await tool_names(host) == ["mcp_tools", "mcp_call"]  # without --session, a fresh one
    # The server's definition changed while the gateway was down: it is not restored unseen.
    saved.write_text(json.dumps({"tools": {"basic.echo": "0" * 64}}))
    async with gateway(home, "--session", "work") as (host, _changes):
        assert await tool_names(host) == ["mcp_tools", "mcp_call"]
        refused = text_of(await host.call_tool("basic__echo", {"text": "x"}))
        assert "its server changed it. Activate it again" in refused


def test_trusting_a_project_needs_the_project_named(home: Path) -> None:
    env = {**os.environ, "MCP_SIDECAR_HOME": str(home)}
    command = [sys.executable, "-m", "mcp_sidecar", "mcp", "--trust-project"]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--trust-project needs --project DIR" in done.stderr
    assert done.stdout == ""


async def test_an_unknown_tool_name_is_a_tool_error_with_what_to_do(home: Path) -> None:
    async with gateway(home) as (host, _changes):
        result = await host.call_tool("basic__echo", {"text": "hi"})
        assert result.is_error
        assert "mcp_tools" in text_of(result)
        await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        by_id = await host.call_tool("basic.echo", {"text": "hi"})  # the id, as discovery spells it
        assert text_of(by_id) == "[tool_not_found] 'basic.echo' is loaded: call it as 'basic__echo'."
        guessed = await host.call_tool("basic__add", {"a": 1, "b": 2})
        assert text_of(guessed) == (
            "[tool_not_found] 'basic__add' is not activated yet: "
            'mcp_tools({"activate": ["basic.add"]}), then call basic__add.'
        )
        as_native = text_of(await host.call_tool("mcp_tools", {"activate": ["basic__add"]}))
        assert " ✔ basic.add → basic__add · loaded" in as_native  # a native name taken for an id
        found = text_of(await host.call_tool("mcp_tools", {"query": "add two integers"}))
        assert "[loaded as basic__add]" in found
        bad = await host.call_tool("mcp_tools", {"query": "x", "activate": ["basic.echo"]})
        assert bad.is_error
        assert "exactly one" in text_of(bad)


async def test_a_project_server_needs_trust_as_on_every_entry_point(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": stdio("basic.py")}}))
    async with gateway(home, project=project) as (host, _changes):
        refused = await host.call_tool("mcp_tools", {"activate": ["proj.echo"]})
        assert refused.is_error
        assert "proj__echo" not in await tool_names(host)
    async with gateway(home, "--trust-project", project=project) as (host, changes):
        loaded = await host.call_tool("mcp_tools", {"activate": ["proj.echo"]})
        assert not loaded.is_error, text_of(loaded)
        await changes.next(0)
        assert "proj__echo" in await tool_names(host)
