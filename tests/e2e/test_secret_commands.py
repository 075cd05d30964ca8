"""Secret commands end to end: run once per connection in the server's cwd, strict failures,
and the resolved value never appears in a response, notification, log, status, `get` or cache.

The canary exists only in a file the secret commands print (never in the configuration), so
finding it anywhere means a resolved secret leaked.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from support.servers import basic_stdio, fixture_path, http_server, pid_alive
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, wait_until, write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

CANARY = "CANARY-SECRET-5d1c9e0b"
BASIC = f"{sys.executable} {fixture_path('basic.py')} stdio"


class Env:
    def __init__(self, sidecar: SidecarClient, home: Path, project: Path) -> None:
        self.sidecar = sidecar
        self.home = home
        self.project = project
        self.texts: list[str] = []

    async def ok(self, method: str, params: dict[str, Any] | None = None) -> Any:
        result = await self.sidecar.request(method, params, timeout=30)
        self.texts.append(json.dumps(result))
        return result

    async def error(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        error = await self.sidecar.error(method, params, timeout=30)
        self.texts.append(f"{error} {json.dumps(error.data)}")
        return diagnostic_of(error)

    def runs(self, name: str = "counter.txt") -> int:
        path = self.project / name
        return len(path.read_text(encoding="utf-8").split()) if path.exists() else 0


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    home = tmp_path_factory.mktemp("home")
    project = tmp_path_factory.mktemp("project")
    (project / "token.txt").write_text(f"  {CANARY}\n\n", encoding="utf-8")
    # Public lists, so the web server's catalog is on disk to be searched for the canary.
    with http_server("basic.py", "--cache-hints", "0:public") as url:
        write_config(
            home,
            {
                # A wrapper prints the resolved value to the server's stderr: the log view must mask it.
                "counted": {
                    "command": "/bin/sh",
                    "args": ["-c", f'echo "token is $TOKEN" >&2; exec {BASIC}'],
                    "env": {
                        "TOKEN": "!echo run >> counter.txt; cat token.txt",
                        "LITERAL": "$!not a command",
                        "FROM_ENV": "${SECRET_TEST_BANG}",
                    },
                },
                "web": {
                    "url": url,
                    "headers": {"Authorization": "!echo run >> web-counter.txt; printf 'Bearer '; cat token.txt"},
                },
                "empty": basic_stdio(env={"T": "!true"}),
                "nonzero": basic_stdio(env={"T": "!cat token.txt; exit 3"}),
                "slow": basic_stdio(env={"T": "!sleep 30"}, timeoutMs=500),
                "huge": basic_stdio(env={"T": "!head -c 70000 /dev/zero | tr '\\0' x"}),
            },
        )
        extra = {"SECRET_TEST_BANG": "!touch bang-ran"}
        async with start_sidecar(home, project=project, trusted=True, env=extra) as client:
            yield Env(client, home, project)


async def test_loading_status_and_get_run_nothing(env: Env) -> None:
    await env.ok("mcp/status")
    for server in ("counted", "web", "empty"):
        got = await env.ok("mcp/server/get", {"server": server})
        assert got["authentication"]["credentials"] == "externally managed"
    got = await env.ok("mcp/command", {"line": "get counted"})
    assert got["data"]["connection"]["env"] == {"TOKEN": "hidden", "LITERAL": "hidden", "FROM_ENV": "hidden"}
    assert env.runs() == 0
    assert env.runs("web-counter.txt") == 0


async def test_runs_once_per_connection_shared_by_concurrent_requests(env: Env) -> None:
    listings = await asyncio.gather(*(env.ok("mcp/server/tools", {"server": "counted"}) for _ in range(3)))
    assert {len(listing["tools"]) for listing in listings} == {8}
    assert env.runs() == 1
    await env.ok("mcp/activate", {"ids": ["counted.get_env"]})
    assert env.runs() == 1  # the live connection is reused
    # The server got the trimmed output: sent back, it is the server's own secret, replaced whole
    # (in the text and in the structured content: two replacements).
    call = await env.sidecar.request("mcp/callTool", {"id": "counted.get_env", "arguments": {"name": "TOKEN"}})
    assert (call["content"][0]["text"], call["structuredContent"], call["redacted"]) == ("***", {"result": "***"}, 2)
    # Only a leading `!` in the file runs anything: `$!` and interpolated values stay literal (an
    # interpolated one is a secret passed on, so it comes back replaced, whole: not run, not cut).
    for name, expected in (("LITERAL", ("!not a command", None)), ("FROM_ENV", ("***", 2))):
        call = await env.sidecar.request("mcp/callTool", {"id": "counted.get_env", "arguments": {"name": name}})
        assert (call["content"][0]["text"], call.get("redacted")) == expected
    assert not (env.project / "bang-ran").exists()
    await env.ok("mcp/server/reconnect", {"server": "counted"})
    assert env.runs() == 2  # a reconnection runs it again
    logs = await env.ok("mcp/server/logs", {"server": "counted"})
    assert "token is ***" in [line["text"] for line in logs["lines"]]


async def test_http_header_secret(env: Env) -> None:
    tools = await env.ok("mcp/server/tools", {"server": "web"})
    assert len(tools["tools"]) == 8
    assert env.runs("web-counter.txt") == 1


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ("empty", "The secret command in `env.T` printed nothing."),
        ("nonzero", "The secret command in `env.T` exited with status 3."),
        ("slow", "The secret command in `env.T` did not finish within 0.5 s."),
        ("huge", "The secret command in `env.T` printed more than 64 KiB."),
    ],
)
async def test_failures(env: Env, server: str, message: str) -> None:
    diag = await env.error("mcp/server/tools", {"server": server})
    assert diag == {
        "code": "secret_lookup_failed",
        "operation": "tools",
        "server": server,
        "message": message,
        "hint": "Check the secret helper's installation, login, exit status, output and size.",
    }
    status = await env.ok("mcp/status")
    row = next(r for r in status["servers"] if r["name"] == server)
    assert (row["state"], row["lastDiagnostic"]["code"]) == ("failed", "secret_lookup_failed")


async def test_the_canary_never_leaks(env: Env) -> None:
    await env.ok("mcp/command", {"line": "list"})
    await env.ok("mcp/command", {"line": "get web"})
    await env.ok("mcp/discover", {"query": "echo"})
    await env.ok("mcp/command", {"line": "reload"})
    for text in [*env.texts, json.dumps(env.sidecar.notifications)]:
        assert CANARY not in text
    log = env.sidecar.log_text()
    assert "ran 1 secret command(s)" in log
    assert CANARY not in log
    cache_files = list((env.home / "cache").rglob("*"))
    assert any(p.is_file() for p in cache_files)  # the tool catalogs were cached ...
    for path in cache_files:
        if path.is_file():
            assert CANARY not in path.read_text(encoding="utf-8", errors="replace")  # ... without the secret
    assert CANARY not in (env.home / "mcp.json").read_text(encoding="utf-8")


async def test_shutdown_kills_a_pending_secret_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    pid_file = project / "helper.pid"
    write_config(home, {"pending": basic_stdio(env={"T": "!sleep 30 & echo $! > helper.pid; wait"})})
    async with start_sidecar(home, project=project, trusted=True) as sidecar:
        request = asyncio.ensure_future(sidecar.request("mcp/server/tools", {"server": "pending"}))
        await wait_until(lambda: pid_file.exists() and pid_file.read_text(encoding="utf-8").strip() != "")
        pid = int(pid_file.read_text(encoding="utf-8"))
        assert pid_alive(pid)
    await wait_until(lambda: not pid_alive(pid), what="the secret command to be killed at shutdown")
    request.cancel()
    await asyncio.gather(request, return_exceptions=True)
