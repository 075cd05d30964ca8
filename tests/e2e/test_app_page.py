"""`mcp/app/open`: an MCP App on a loopback page, in a real headless Chromium, calling its server.

The official `server-basic-vanillajs` (a clock app: it shows the `time` of the tool result it is
given, and its button calls `get-time`) runs over stdio; the editor here declares MCP Apps and
answers `mcp/app/confirmCall` (no, then yes). Chromium is Debian's, driven by the playwright-core
the VS Code extension's tests install (`tests/support/app_page_browser.cjs`).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from support.servers import APP_SERVERS
from support.sidecar import start_sidecar, write_config

ROOT = Path(__file__).resolve().parents[2]
SERVER = APP_SERVERS / "server-basic-vanillajs" / "dist" / "index.js"
PLAYWRIGHT = ROOT / "editor-clients" / "vscode" / "node_modules" / "playwright-core"
DRIVER = ROOT / "tests" / "support" / "app_page_browser.cjs"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
APP_MIME = "text/html;profile=mcp-app"
APPS = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [APP_MIME]}}}
URI = "ui://get-time/mcp-app.html"
CANARY = "opened-with-this-result"
pytestmark = pytest.mark.skipif(not SERVER.is_file(), reason="run `cd tests && npm ci` to install the app servers")


class Confirmations:
    """The editor's answers to `mcp/app/confirmCall`: the ones given, in order, and what was asked."""

    def __init__(self, *allow: bool) -> None:
        self.answers = list(allow)
        self.asked: list[dict[str, Any]] = []

    def handler(self) -> Callable[[Any], Awaitable[dict[str, bool]]]:
        """An async function, as the LSP client's request handlers must be."""

        async def answer(params: Any) -> dict[str, bool]:
            self.asked.append(dict(params))
            return {"allow": self.answers.pop(0) if self.answers else False}

        return answer


@dataclass(frozen=True)
class Answer:
    status_code: int
    headers: dict[str, str]
    text: str


def _fetch(method: str, url: str, headers: dict[str, str], body: bytes | None) -> Answer:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        conn.request(method, parts.path, body=body, headers=headers)
        response = conn.getresponse()
        text = response.read().decode("utf-8", errors="replace")
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
    finally:
        conn.close()


async def fetch(method: str, url: str, headers: dict[str, str] | None = None, body: Any = None) -> Answer:
    """One request with exactly these headers (`Host` too, when given), off the event loop."""
    data = json.dumps(body).encode() if body is not None else None
    return await asyncio.to_thread(_fetch, method, url, headers or {}, data)


def configured(home: Path) -> None:
    write_config(home, {"clock": {"command": "node", "args": [str(SERVER), "--stdio"]}})


async def opened(sidecar: Any) -> str:
    shown = {"content": [], "structuredContent": {"time": CANARY}}
    params = {"server": "clock", "uri": URI, "toolInput": {}, "toolResult": shown}
    result = await sidecar.request("mcp/app/open", params, timeout=90)
    assert result["server"] == "clock"
    assert result["uri"] == URI
    url: str = result["url"]
    return url


async def test_the_page_serves_the_app_with_its_policies_and_refuses_strangers(home: Path, tmp_path: Path) -> None:
    configured(home)
    options = {"mcpCapabilities": APPS}
    async with start_sidecar(home, project=tmp_path, trusted=True, options=options) as sidecar:
        url = await opened(sidecar)
        second = await opened(sidecar)
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        host = await fetch("GET", url)
        app = await fetch("GET", url + "app")
        no_token = await fetch("GET", origin + "/")
        wrong = await fetch("GET", origin + "/" + "A" * 43 + "/")
        wrong_app = await fetch("GET", origin + "/" + "A" * 43 + "/app")
        other_host = await fetch("GET", url, {"Host": f"localhost:{parts.port}"})
        call = {"name": "get-time", "arguments": {}}
        json_type = {"Content-Type": "application/json"}
        foreign = await fetch("POST", url + "call", {**json_type, "Origin": "http://evil.example"}, call)
        from_app = await fetch("POST", url + "call", {**json_type, "Origin": "null"}, call)
        as_form = await fetch("POST", url + "call", {"Origin": origin}, call)
    assert parts.scheme == "http"
    assert parts.hostname == "127.0.0.1"
    assert urlsplit(second).netloc == parts.netloc  # one listener for the client's apps
    assert urlsplit(second).path != parts.path  # each app its own token
    assert len(parts.path.strip("/")) >= 43  # 256 bits, URL-safe base64
    assert host.status_code == 200
    assert '<iframe id="app" sandbox="allow-scripts" src="app"' in host.text
    assert CANARY in host.text
    policy = host.headers["content-security-policy"]
    assert "script-src 'nonce-" in policy
    assert "frame-ancestors 'none'" in policy
    assert host.headers["cache-control"] == "no-store"
    assert app.status_code == 200
    assert app.text.lstrip().lower().startswith("<!doctype html>")
    app_policy = app.headers["content-security-policy"]
    assert app_policy.startswith("default-src 'none'; script-src 'self' 'unsafe-inline'")
    assert "connect-src 'none'" in app_policy  # the clock declares no origin
    assert "frame-ancestors 'self'" in app_policy
    assert [no_token.status_code, wrong.status_code, wrong_app.status_code] == [403, 403, 403]
    assert "clock" not in wrong.text
    assert other_host.status_code == 421
    assert [foreign.status_code, from_app.status_code, as_form.status_code] == [403, 403, 415]


@pytest.mark.skipif(
    CHROMIUM is None or not PLAYWRIGHT.is_dir(), reason="needs Debian's chromium and editor-clients/vscode's npm ci"
)
async def test_the_app_runs_in_a_browser_and_calls_its_server_once_the_editor_allows(
    home: Path, tmp_path: Path
) -> None:
    configured(home)
    confirm = Confirmations(False, True)
    options = {"mcpCapabilities": APPS}
    answers = {"mcp/app/confirmCall": confirm.handler()}
    async with start_sidecar(home, project=tmp_path, trusted=True, options=options, answers=answers) as sidecar:
        url = await opened(sidecar)
        browser = await asyncio.create_subprocess_exec(
            "node",
            str(DRIVER),
            str(PLAYWRIGHT),
            str(CHROMIUM),
            url,
            CANARY,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(browser.communicate(), 240)
    assert browser.returncode == 0, err.decode(errors="replace")
    seen = json.loads(out.decode().strip().splitlines()[-1])
    print(seen["console"], file=sys.stderr)
    assert seen["status"] == 200
    assert seen["initial"] == CANARY  # the tool result the page was opened with reached the app
    assert seen["denied"] == "[ERROR]"  # the editor said no: no call
    assert seen["allowed"] >= "2000"  # the server's own time, an ISO timestamp
    assert [ask["name"] for ask in confirm.asked] == ["get-time", "get-time"]
    assert all(ask["server"] == "clock" and ask["uri"] == URI for ask in confirm.asked)
    assert all(ask["arguments"] == {} for ask in confirm.asked)
