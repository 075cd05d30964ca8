"""Prompt previews, accepted snapshots and prompt completion end to end.

One sidecar serves the module. `content` (content.py --prompts) serves the hostile and
unsupported prompts; `everything` is server-everything over stdio (simple-prompt,
args-prompt, completable-prompt, resource-prompt). The reload test runs last: it closes
every connection.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from support.servers import SERVER_EVERYTHING_JS, fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

needs_server_everything = pytest.mark.skipif(
    not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci` to install server-everything"
)
LABEL = "Prompt content from the MCP server: roles are the server's labels, not conversation turns or instructions."
CONTROLS = ("\x1b", "\x07", "\r", "\x08", "\x9b")


@dataclass(frozen=True, slots=True)
class Env:
    sidecar: SidecarClient
    home: Path

    async def preview(self, server: str, prompt: str, **arguments: Any) -> dict[str, Any]:
        params = {"server": server, "name": prompt, "arguments": arguments}
        result: dict[str, Any] = await self.sidecar.request("mcp/prompt/preview", params)
        return result

    async def preview_fails(self, server: str, prompt: str, **arguments: Any) -> dict[str, Any]:
        params = {"server": server, "name": prompt, "arguments": arguments}
        return diagnostic_of(await self.sidecar.error("mcp/prompt/preview", params))

    async def use(self, preview_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.sidecar.request("mcp/prompt/use", {"previewId": preview_id})
        return result

    async def fails(self, method: str, preview_id: str) -> dict[str, Any]:
        return diagnostic_of(await self.sidecar.error(method, {"previewId": preview_id}))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    servers: dict[str, Any] = {"content": fixture_stdio("content.py", "stdio", "--prompts")}
    if SERVER_EVERYTHING_JS.is_file():
        servers["everything"] = {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}
    write_config(home, servers)
    async with start_sidecar(home) as sidecar:
        yield Env(sidecar, home)


def texts(result: dict[str, Any]) -> list[str]:
    return [m["content"]["text"] for m in result["messages"]]


# -- server-everything -----------------------------------------------------------------------


@needs_server_everything
async def test_a_simple_prompt_previews_then_is_used_once(env: Env) -> None:
    preview = await env.preview("everything", "simple-prompt")
    assert preview["previewId"].startswith("pv_")
    assert (preview["server"], preview["name"], preview["messageCount"], preview["untrusted"]) == (
        "everything",
        "simple-prompt",
        1,
        True,
    )
    assert preview["messages"] == [
        {"index": 0, "role": "user", "content": {"type": "text", "text": "This is a simple prompt without arguments."}}
    ]
    assert preview["text"].splitlines() == [
        "mcp prompt · everything · simple-prompt · 1 message",
        LABEL,
        "--- message 1 · role user",
        "This is a simple prompt without arguments.",
    ]
    used = await env.use(preview["previewId"])
    assert used["accepted"] is True
    assert {k: used[k] for k in ("server", "name", "messageCount", "messages", "text")} == {
        k: preview[k] for k in ("server", "name", "messageCount", "messages", "text")
    }
    again = await env.fails("mcp/prompt/use", preview["previewId"])
    assert (again["code"], again["operation"]) == ("preview_not_found", "prompt use")
    # Using a prompt activates nothing.
    assert (await env.sidecar.request("mcp/activeTools", {}))["tools"] == []


@needs_server_everything
async def test_arguments_are_sent_and_checked_against_the_catalog(env: Env) -> None:
    preview = await env.preview("everything", "args-prompt", city="Paris", state="TX")
    assert texts(preview) == ["What's weather in Paris, TX?"]
    only_city = await env.preview("everything", "args-prompt", city="Oslo")
    assert texts(only_city) == ["What's weather in Oslo?"]
    missing = await env.preview_fails("everything", "args-prompt", state="TX")
    assert (missing["code"], missing["message"]) == ("prompt_invalid", "Missing required argument(s): city.")
    extra = await env.preview_fails("everything", "args-prompt", city="Oslo", country="NO")
    assert (extra["code"], extra["message"]) == ("prompt_invalid", "Not an argument of that prompt: country.")
    unknown = await env.preview_fails("everything", "no-such-prompt")
    assert (unknown["code"], unknown["server"]) == ("prompt_not_found", "everything")
    too_big = await env.preview_fails("everything", "args-prompt", city="x" * (65 * 1024))
    assert (too_big["code"], too_big["message"]) == ("prompt_invalid", "The prompt arguments exceed 64 KiB.")
    not_string = await env.sidecar.error(
        "mcp/prompt/preview", {"server": "everything", "name": "args-prompt", "arguments": {"city": 3}}
    )
    assert (not_string.code, diagnostic_of(not_string)["code"]) == (-32602, "invalid_params")


@needs_server_everything
async def test_prompt_arguments_complete_with_a_prompt_reference(env: Env) -> None:
    department = await env.sidecar.request(
        "mcp/complete",
        {"server": "everything", "prompt": "completable-prompt", "argument": {"name": "department", "value": "E"}},
    )
    assert (department["prompt"], department["values"], department["untrusted"]) == (
        "completable-prompt",
        ["Engineering"],
        True,
    )
    name = await env.sidecar.request(
        "mcp/complete",
        {
            "server": "everything",
            "prompt": "completable-prompt",
            "argument": {"name": "name", "value": ""},
            "arguments": {"department": "Sales"},
        },
    )
    assert name["values"] == ["David", "Eve", "Frank"]
    preview = await env.preview("everything", "completable-prompt", department="Sales", name="Eve")
    assert texts(preview) == ["Please promote Eve to the head of the Sales team."]


@needs_server_everything
async def test_an_embedded_text_resource_is_a_labelled_text_block(env: Env) -> None:
    preview = await env.preview("everything", "resource-prompt", resourceType="Text", resourceId="1")
    assert preview["messageCount"] == 2
    embedded = preview["messages"][1]
    assert embedded["resource"] == {"uri": "demo://resource/dynamic/text/1", "mimeType": "text/plain"}
    assert embedded["content"]["text"].startswith("Resource 1: This is a plaintext resource")
    assert "--- message 2 · role user · embedded resource demo://resource/dynamic/text/1 (text/plain)" in (
        preview["text"].splitlines()
    )
    blob = await env.preview_fails("everything", "resource-prompt", resourceType="Blob", resourceId="1")
    assert blob["code"] == "prompt_unsupported"


@needs_server_everything
async def test_the_prompt_command_previews(env: Env) -> None:
    result = await env.sidecar.request("mcp/command", {"line": "/mcp prompt everything args-prompt city='New York'"})
    assert result["command"] == "prompt"
    assert texts(result["data"]) == ["What's weather in New York?"]
    assert result["text"].endswith(
        f"Preview {result['data']['previewId']}: use it (mcp/prompt/use) or discard it (mcp/prompt/discard)."
    )
    bad = diagnostic_of(await env.sidecar.error("mcp/command", {"line": "prompt everything args-prompt city"}))
    assert bad["code"] == "command_invalid"


# -- hostile and unsupported fixture prompts ---------------------------------------------------


async def test_terminal_control_sequences_are_removed(env: Env) -> None:
    preview = await env.preview("content", "terminal")
    assert texts(preview) == [
        # A carriage return is a line break; an 8-bit CSI loses its introducer only.
        "red alert and a link done\nsafe text\nEVIL OVERWRITE\nnaïve café — 日本語\tcolumn31m",
        "ok",
    ]
    assert [m["role"] for m in preview["messages"]] == ["user", "assistant"]
    used = await env.use(preview["previewId"])
    dumped = json.dumps(used, ensure_ascii=False)
    assert not any(c in dumped for c in CONTROLS)
    assert "--- message 2 · role assistant" in used["text"].splitlines()


async def test_an_embedded_resource_is_sanitised_and_labelled(env: Env) -> None:
    preview = await env.preview("content", "embedded")
    assert preview["messages"][1] == {
        "index": 1,
        "role": "user",
        "resource": {"uri": "data://plain.txt", "mimeType": "text/plain"},
        "content": {"type": "text", "text": "line one\nline two"},
    }


@pytest.mark.parametrize(
    ("prompt", "code", "message"),
    [
        (
            "image",
            "prompt_unsupported",
            "Message 2 holds content of type 'image', which the sidecar cannot show as text.",
        ),
        ("blob", "prompt_unsupported", "Message 1 holds a binary resource, which the sidecar cannot show as text."),
        ("huge", "prompt_too_large", "The prompt exceeds 2,000 lines or 50 KiB; it is refused whole."),
        (
            "system_role",
            "prompt_unsupported",
            "The server's prompt does not fit MCP prompt messages (role user or assistant, known content).",
        ),
    ],
)
async def test_unrepresentable_prompts_are_refused_whole(env: Env, prompt: str, code: str, message: str) -> None:
    spill_dir = env.home / "cache" / "spill"
    before = sorted(spill_dir.iterdir()) if spill_dir.exists() else []
    diag = await env.preview_fails("content", prompt)
    assert (diag["code"], diag["operation"], diag["server"], diag["message"]) == (code, "prompt", "content", message)
    assert (sorted(spill_dir.iterdir()) if spill_dir.exists() else []) == before
    # The session survives a refused prompt.
    assert texts(await env.preview("content", "topic", subject="tea")) == ["Tell me about tea."]


async def test_discard_drops_the_preview(env: Env) -> None:
    preview = await env.preview("content", "topic", subject="tea")
    discarded = await env.sidecar.request("mcp/prompt/discard", {"previewId": preview["previewId"]})
    assert discarded == {"previewId": preview["previewId"], "server": "content", "name": "topic", "discarded": True}
    assert (await env.fails("mcp/prompt/use", preview["previewId"]))["code"] == "preview_not_found"
    assert (await env.fails("mcp/prompt/discard", preview["previewId"]))["code"] == "preview_not_found"
    assert (await env.fails("mcp/prompt/use", "pv_made_up"))["code"] == "preview_not_found"


async def test_disconnection_invalidates_pending_previews(env: Env) -> None:
    preview = await env.preview("content", "topic", subject="tea")
    await env.sidecar.request("mcp/server/reconnect", {"server": "content"})
    assert (await env.fails("mcp/prompt/use", preview["previewId"]))["code"] == "preview_not_found"


async def test_the_cli_prints_a_preview_or_the_snapshot(env: Env) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_sidecar",
        "--json",
        "prompt",
        "content",
        "topic",
        "subject=cli",
        "--use",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "MCP_SIDECAR_HOME": str(env.home)},
        cwd=env.home,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    snapshot = json.loads(out)
    assert (snapshot["accepted"], snapshot["messageCount"], texts(snapshot)) == (True, 1, ["Tell me about cli."])


async def test_reload_invalidates_pending_previews(env: Env) -> None:
    preview = await env.preview("content", "topic", subject="tea")
    await env.sidecar.request("mcp/config/reload", {})
    diag = await env.fails("mcp/prompt/use", preview["previewId"])
    assert (diag["code"], diag["operation"]) == ("preview_not_found", "prompt use")
