"""Secret audit of results: servers that send back every secret the sidecar gave them, through the
editor protocol and through the gateway (`mcp-sidecar mcp` over stdio and HTTP), and a scan of
everything that came out for every 8-character piece of every canary in every leak form
(`canaries.py`): 0 leaks.

The servers are `fixtures/servers/leaky.py` (its environment over stdio, its request headers over
HTTP) and the OAuth fixture's `echo_authorization` (the access token, also after a refresh
mid-connection). The canaries are an exactly-8-character value, one inside a longer value, one
that every encoding changes, a `!command`'s output and a multi-line key from a `!command`. What
is scanned: every answer and error, every notification (`$/progress`, `mcp/serverLog`, ...),
every question put to the editor or host (`mcp/elicit`, `mcp/sample`), every log message and
progress report a host received, the sidecar's log and every file under its home and the
project (spill files included). Redaction must also be seen at work: answers say how many
values they replaced and hold `***`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from pygls.exceptions import JsonRpcException

from reliability.canaries import CANARIES, COMMAND, EXACT, KEY, LONG, OAUTH, PIECE, PIECES, SYMBOLS, Scan, forms
from reliability.helpers import figure
from support.gateway import gateway_params
from support.http_gateway import http_gateway, http_host
from support.keyring_env import secret_service_env
from support.oauth import play_browser
from support.servers import fixture_path, free_port, http_server
from support.sidecar import SidecarClient, start_sidecar, write_config

ENV = {"AUDIT_EXACT": EXACT, "AUDIT_LONG": LONG, "AUDIT_SYMBOLS": SYMBOLS}
"""The sidecar's environment: the configuration refers to these names only."""
TOOLS = (
    "leak_text",
    "leak_structured",
    "leak_blocks",
    "leak_error",
    "leak_rpc_error",
    "leak_large",
    "leak_hidden",
    "leak_progress",
    "leak_elicit",
    "leak_elicit_default",
    "leak_sample",
)
READS = ("leak://env", "leak://env.json", "leak://blob")
STDIO_NAMES = ("LEAK_EXACT", "LEAK_MIXED", "LEAK_SYMBOLS", "LEAK_KEY", "LEAK_COMMAND")
HTTP_NAMES = ("header-x-leak-exact", "header-authorization", "header-authorization-token", "header-x-leak-command")
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "audit-model"}


def leaky_servers(tmp: Path, http_url: str) -> dict[str, Any]:
    """`leaky` over stdio (references and `!command`s in `env`), `leaky-http` (in `headers`)."""
    key_file, command_file = tmp / "key.pem", tmp / "command.txt"
    key_file.write_text(KEY + "\n", encoding="utf-8")
    command_file.write_text(COMMAND + "\n", encoding="utf-8")
    env = {
        "LEAK_EXACT": "${AUDIT_EXACT}",
        "LEAK_MIXED": "prefix-${AUDIT_LONG}-suffix",
        "LEAK_SYMBOLS": "${AUDIT_SYMBOLS}",
        "LEAK_KEY": f"!cat {key_file}",
        "LEAK_COMMAND": f"!cat {command_file}",
    }
    headers = {
        "X-Leak-Exact": "${AUDIT_EXACT}",
        "Authorization": "Bearer ${AUDIT_LONG}",
        "X-Leak-Command": f"!cat {command_file}",
    }
    stdio = {"command": sys.executable, "args": [str(fixture_path("leaky.py")), "stdio"], "env": env}
    return {"leaky": stdio, "leaky-http": {"url": http_url, "headers": headers}}


def no_leaks(scan: Scan, scenario: str, answers: int, files: int) -> None:
    figure(
        scenario,
        f"{answers} answers, questions and notices and {files} files: {scan.strings:,} strings scanned for "
        f"{len(PIECES)} {PIECE}-character pieces of {len(CANARIES)} canaries in {len(forms(EXACT))} forms; "
        f"{scan.redacted} held ***: {len(scan.leaks)} leak(s)",
    )
    assert scan.leaks == [], "\n".join(f"{where}: {piece!r} in {around!r}" for where, piece, around in scan.leaks[:40])
    assert scan.redacted > 0, "no answer showed redaction at work"


# -- through the editor protocol ----------------------------------------------------------------


@dataclass
class Editor:
    """The editor's side: every answer and question, scanned at the end."""

    sidecar: SidecarClient | None = None
    answers: list[Any] = field(default_factory=list)
    questions: list[Any] = field(default_factory=list)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        assert self.sidecar is not None
        try:
            result = await self.sidecar.request(method, params, timeout=90)
        except JsonRpcException as exc:
            self.answers.append((method, params, {"error": str(exc), "code": exc.code, "data": exc.data}))
            return None
        self.answers.append((method, params, result))
        return result

    async def elicit(self, params: Any) -> Any:
        self.questions.append(params)
        return {"action": "accept", "content": {"answer": "fine"}}

    async def sample(self, params: Any) -> Any:
        self.questions.append(params)
        return SAMPLED


@pytest.fixture
def oauth_url() -> Iterator[str]:
    with http_server("oauth_server.py", "--token-prefix", OAUTH) as url:
        yield url


async def _every_tool(editor: Editor, server: str) -> dict[str, Any]:
    calls = {}
    for tool in TOOLS:
        params: dict[str, Any] = {"id": f"{server}.{tool}", "arguments": {}, "activate": True}
        if tool == "leak_progress":
            params["workDoneToken"] = f"{server}-progress"
        calls[tool] = await editor.send("mcp/callTool", params)
    for tool in ("leak_text", "leak_error", "leak_rpc_error"):
        await editor.send("mcp/callTool", {"id": f"{server}.{tool}", "arguments": {}, "forModel": True})
    return calls


async def _every_read(editor: Editor, server: str, names: tuple[str, ...]) -> None:
    for uri in READS:
        await editor.send("mcp/read", {"server": server, "uri": uri})
    for name in names:
        params = {"server": server, "template": "leak://value/{name}", "arguments": {"name": name}}
        await editor.send("mcp/read", params)
    await editor.send("mcp/modelTool/invoke", {"arguments": {"read": {"server": server, "uri": "leak://env"}}})
    await editor.send("mcp/complete", {"server": server, "prompt": "leak_prompt", "argument": {"name": "topic"}})
    template = {"server": server, "template": "leak://value/{name}", "argument": {"name": "name", "value": ""}}
    await editor.send("mcp/complete", template)
    preview = await editor.send(
        "mcp/prompt/preview", {"server": server, "name": "leak_prompt", "arguments": {"topic": "x"}}
    )
    if preview is not None:
        await editor.send("mcp/prompt/use", {"previewId": preview["previewId"]})


async def _oauth_refreshed(editor: Editor, oauth_url: str) -> list[Any]:
    """Log in, echo the token, let the server forget it (the sidecar refreshes), echo the new one."""
    await editor.send("mcp/auth/login", {"server": "oauth"})
    echoed = [await editor.send("mcp/callTool", {"id": "oauth.echo_authorization", "arguments": {}, "activate": True})]
    base = oauth_url.removesuffix("/mcp")
    async with httpx2.AsyncClient(timeout=10) as http:
        (await http.post(f"{base}/test/expire-access")).raise_for_status()
        echoed.append(await editor.send("mcp/callTool", {"id": "oauth.echo_authorization", "arguments": {}}))
        stats = (await http.get(f"{base}/test/stats")).json()
    assert stats["grants"].get("refresh_token", 0) >= 1, stats
    return echoed


def _check_redaction_at_work(calls: dict[str, Any], editor: Editor, echoed: list[Any]) -> None:
    text = calls["leak_text"]
    assert text["redacted"] > 0
    assert "***" in text["content"][0]["text"]
    assert calls["leak_large"]["truncated"] is True  # the spill file is among the files scanned
    assert calls["leak_elicit"]["content"][0]["text"] == "action: accept"
    assert calls["leak_elicit_default"]["content"][0]["text"] == "action: decline"  # refused unseen
    assert calls["leak_sample"]["content"][0]["text"] == "audit-model: sampled"
    assert [e and e["content"][0]["text"] for e in echoed] == ["Bearer ***", "Bearer ***"]
    assert len(editor.questions) >= 2


async def test_results_through_the_editor_protocol_carry_no_secret(home: Path, tmp_path: Path, oauth_url: str) -> None:
    editor = Editor()
    with (
        http_server("leaky.py") as http_url,
        secret_service_env(tmp_path / "secret-service") as keyring_env,
    ):
        servers = leaky_servers(tmp_path, http_url) | {"oauth": {"url": oauth_url, "oauthCallbackPort": free_port()}}
        write_config(home, servers)
        (project := tmp_path / "project").mkdir()
        answers = {"mcp/elicit": editor.elicit, "mcp/sample": editor.sample}
        async with start_sidecar(
            home,
            project=project,
            trusted=True,
            env={**ENV, **keyring_env},
            browser=play_browser,
            options={"mcpCapabilities": CAPABILITIES},
            answers=answers,
        ) as sidecar:
            editor.sidecar = sidecar
            for name in servers:
                await editor.send("mcp/server/tools", {"server": name})
            await editor.send("mcp/discover", {"query": "secrets leak", "limit": 50})
            calls = await _every_tool(editor, "leaky")
            await _every_tool(editor, "leaky-http")
            await _every_read(editor, "leaky", STDIO_NAMES)
            await _every_read(editor, "leaky-http", HTTP_NAMES)
            echoed = await _oauth_refreshed(editor, oauth_url)
            for name in servers:
                await editor.send("mcp/server/logs", {"server": name})
                await editor.send("mcp/command", {"line": f"/mcp get {name}"})
            await editor.send("mcp/spill/list")
            await sidecar.wait_for(lambda: bool(sidecar.notifications["mcp/serverLog"]), what="a server log message")
            progress = {
                str(token): [
                    {"title": getattr(r, "title", None), "message": getattr(r, "message", None)} for r in reports
                ]
                for token, reports in sidecar.lsp.progress_reports.items()
            }
            notifications = dict(sidecar.notifications)
    scan = Scan()
    for method, params, answer in editor.answers:
        scan.value(f"{method} {json.dumps(params)[:100]}", answer)
    scan.value("questions", editor.questions)
    scan.value("notifications", notifications)
    scan.value("progress", progress)
    files = scan.files(home, project)
    _check_redaction_at_work(calls, editor, echoed)
    assert any("***" in str(r.get("message")) for reports in progress.values() for r in reports)
    assert any("***" in n["text"] for n in notifications["mcp/serverLog"])
    told = len(editor.answers) + len(editor.questions) + sum(len(v) for v in notifications.values())
    no_leaks(scan, "secret audit, results (editor protocol)", told + sum(map(len, progress.values())), files)


# -- through the gateway ------------------------------------------------------------------------


@dataclass
class Host:
    """The host's side of `mcp-sidecar mcp`: every result, question, log message and progress report."""

    seen: list[Any] = field(default_factory=list)

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.seen.append(params.model_dump(mode="json"))
        return types.ElicitResult(action="accept", content={"answer": "fine"})

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.seen.append(params.model_dump(mode="json"))
        return types.CreateMessageResult.model_validate(SAMPLED)

    async def logged(self, params: types.LoggingMessageNotificationParams) -> None:
        self.seen.append(params.model_dump(mode="json"))

    async def message(self, message: Any) -> None:
        if not isinstance(message, Exception):
            self.seen.append(message.model_dump(mode="json"))

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append({"progress": progress, "total": total, "message": message})

    def callbacks(self) -> dict[str, Any]:
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "logging_callback": self.logged,
            "message_handler": self.message,
        }

    async def record(self, call: Any) -> Any:
        try:
            result = await call
        except MCPError as exc:
            self.seen.append({"error": exc.message, "data": exc.data})
            return None
        self.seen.append(result.model_dump(mode="json"))
        return result


async def _through_the_gateway(host: Host, client: Client) -> list[types.CallToolResult]:
    ids = [f"{server}.{tool}" for server in ("leaky", "leaky-http") for tool in TOOLS]
    await host.record(client.call_tool("mcp_tools", {"activate": ids}))
    await host.record(client.list_tools())
    results = []
    for tool_id in ids:
        native = tool_id.replace(".", "__")
        results.append(await host.record(client.call_tool(native, {}, progress_callback=host.progress)))
    for server in ("leaky", "leaky-http"):
        read = {"read": {"server": server, "uri": "leak://env"}}
        await host.record(client.call_tool("mcp_tools", read))
        complete = {"server": server, "prompt": "leak_prompt", "argument": {"name": "topic", "value": ""}}
        await host.record(client.call_tool("mcp_tools", {"complete": complete}))
    listed = await host.record(client.list_prompts())
    for prompt in listed.prompts if listed is not None else []:
        await host.record(client.get_prompt(prompt.name, {"topic": "x"}))
    resources = await host.record(client.list_resources())
    for resource in resources.resources if resources is not None else []:
        await host.record(client.read_resource(str(resource.uri)))
    return [r for r in results if r is not None]


def _gateway_env(home: Path, keyring: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "MCP_SIDECAR_HOME": str(home), **ENV, **keyring}


def _check_gateway_results(host: Host, results: list[types.CallToolResult]) -> None:
    texts = ["\n".join(b.text for b in r.content if isinstance(b, types.TextContent)) for r in results]
    assert len(results) == 2 * len(TOOLS)
    assert sum("***" in t for t in texts) >= 10
    assert any("of this server's secret values with ***" in t for t in texts)
    kinds = {key: [s for s in host.seen if key in s] for key in ("requested_schema", "max_tokens", "level", "progress")}
    assert all(kinds.values()), {key: len(seen) for key, seen in kinds.items()}  # questions, logs, progress
    assert any("***" in json.dumps(s) for s in kinds["level"]), "no log message showed redaction"
    assert any("***" in str(s["message"]) for s in kinds["progress"]), "no progress message showed redaction"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_results_through_the_gateway_carry_no_secret(home: Path, tmp_path: Path, transport: str) -> None:
    host = Host()
    with (
        http_server("leaky.py") as http_url,
        secret_service_env(tmp_path / "secret-service") as keyring_env,
    ):
        write_config(home, leaky_servers(tmp_path, http_url))
        env = _gateway_env(home, keyring_env)
        if transport == "stdio":
            base = gateway_params(home, "--resources")
            params = StdioServerParameters(command=base.command, args=base.args, env=env)
            async with Client(params, read_timeout_seconds=90, mode="legacy", **host.callbacks()) as client:
                results = await _through_the_gateway(host, client)
        else:
            with http_gateway(home, "--resources", env=env) as served:
                async with http_host(served.url, served.headers, **host.callbacks()) as client:
                    results = await _through_the_gateway(host, client)
    scan = Scan()
    scan.value("host", host.seen)
    files = scan.files(home)
    _check_gateway_results(host, results)
    no_leaks(scan, f"secret audit, results (gateway over {transport})", len(host.seen), files)
