"""The client half of MCP end to end: what servers are offered, and their questions answered by the editor.

The unmodified server-everything registers `trigger-elicitation-request`, `trigger-url-elicitation`
and `trigger-sampling-request` only when its client offers elicitation (form, url) and sampling,
and `get-roots-list` only with roots. The editor here is the pytest-lsp client: it declares
`mcpCapabilities` and answers `mcp/elicit` and `mcp/sample` like a person would. `asks.py` is a
fixture of our own, served in both protocol eras.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support.servers import SERVER_EVERYTHING_JS, fixture_stdio
from support.sidecar import SidecarClient, start_sidecar, write_config

pytestmark = pytest.mark.skipif(
    not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci` to install server-everything"
)

EVERYTHING = {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}
ALL: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
CONDITIONAL = {"trigger-elicitation-request", "trigger-url-elicitation", "trigger-sampling-request", "get-roots-list"}
Answer = Callable[[Any], Awaitable[Any]]


def recording(asked: list[dict[str, Any]], answer: Callable[[dict[str, Any]], Any]) -> Answer:
    async def handler(params: Any) -> Any:
        asked.append(params)
        result = answer(params)
        return await result if asyncio.iscoroutine(result) else result

    return handler


async def tools_of(sidecar: SidecarClient, server: str) -> set[str]:
    result = await sidecar.request("mcp/server/tools", {"server": server})
    return {tool["name"] for tool in result["tools"]}


async def call(sidecar: SidecarClient, tool_id: str, arguments: dict[str, Any] | None = None, **extra: Any) -> Any:
    params = {"id": tool_id, "arguments": arguments or {}, "activate": True, **extra}
    return await sidecar.request("mcp/callTool", params, timeout=90)


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


def offering_all(home: Path, project: Path, answers: dict[str, Answer]) -> Any:
    """A sidecar whose editor offers elicitation (form, url) and sampling, and answers with `answers`."""
    return start_sidecar(home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers)


def setup(home: Path, tmp_path: Path, **servers: dict[str, Any]) -> Path:
    write_config(home, servers)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return project


# -- what is offered --------------------------------------------------------------------------


async def test_a_client_offering_nothing_gets_no_conditional_tools_but_roots(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING, withheld={**EVERYTHING, "roots": False})
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        offered = await tools_of(sidecar, "everything")
        withheld = await tools_of(sidecar, "withheld")
    assert offered & CONDITIONAL == {"get-roots-list"}
    assert withheld & CONDITIONAL == set()
    assert "echo" in offered
    assert "echo" in withheld


async def test_only_what_the_editor_declared_is_offered(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    form_only: dict[str, Any] = {"mcpCapabilities": {"elicitation": {"form": {}}}}
    async with start_sidecar(home, project=project, trusted=True, options=form_only) as sidecar:
        assert await tools_of(sidecar, "everything") & CONDITIONAL == {"trigger-elicitation-request", "get-roots-list"}
    every = {"mcpCapabilities": ALL}
    async with start_sidecar(home, project=project, trusted=True, options=every) as sidecar:
        assert await tools_of(sidecar, "everything") >= CONDITIONAL


async def test_a_catalog_cached_under_one_offer_is_not_served_under_another(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    async with start_sidecar(home, project=project, trusted=True, options={"mcpCapabilities": ALL}) as sidecar:
        assert "trigger-sampling-request" in await tools_of(sidecar, "everything")  # now on disk
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        params = {"query": "trigger sampling request", "server": "everything", "kind": "tools", "limit": 50}
        found = await sidecar.request("mcp/discover", params)
    names = [candidate["id"] for candidate in found["candidates"]]
    assert "everything.trigger-long-running-operation" in names  # the search found the other triggers
    assert "everything.trigger-sampling-request" not in names  # never offered to this server


# -- elicitation ------------------------------------------------------------------------------


def form_answer(params: dict[str, Any]) -> dict[str, Any]:
    schema = params["requestedSchema"]["properties"]
    content = {name: prop["default"] for name, prop in schema.items() if "default" in prop}
    return {"action": "accept", "content": {**content, "name": "Ada Lovelace", "email": "ada@example.org"}}


async def test_a_form_round_trip_through_the_editor(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, form_answer)}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        result = await call(sidecar, "everything.trigger-elicitation-request")
    assert result["isError"] is False
    text = text_of(result)
    assert "User provided the requested information" in text
    assert "- Name: Ada Lovelace" in text
    assert "- Email: ada@example.org" in text
    assert "- Favorite Integer: 42" in text  # the default the editor pre-filled went back
    (params,) = asked
    assert params["server"] == "everything"
    assert params["mode"] == "form"
    assert params["message"] == "Please provide inputs for the following fields:"
    schema = params["requestedSchema"]
    assert schema["required"] == ["name"]
    props = schema["properties"]
    # Every single select arrives as oneOf, every multi select as items.anyOf, titles kept.
    assert props["untitledSingleSelectEnum"]["oneOf"][0] == {"const": "Monica", "title": "Monica"}
    assert props["legacyTitledEnum"]["oneOf"][1] == {"const": "pet-2", "title": "Dogs"}
    assert props["titledSingleSelectEnum"]["default"] == "hero-1"
    assert props["titledMultipleSelectEnum"]["items"]["anyOf"][0] == {"const": "fish-1", "title": "Tuna"}
    assert props["untitledMultipleSelectEnum"]["default"] == ["Guitar"]
    assert props["integer"] == {
        "title": "Integer",
        "description": props["integer"]["description"],
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 42,
    }
    assert props["email"]["format"] == "email"


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        ({"action": "decline"}, "declined"),
        ({"action": "cancel"}, "cancelled"),
        # An answer that does not fit the schema never reaches the server: it is cancelled.
        ({"action": "accept", "content": {"name": "Ada", "integer": 1000}}, "cancelled"),
        ({"action": "accept", "content": {"integer": 5}}, "cancelled"),
        ({"action": "accept", "content": {"name": "Ada", "email": "not an address"}}, "cancelled"),
        ({"nonsense": True}, "cancelled"),
    ],
)
async def test_what_the_server_hears_when_the_person_does_not_submit(
    home: Path, tmp_path: Path, answer: dict[str, Any], action: str
) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    answers = {"mcp/elicit": recording([], lambda params: answer)}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        result = await call(sidecar, "everything.trigger-elicitation-request")
        logs = await sidecar.request("mcp/server/logs", {"server": "everything"})
    assert f"User {action}" in text_of(result)
    if answer.get("action") == "accept":
        assert any("does not fit the form" in line["text"] for line in logs["lines"])


async def test_a_schema_that_is_not_flat_is_declined_without_asking(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"))
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, form_answer)}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        result = await call(sidecar, "asks.ask_nested")
    assert text_of(result) == "action: decline"
    assert asked == []


async def test_a_question_out_of_the_blue_is_not_shown(home: Path, tmp_path: Path) -> None:
    """Asked when no request of ours is in flight, it could pose as the editor: it is not shown."""
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"))
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, lambda p: {"action": "accept", "content": {"password": "hunter2"}})}
    record = tmp_path / "later.txt"
    async with offering_all(home, project, answers) as sidecar:
        assert text_of(await call(sidecar, "asks.ask_later", {"path": str(record)})) == "scheduled"
        await sidecar.wait_for(record.exists, what="the late question's answer")
        logs = await sidecar.request("mcp/server/logs", {"server": "asks"})
    assert record.read_text(encoding="utf-8") == "cancel"
    assert asked == []
    assert any("no request of ours was in flight" in line["text"] for line in logs["lines"])


async def test_a_server_asking_again_after_every_decline_is_stopped_and_the_result_says_so(
    home: Path, tmp_path: Path
) -> None:
    """pushy.py asks again after every decline (up to 1,000 times): 10 are shown, the rest declined
    without being shown, and the call's result says so. Before, all of them were shown."""
    project = setup(home, tmp_path, pushy=fixture_stdio("pushy.py", "stdio", protocol="legacy"))
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, lambda p: {"action": "decline"})}
    async with offering_all(home, project, answers) as sidecar:
        result = await call(sidecar, "pushy.ask_forever")
        logs = await sidecar.request("mcp/server/logs", {"server": "pushy"})
    assert len(asked) == 10
    assert [p["message"] for p in asked] == [f"Please say yes ({n})." for n in range(1, 11)]
    assert result["isError"] is False
    assert text_of(result) == (
        "asked 1000 times, last decline\n"
        "[mcp-sidecar] 990 more of the server's questions were declined without being shown: "
        "at most 10 are shown during one call."
    )
    refusals = [line["text"] for line in logs["lines"] if "declined without being shown" in line["text"]]
    assert refusals == [
        "[sidecar] questions past a limit are declined without being shown: at most 10 are shown during one call"
    ]


async def test_a_question_is_withdrawn_when_the_call_it_belongs_to_ends(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"))
    asked: list[dict[str, Any]] = []
    withdrawn = asyncio.Event()

    async def never(params: Any) -> Any:
        asked.append(params)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            withdrawn.set()
            raise

    record = tmp_path / "left.txt"
    async with offering_all(home, project, {"mcp/elicit": never}) as sidecar:
        assert text_of(await call(sidecar, "asks.ask_and_leave", {"path": str(record)})) == "left"
        await asyncio.wait_for(withdrawn.wait(), 30)  # the call ended: its question went with it
        await sidecar.wait_for(record.exists, what="the server's view of the question")
    assert len(asked) == 1
    assert record.read_text(encoding="utf-8") != "accept"


async def test_a_question_is_withdrawn_when_its_server_reconnects(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"))
    asked: list[dict[str, Any]] = []
    withdrawn = asyncio.Event()

    async def never(params: Any) -> Any:
        asked.append(params)
        try:
            await asyncio.sleep(3600)  # the person walked away
        except asyncio.CancelledError:
            withdrawn.set()
            raise

    async with offering_all(home, project, {"mcp/elicit": never}) as sidecar:
        pending = asyncio.ensure_future(call(sidecar, "asks.ask_name"))
        await sidecar.wait_for(lambda: bool(asked), what="the question")
        await sidecar.request("mcp/server/reconnect", {"server": "asks"})
        await asyncio.wait_for(withdrawn.wait(), 30)  # $/cancelRequest reached the editor
        with pytest.raises(JsonRpcException):
            await pending  # the call ended with its connection; nothing was re-run
    (params,) = asked
    assert params["requestId"].startswith("sidecar-")  # what the cancel names
    assert params["order"] == ["name", "age"]


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_both_eras_ask_the_editor(home: Path, tmp_path: Path, protocol: str) -> None:
    """Handshake era: a server-to-client request; 2026-07-28: the SDK's input-required rounds."""
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol=protocol))
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, lambda p: {"action": "accept", "content": {"name": "Grace"}})}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        result = await call(sidecar, "asks.ask_name")
    assert text_of(result) == "hello Grace (30)"
    (params,) = asked
    assert params["message"] == "What is your name?\nIt is only used for this greeting."
    assert params["requestedSchema"]["properties"]["age"]["default"] == 30


async def test_time_the_person_takes_does_not_count_against_the_call(home: Path, tmp_path: Path) -> None:
    server = fixture_stdio("asks.py", "stdio", protocol="legacy", timeoutMs=1500)
    project = setup(home, tmp_path, asks=server)

    async def slowly(params: Any) -> dict[str, Any]:
        await asyncio.sleep(3)  # twice the tool's time limit
        return {"action": "accept", "content": {"name": "Slow"}}

    answers: dict[str, Answer] = {"mcp/elicit": slowly}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        answered = await call(sidecar, "asks.ask_name")
        # The limit still holds for the server's own time: 2 s of sleep after the answer is too long.
        late = await sidecar.error(
            "mcp/callTool", {"id": "asks.ask_then_sleep", "arguments": {"seconds": 2.5}, "activate": True}, timeout=90
        )
    assert text_of(answered) == "hello Slow (30)"
    assert isinstance(late.data, dict)
    assert late.data["code"] == "timeout"


async def test_a_url_step_shows_the_host_and_opens_nothing_itself(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, lambda p: {"action": "accept"})}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        url = "https://xn--bcher-kva.example/connect?session=1"
        message = "Connect your library"
        result = await call(sidecar, "everything.trigger-url-elicitation", {"url": url, "message": message})
        assert sidecar.shown == []  # the sidecar never opens a URL by itself
    assert result["isError"] is False
    (params,) = asked
    assert params["mode"] == "url"
    assert params["url"] == url
    assert params["host"] == "xn--bcher-kva.example"
    assert params["message"] == message
    assert params["elicitationId"]


async def test_a_url_step_to_a_numeric_host_shows_the_address_a_browser_opens(home: Path, tmp_path: Path) -> None:
    """`0x7f.1`, `2130706433` and `0177.0.0.1` are 127.0.0.1 to a browser (WHATWG IPv4 parsing):
    the editor is shown that address, in the host and in the URL it would open."""
    project = setup(home, tmp_path, everything=EVERYTHING)
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, lambda p: {"action": "decline"})}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        for host in ("0x7f.1", "2130706433", "0177.0.0.1"):
            args = {"url": f"http://{host}:9/connect?s=1", "message": "Connect"}
            await call(sidecar, "everything.trigger-url-elicitation", args)
    assert [(p["url"], p["host"]) for p in asked] == [("http://127.0.0.1:9/connect?s=1", "127.0.0.1")] * 3


async def test_a_call_that_needs_a_url_step_first_fails_and_is_not_retried(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    asked: list[dict[str, Any]] = []
    answers = {"mcp/elicit": recording(asked, lambda p: {"action": "decline"})}
    args = {"url": "https://example.org/pay", "message": "Pay", "errorPath": True}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        result = await call(sidecar, "everything.trigger-url-elicitation", args)
    assert result["isError"] is True
    assert result["diagnostic"]["code"] == "elicitation_required"
    (step,) = result["elicitations"]
    assert step["url"] == "https://modelcontextprotocol.io"
    assert step["action"] == "decline"
    assert step["completed"] is False
    assert [p["url"] for p in asked] == ["https://modelcontextprotocol.io"]  # asked once, nothing re-run


# -- sampling ---------------------------------------------------------------------------------


async def test_sampling_goes_to_the_editor_and_back(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    asked: list[dict[str, Any]] = []

    def model(params: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "forty-two"},
            "model": "editor-model",
            "stopReason": "endTurn",
        }

    answers = {"mcp/sample": recording(asked, model)}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        result = await call(
            sidecar, "everything.trigger-sampling-request", {"prompt": "What is six times seven?", "maxTokens": 20}
        )
    assert "forty-two" in text_of(result)
    (params,) = asked
    assert params["server"] == "everything"
    assert params["maxTokens"] == 20
    assert "What is six times seven?" in json.dumps(params["messages"])


async def test_a_declined_or_malformed_sampling_answer_is_an_error_for_the_server(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"))
    replies = iter([{"role": "user", "content": {"type": "text", "text": "x"}, "model": "m"}, {"role": "assistant"}])
    answers = {"mcp/sample": recording([], lambda p: next(replies))}
    async with start_sidecar(
        home, project=project, trusted=True, options={"mcpCapabilities": ALL}, answers=answers
    ) as sidecar:
        for _ in range(2):
            result = await call(sidecar, "asks.sample", {"prompt": "hi"})
            assert result["isError"] is True
            assert "The editor could not answer" in text_of(result)


@pytest.mark.parametrize("code", [-1, -32803])  # MCP's code, and LSP's RequestFailed (Neovim can send no other)
async def test_a_person_declining_sampling_is_told_apart_from_a_failure(home: Path, tmp_path: Path, code: int) -> None:
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"))

    async def decline(params: Any) -> Any:
        raise JsonRpcException(message="The user declined the request", code=code)

    async with offering_all(home, project, {"mcp/sample": decline}) as sidecar:
        result = await call(sidecar, "asks.sample", {"prompt": "hi"})
    assert result["isError"] is True
    assert "The user declined the request" in text_of(result)
    assert "could not answer" not in text_of(result)


# -- roots ------------------------------------------------------------------------------------


async def test_roots_are_the_workspace_folders_and_follow_their_changes(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"), everything=EVERYTHING)
    other = tmp_path / "other folder"
    other.mkdir()
    async with start_sidecar(home, project=project, trusted=True, folders=[project, other]) as sidecar:
        listed = text_of(await call(sidecar, "asks.roots"))
        assert listed.splitlines() == [f"{project.as_uri()} project", f"{other.as_uri()} other folder"]
        before = text_of(await call(sidecar, "everything.get-roots-list"))
        assert other.as_uri() in before
        sidecar.lsp.protocol.notify(
            types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[], removed=[types.WorkspaceFolder(uri=other.as_uri(), name=other.name)]
                )
            ),
        )

        async def roots_now() -> str:
            return str(text_of(await call(sidecar, "everything.get-roots-list")))

        deadline = asyncio.get_running_loop().time() + 20
        after = await roots_now()
        while other.as_uri() in after and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.2)
            after = await roots_now()
        # server-everything asked again after notifications/roots/list_changed.
        assert project.as_uri() in after
        assert other.as_uri() not in after
        assert text_of(await call(sidecar, "asks.roots")) == f"{project.as_uri()} project"


async def test_an_untrusted_workspace_discloses_no_roots(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, asks=fixture_stdio("asks.py", "stdio", protocol="legacy"))
    async with start_sidecar(home, project=project, trusted=False, folders=[project]) as sidecar:
        assert text_of(await call(sidecar, "asks.roots")) == "no roots"


# -- progress and logging ---------------------------------------------------------------------


async def test_a_servers_progress_becomes_work_done_progress(home: Path, tmp_path: Path) -> None:
    project = setup(home, tmp_path, everything=EVERYTHING)
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        args = {"duration": 2, "steps": 4}
        result = await call(sidecar, "everything.trigger-long-running-operation", args, workDoneToken="call-1")
        reports: list[Any] = list(sidecar.lsp.progress_reports["call-1"])
        quiet = await call(sidecar, "everything.echo", {"message": "x"})
    assert result["isError"] is False
    assert quiet["isError"] is False
    kinds = [report.kind for report in reports]
    assert kinds[0] == "begin"
    assert kinds[-1] == "end"
    assert "report" in kinds
    assert reports[0].title == "everything.trigger-long-running-operation"
    percentages = [r.percentage for r in reports if r.kind == "report" and r.percentage is not None]
    assert percentages == sorted(percentages)
    assert percentages[-1] == 100
    assert list(sidecar.lsp.progress_reports) == ["call-1"]  # no token, no progress


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_server_logs_are_kept_and_warnings_reach_the_editor_redacted(
    home: Path, tmp_path: Path, protocol: str
) -> None:
    canary = "canary-log-secret-7f3a"
    server = fixture_stdio("asks.py", "stdio", protocol=protocol, env={"SECRET": "${LOG_CANARY}"})
    project = setup(home, tmp_path, asks=server)
    async with start_sidecar(home, project=project, trusted=True, env={"LOG_CANARY": canary}) as sidecar:
        assert text_of(await call(sidecar, "asks.log_things")) == "logged"
        await sidecar.wait_for(lambda: len(sidecar.notifications["mcp/serverLog"]) >= 2, what="two log notifications")
        logs = await sidecar.request("mcp/server/logs", {"server": "asks"})
    sent = sidecar.notifications["mcp/serverLog"]
    assert [(n["server"], n["level"]) for n in sent] == [("asks", "warning"), ("asks", "error")]
    assert sent[0]["logger"] == "fixture"
    assert sent[0]["text"] == "a warning with the secret ***"
    assert "\x1b" not in sent[1]["text"]
    assert '"count": 2' in sent[1]["text"]
    kept = [line["text"] for line in logs["lines"]]
    assert "[warning] fixture: a warning with the secret ***" in kept
    assert not any("an info line" in line for line in kept)  # below the default logLevel
    everything = json.dumps([sent, logs]) + sidecar.log_text()
    assert canary not in everything
