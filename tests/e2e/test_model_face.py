"""What a model reads from `mcp_tools` (`mcp/modelTool/invoke`), end to end against real servers.

Each test asserts the exact text a model receives: loaded means callable (a tool whose
definition changed since activation is `○` with "activate again"), resources and templates
carry their exact read calls (and those calls work as written), prompts are for people and
never push tools and resources out, and a long query is ranked on its head.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mcp_sidecar.output.activation_text import CALL_HINT, tokens_line
from mcp_sidecar.output.discovery_text import LOADED_NOTE
from support.discovery import status_row
from support.servers import basic_stdio, fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

CALL = re.compile(r"mcp_tools\((\{.*\})\)$")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def sidecar(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SidecarClient]:
    home = tmp_path_factory.mktemp("home")
    project = tmp_path_factory.mktemp("project")
    write_config(
        home,
        {
            "basic": basic_stdio(),
            "notes": basic_stdio("--resources", "--prompts"),
            "mutable": basic_stdio(),
        },
    )
    async with start_sidecar(home, project=project, trusted=True) as client:
        yield client


async def invoke(sidecar: SidecarClient, arguments: dict[str, Any], session: str) -> dict[str, Any]:
    result: dict[str, Any] = await sidecar.request("mcp/modelTool/invoke", {"arguments": arguments, "session": session})
    assert result["text"] == result["details"].get("text", result["text"])
    return result


def calls_in(text: str) -> list[dict[str, Any]]:
    """The `mcp_tools({...})` calls a text offers, decoded as a model would copy them."""
    found = (CALL.search(line.strip()) for line in text.splitlines())
    return [json.loads(m.group(1)) for m in found if m]


async def test_a_tool_changed_since_activation_is_not_shown_as_loaded(sidecar: SidecarClient) -> None:
    session = "changed"
    loaded = await invoke(sidecar, {"activate": ["mutable.echo", "mutable.redefine"]}, session)
    assert [r["status"] for r in loaded["details"]["results"]] == ["loaded", "loaded"]
    query = {"query": "echo", "server": "mutable", "kind": "tools", "limit": 1}
    before = await invoke(sidecar, query, session)
    assert before["text"].splitlines() == [
        'mcp discover "echo"',
        " ● mutable.echo(text) [loaded] — Echo the given text back.",
        LOADED_NOTE,
    ]
    changed = await sidecar.request(
        "mcp/callTool", {"id": "mutable.redefine", "arguments": {"mode": "change"}, "session": session}
    )
    assert changed["isError"] is False
    after = before
    for _ in range(200):  # the server's list_changed reaches the sidecar after the call's answer
        after = await invoke(sidecar, query, session)
        if after["text"] != before["text"]:
            break
        await asyncio.sleep(0.05)
    assert after["text"].splitlines() == [
        'mcp discover "echo"',
        " ○ mutable.echo(text, prefix) — changed since activation: activate again — Echo the given text back, "
        "prefixed with prefix.",
        'Activate the tools you need by their exact ids: mcp_tools({"activate": ["mutable.echo"]})',
    ]
    [row] = after["details"]["candidates"]
    assert (row["loaded"], row["changed"], row["next"]["method"]) == (False, True, "mcp/activate")
    # The offered call is the way back: activated again, the tool is loaded (and callable) once more.
    [again] = calls_in(after["text"])
    await invoke(sidecar, again, session)
    reloaded = await invoke(sidecar, query, session)
    assert reloaded["text"].splitlines()[1] == (
        " ● mutable.echo(text, prefix) [loaded] — Echo the given text back, prefixed with prefix."
    )
    echoed = await sidecar.request(
        "mcp/callTool", {"id": "mutable.echo", "arguments": {"text": "hi", "prefix": "> "}, "session": session}
    )
    assert echoed["content"][0]["text"] == "> hi"


async def test_resources_and_templates_carry_read_calls_that_work_as_written(sidecar: SidecarClient) -> None:
    found = await invoke(sidecar, {"query": "notes", "server": "notes", "kind": "resources", "limit": 3}, "reads")
    assert found["text"].splitlines() == [
        'mcp discover "notes"',
        " ○ notes · [template] notes://{folder}/{name} (folder, name) — One note, by folder and name.",
        '   read (fill in the variables): mcp_tools({"read": {"server": "notes", "template": '
        '"notes://{folder}/{name}", "arguments": {"folder": "<folder>", "name": "<name>"}}})',
        " ○ notes · changelog · notes://changelog [text/plain] — Release notes by version.",
        '   read: mcp_tools({"read": {"server": "notes", "uri": "notes://changelog"}})',
        " ○ notes · Project readme · notes://readme [text/markdown] — How to set up the warehouse project.",
        '   read: mcp_tools({"read": {"server": "notes", "uri": "notes://readme"}})',
    ]
    template, changelog, readme = calls_in(found["text"])
    for call, uri in ((changelog, "notes://changelog"), (readme, "notes://readme")):
        read = await invoke(sidecar, call, "reads")
        assert read["isError"] is False, read["text"]
        assert read["details"]["contents"][0]["uri"] == uri
    # The shape copied as it is reads nothing: the placeholders are no values.
    placeholders = await invoke(sidecar, template, "reads")
    assert placeholders["isError"] is True
    assert placeholders["text"] == (
        "[invalid_params] Fill in the template's variables: folder, name still hold the <placeholder>; use values "
        "from the user or earlier results (`complete` suggests some). Retry with arguments the mcp_tools input "
        "schema allows."
    )
    template["read"]["arguments"] = {"folder": "work", "name": "plan"}
    read = await invoke(sidecar, template, "reads")
    assert read["isError"] is False, read["text"]
    assert read["details"]["contents"][0]["uri"] == "notes://work/plan"


async def test_prompts_are_for_people_and_never_push_tools_out(sidecar: SidecarClient) -> None:
    query = {"query": "summarize notes", "server": "notes", "limit": 3}
    # An editor's palette ranks the prompt first, as before.
    palette = await sidecar.request("mcp/discover", query)
    assert [c["kind"] for c in palette["candidates"]] == ["prompt", "template", "resource"]
    # A model gets what it can use: the prompt does not take one of the three places.
    model = await invoke(sidecar, query, "prompts")
    assert [c["kind"] for c in model["details"]["candidates"]] == ["template", "resource", "tool"]
    assert "[prompt]" not in model["text"]
    # With room to spare, it comes after every tool and resource, saying who can run it.
    roomy = await invoke(sidecar, {**query, "limit": 50}, "prompts")
    kinds = [c["kind"] for c in roomy["details"]["candidates"]]
    first_prompt = kinds.index("prompt")
    assert set(kinds[first_prompt:]) == {"prompt"}, kinds
    lines = roomy["text"].splitlines()
    row = lines.index(" ○ notes · [prompt] summarize_notes(folder) — Summarize the notes of a folder.")
    assert lines[row + 1] == "   for people: ask the user to run /mcp prompt notes summarize_notes"
    only = await invoke(sidecar, {**query, "kind": "prompts"}, "prompts")
    assert only["text"].splitlines() == [
        'mcp discover "summarize notes"',
        " ○ notes · [prompt] summarize_notes(folder) — Summarize the notes of a folder.",
        "   for people: ask the user to run /mcp prompt notes summarize_notes",
    ]


async def test_a_long_query_is_ranked_on_its_head_and_says_so(sidecar: SidecarClient) -> None:
    message = "Please echo this text back to me. " + "It is a long message pasted from the user. " * 40
    assert len(message) > 1_500
    found = await invoke(sidecar, {"query": message, "server": "basic", "kind": "tools", "limit": 1}, "long")
    assert found["isError"] is False
    ranked = found["details"]["rankedQuery"]
    assert message.startswith(ranked)
    assert 900 < len(ranked) <= 1_000
    assert not ranked.endswith(" ")
    lines = found["text"].splitlines()
    assert lines[0] == "mcp discover " + json.dumps(message[:199] + "…", ensure_ascii=False)
    assert lines[1] == f" (a long query: ranked on its first {len(ranked):,} of {len(message):,} characters)"
    # Past 16 words a query is a pasted message: ranked, not judged (nothing is marked weak).
    assert lines[2] == " (a long message: ranked, not judged; read each description before activating one)"
    assert lines[3] == " ○ basic.echo(text) — Echo the given text back."
    assert found["details"]["query"] == message
    # Past 64 KiB the query is refused, with a hint a model can act on.
    refused = await invoke(sidecar, {"query": "x" * (64 * 1024 + 1)}, "long")
    assert refused["isError"] is True
    assert refused["text"] == (
        "[invalid_params] `query` must be at most 64 KiB; a few words about the capability rank best. "
        "Retry with arguments the mcp_tools input schema allows."
    )
    assert "docs/" not in refused["details"]["diagnostic"]["hint"]


async def test_sessions_end_with_their_tools_and_previews(sidecar: SidecarClient) -> None:
    session = "chat-1"
    await invoke(sidecar, {"activate": ["notes.echo", "notes.add"]}, session)
    assert (await status_row(sidecar, "notes"))["loaded"] == 2
    preview = await sidecar.request(
        "mcp/prompt/preview",
        {"server": "notes", "name": "summarize_notes", "arguments": {"folder": "work"}, "session": session},
    )
    kept = await sidecar.request(
        "mcp/prompt/preview", {"server": "notes", "name": "summarize_notes", "arguments": {"folder": "other"}}
    )
    before = len(sidecar.notifications["mcp/activeToolsChanged"])
    ended = await sidecar.request("mcp/session/end", {"session": session})
    assert ended == {"session": session, "deactivated": ["notes.echo", "notes.add"], "previewsDiscarded": 1}
    assert sidecar.notifications["mcp/activeToolsChanged"][before:] == [
        {"session": session, "removed": ["notes.echo", "notes.add"], "reason": "session ended"}
    ]
    # The Loaded column counts live sessions only; the session's preview is gone, another's stays.
    assert (await status_row(sidecar, "notes"))["loaded"] == 0
    gone = await sidecar.error("mcp/prompt/use", {"previewId": preview["previewId"]})
    assert diagnostic_of(gone)["code"] == "preview_not_found"
    used = await sidecar.request("mcp/prompt/use", {"previewId": kept["previewId"]})
    assert used["accepted"] is True
    # A call now needs a new activation; the session starts afresh, nothing to end twice.
    error = await sidecar.error("mcp/callTool", {"id": "notes.echo", "arguments": {"text": "x"}, "session": session})
    assert diagnostic_of(error)["code"] == "tool_not_active"
    again = await sidecar.request("mcp/session/end", {"session": session})
    assert again == {"session": session, "deactivated": [], "previewsDiscarded": 0}
    missing = await sidecar.error("mcp/session/end", {})
    assert diagnostic_of(missing)["message"] == "`session` is required."


async def test_the_directory_names_the_servers_and_follows_the_configuration(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    servers: dict[str, Any] = {
        "linear": basic_stdio(description="Issues, projects and cycles of the team"),
        "warehouse": basic_stdio(),
        "off": basic_stdio(disabled=True, description="Never shown"),
    }
    write_config(home, servers)
    async with start_sidecar(home) as client:
        definition = await client.request("mcp/modelTool/definition")
        directory = definition["description"].split("\n\n")[-1]
        assert directory.splitlines() == [
            "Servers (for `server`; query to find their tools):",
            "- linear: Issues, projects and cycles of the team",
            "- warehouse",
        ]
        # Once its catalog is cached, a server without a description is summarised from it.
        await invoke(client, {"query": "echo", "server": "warehouse"}, "s")
        definition = await client.request("mcp/modelTool/definition")
        assert definition["servers"][1] == {
            "name": "warehouse",
            "summary": "8 tools: echo, add, get_env, …",
            "source": "catalog",
        }
        # A client with a fixed description gets the directory in its session's first query answer.
        first = await client.request(
            "mcp/modelTool/invoke",
            {"arguments": {"query": "echo", "limit": 1}, "session": "fixed", "includeDirectory": True},
        )
        assert first["text"].startswith(directory.replace("- warehouse", "- warehouse: 8 tools: echo, add, get_env, …"))
        assert first["text"].endswith("\n\n" + first["details"]["text"])
        second = await client.request(
            "mcp/modelTool/invoke",
            {"arguments": {"query": "echo", "limit": 1}, "session": "fixed", "includeDirectory": True},
        )
        assert second["text"] == second["details"]["text"]
        # A reload that adds a server sends the new definition (and the next answer shows it).
        write_config(home, {**servers, "docs": basic_stdio(description="Team documentation")})
        await client.request("mcp/config/reload")
        await client.wait_for(lambda: bool(client.notifications["mcp/modelToolChanged"]), what="modelToolChanged")
        [changed] = client.notifications["mcp/modelToolChanged"]
        assert changed["definition"]["description"].endswith("\n- docs: Team documentation")
        assert changed["definition"] == await client.request("mcp/modelTool/definition")
        third = await client.request(
            "mcp/modelTool/invoke",
            {"arguments": {"query": "echo", "limit": 1}, "session": "fixed", "includeDirectory": True},
        )
        assert "- docs: Team documentation\n\n" in third["text"]


async def test_activation_shows_each_signature_and_summarises_what_does_not_fit(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, {"sig": fixture_stdio("signatures.py", "stdio")})
    async with start_sidecar(home) as client:
        loaded = await invoke(client, {"activate": ["sig.search", "sig.purge", "sig.wide", "sig.serch"]}, "s")
        lines = loaded["text"].splitlines()
        assert lines[:6] == [
            "mcp activate",
            " ✔ sig.search · loaded [read-only]",
            '   sig.search(query: string, mode?: "fast"|"exact" = "fast", limit?: integer = 10, '
            "filters?: {tags: array of string, after?: string|null = null}|null = null) — Search the documents.",
            "     query: What to look for.",
            "     mode: How to match.",
            "     (full schema: mcp/activeTools)",
        ]
        # Server text is sanitised: the terminal sequence and the bidi override are gone.
        assert lines[6:9] == [
            " ✔ sig.purge · loaded [destructive]",
            "   sig.purge(path: string) — Delete a path for good.",
            "     path: The path to delete.",
        ]
        # 150 described fields do not fit a tool's share: a summary, with where the whole schema is.
        assert lines[9] == " ✔ sig.wide · loaded"
        assert lines[10:12] == [
            "   sig.wide(settings: object) — Apply many settings at once.",
            "     (full schema: mcp/activeTools)",
        ]
        assert len(loaded["text"]) < 12_000
        assert " ✘ sig.serch · not loaded: Server 'sig' has no tool named 'serch'. Nearby: sig.search" in lines
        assert lines[-2:] == [CALL_HINT, tokens_line(loaded["details"]["tokens"])]
        # What the summary left out is where it says.
        active = await client.request("mcp/activeTools", {"session": "s"})
        wide = next(t for t in active["tools"] if t["id"] == "sig.wide")
        assert len(wide["inputSchema"]["$defs"]["Wide"]["properties"]) == 150


async def test_a_chat_call_tool_gets_hints_written_for_a_model(sidecar: SidecarClient) -> None:
    params = {"id": "basic.cwd", "arguments": {}, "session": "hints"}
    person = diagnostic_of(await sidecar.error("mcp/callTool", params))
    model = diagnostic_of(await sidecar.error("mcp/callTool", {**params, "forModel": True}))
    assert person["hint"] == "Activate the tool in this session with mcp/activate before calling it."
    assert {**model, "hint": person["hint"]} == person  # only the hint differs
    assert model["hint"] == 'Retry after activating the tool: mcp_tools({"activate": ["<exact id>"]}).'


async def test_the_directory_says_which_servers_are_unusable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write_config(
        home,
        {
            "basic": basic_stdio(description="Echo and arithmetic"),
            "crash": fixture_stdio("crash_on_start.py"),
            "bad": {"command": sys.executable, "colour": "blue"},
        },
    )
    async with start_sidecar(home) as client:
        await invoke(client, {"query": "echo"}, "s")  # the crashing server fails its first start
        definition = await client.request("mcp/modelTool/definition")
        assert definition["description"].split("\n\n")[-1].splitlines() == [
            "Servers (for `server`; query to find their tools):",
            "- basic: Echo and arithmetic",
            "- crash (unavailable: connection_failed)",
            "- bad (unavailable: configuration_invalid)",
        ]


async def test_a_chat_call_gets_the_result_as_a_model_reads_it(sidecar: SidecarClient) -> None:
    await invoke(sidecar, {"activate": ["basic.echo", "basic.fail"]}, "texts")
    echoed = await sidecar.request(
        "mcp/callTool",
        {"id": "basic.echo", "arguments": {"text": "hi \x1b[2Jthere\u202e"}, "session": "texts", "forModel": True},
    )
    assert echoed["text"] == "hi there\n(the sidecar removed 1 hidden character from this server's text)"
    assert echoed["content"][0]["text"] == "hi \x1b[2Jthere\u202e"  # the data stays as the server sent it
    failed = await sidecar.request(
        "mcp/callTool", {"id": "basic.fail", "arguments": {"message": "nope"}, "session": "texts", "forModel": True}
    )
    assert failed["text"] == "Tool basic.fail reported an error:\nError executing tool fail: nope"
    plain = await sidecar.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "x"}, "session": "texts"})
    assert "text" not in plain
