"""The per-user engine (opt-in while it is built: MCP_SIDECAR_ENGINE=on), with real fronts, engine and servers.

Each test has its own runtime directory, so its engine is its own; the editor's side is the
same pytest-lsp client every e2e test uses, talking to a front (`python -m mcp_sidecar`).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

import mcp_sidecar
from mcp_sidecar.engine import runtime
from support.gateway import gateway, text_of, tool_names
from support.process_guard import TOKEN_VAR, process_guard
from support.servers import SERVER_EVERYTHING_JS, basic_stdio, pid_alive, started_pids
from support.sidecar import SidecarClient, diagnostic_of, engine_processes, start_sidecar, wait_until, write_config

pytestmark = pytest.mark.asyncio

SCRIPT = str(Path(sys.executable).parent / "mcp-sidecar")
"""The venv's console script, as `pip install` puts it on PATH."""


@pytest.fixture
def engine_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    run = Path(tempfile.mkdtemp(prefix="rt-"))  # pytest's paths are too long for a socket's name
    yield {"MCP_SIDECAR_ENGINE": "on", "XDG_RUNTIME_DIR": str(run), "MCP_SIDECAR_ENGINE_GRACE": "2"}
    for pid in engines(run):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(run)


def engines(run_dir: Path) -> list[int]:
    """The engine processes started under this runtime directory."""
    return engine_processes(f"XDG_RUNTIME_DIR={run_dir}")


def engine_log(run_dir: Path) -> str:
    return "".join(p.read_text() for p in (run_dir / "mcp-sidecar").glob("engine-*.log"))


async def test_two_editor_fronts_are_served_by_one_engine(tmp_path: Path, engine_env: dict[str, str]) -> None:
    home = tmp_path / "home"
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    async with start_sidecar(home, env=engine_env) as first, start_sidecar(home, env=engine_env) as second:
        for client in (first, second):
            result = await client.request("mcp/activate", {"ids": ["basic.echo"]})
            assert [r["status"] for r in result["results"]] == ["loaded"]
            called = await client.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "hi"}})
            assert "hi" in str(called["content"])
        assert len(engines(run)) == 1
        assert engine_log(run).count("attached (lsp, resume=False)") == 2
        assert len(started_pids(counter)) == 1  # one server process serves both windows
    # Both gone: the engine waits its grace period (2 s here), then exits and removes its socket.
    await wait_until(lambda: not engines(run), within=30, what="the idle engine to exit")
    assert not list((run / "mcp-sidecar").glob("*.sock"))


async def test_windows_share_a_server_only_by_the_sharing_rule_and_never_an_untrusted_projects(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    counter, project_counter = tmp_path / "starts", tmp_path / "project-starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    trusted, other = tmp_path / "trusted", tmp_path / "other"
    for project in (trusted, other):
        project.mkdir()
    proj = {"mcpServers": {"proj": basic_stdio("--counter-file", str(project_counter))}}
    (trusted / ".mcp.json").write_text(json.dumps(proj), encoding="utf-8")
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    async with (
        start_sidecar(home, project=trusted, trusted=True, options={"trustGranted": True}, env=engine_env) as owner,
        start_sidecar(home, project=trusted, trusted=False, env=engine_env) as stranger,
        start_sidecar(home, project=other, trusted=False, env=engine_env) as neighbour,
    ):
        await owner.request("mcp/activate", {"ids": ["proj.echo"]})
        called = await owner.request("mcp/callTool", {"id": "proj.echo", "arguments": {"text": "mine"}})
        assert "mine" in str(called["content"])
        # The same workspace, untrusted: the project server another window started is not there.
        for client in (stranger, neighbour):
            assert [row["name"] for row in (await client.request("mcp/status"))["servers"]] == ["basic"]
            error = await client.error("mcp/server/get", {"server": "proj"})
            assert diagnostic_of(error)["code"] == "server_not_found"
            refused = await client.request("mcp/activate", {"ids": ["proj.echo"]})
            assert [r["status"] for r in refused["results"]] == ["not loaded"]
        for client in (owner, stranger, neighbour):
            await client.request("mcp/activate", {"ids": ["basic.echo"]})
            called = await client.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "hi"}})
            assert "hi" in str(called["content"])
        assert len(engines(run)) == 1
        # Untrusted windows run global servers in the config directory, so the two of them share one
        # process whatever their repository; the trusted window's runs in its workspace: its own.
        assert len(started_pids(counter)) == 2
        assert len(started_pids(project_counter)) == 1


async def test_a_killed_engine_answers_the_call_in_flight_and_the_front_goes_on(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    async with start_sidecar(home, env=engine_env) as client:
        await client.request("mcp/activate", {"ids": ["basic.slow", "basic.echo"]})
        saved = list((run / "mcp-sidecar" / "fronts").glob("*.json"))
        assert len(saved) == 1
        assert "basic.echo" in saved[0].read_text()
        call = asyncio.ensure_future(client.error("mcp/callTool", {"id": "basic.slow", "arguments": {"seconds": 60}}))
        # Answered after the call was read: the engine has the call (frames go through in order).
        await client.request("mcp/status")
        assert not call.done()
        [first] = engines(run)
        os.kill(first, signal.SIGKILL)

        error = await asyncio.wait_for(call, 30)
        diag = diagnostic_of(error)
        assert diag["code"] == "engine_restarted"
        assert diag["operation"] == "mcp/callTool"

        # The front attached to a new engine, which has the client's opening and restores its sessions.
        async def restored() -> list[str]:
            return [tool["id"] for tool in (await client.request("mcp/activeTools"))["tools"]]

        deadline = asyncio.get_running_loop().time() + 30
        while sorted(await restored()) != ["basic.echo", "basic.slow"]:
            assert asyncio.get_running_loop().time() < deadline, "the sessions did not come back"
            await asyncio.sleep(0.05)
        called = await client.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "again"}})
        assert "again" in str(called["content"])  # no activation needed: the same id is active again
        [second] = engines(run)
        assert second != first
        assert engine_log(run).count("attached (lsp, resume=True)") == 1
    await wait_until(lambda: not list((run / "mcp-sidecar" / "fronts").glob("*.json")), what="the file removed")


async def test_a_front_killed_mid_call_releases_its_part_and_the_others_go_on(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    """`kill -9` of one window's front while its call runs: the engine ends that client (its share of
    the server released), and the other window's calls go on through the same server process."""
    home = tmp_path / "home"
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    async with start_sidecar(home, env=engine_env) as a, start_sidecar(home, env=engine_env) as b:
        await a.request("mcp/activate", {"ids": ["basic.slow"]})
        await b.request("mcp/activate", {"ids": ["basic.echo"]})
        assert [row["sharedBy"] for row in (await b.request("mcp/status"))["servers"]] == [2]
        call = asyncio.ensure_future(a.error("mcp/callTool", {"id": "basic.slow", "arguments": {"seconds": 60}}))
        await a.request("mcp/status")  # answered after the call was read: the engine has the call
        assert not call.done()
        os.kill(a.pid, signal.SIGKILL)

        await wait_until(lambda: "detached" in engine_log(run), what="the engine ending the killed front's client")
        status = await b.request("mcp/status")
        assert [c["thisClient"] for c in status["engine"]["clients"]] == [True]
        assert [row["sharedBy"] for row in status["servers"]] == [1]
        called = await b.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "still here"}})
        assert "still here" in str(called["content"])
        assert len(started_pids(counter)) == 1  # the same server process throughout
        assert len(engines(run)) == 1
        call.cancel()


async def test_an_editor_and_a_host_share_one_engine_and_one_server(
    tmp_path: Path, engine_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    for name, value in engine_env.items():
        monkeypatch.setenv(name, value)  # the gateway's host starts it with this process's environment
    async with start_sidecar(home, env=engine_env) as editor, gateway(home) as (host, _):
        await editor.request("mcp/activate", {"ids": ["basic.echo"]})
        await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        result = await host.call_tool("basic__echo", {"text": "from the host"})
        assert "from the host" in text_of(result)
        called = await editor.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "from the editor"}})
        assert "from the editor" in str(called["content"])
        assert len(engines(run)) == 1
        log = engine_log(run)
        assert "attached (lsp, resume=False)" in log
        assert "attached (mcp, resume=False)" in log
        assert len(started_pids(counter)) == 1


async def test_a_gateway_usage_error_is_printed_by_the_front(tmp_path: Path, engine_env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_sidecar",
        "mcp",
        "--trust-project",
        env={**os.environ, **engine_env, "MCP_SIDECAR_HOME": str(tmp_path / "home")},
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert b"--trust-project needs --project DIR" in err


async def test_a_hosts_activated_tools_come_back_after_the_engine_is_killed(
    tmp_path: Path, engine_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    for name, value in engine_env.items():
        monkeypatch.setenv(name, value)
    async with gateway(home) as (host, _):
        await host.call_tool("mcp_tools", {"activate": ["basic.echo"]})
        assert "basic__echo" in await tool_names(host)
        [first] = engines(run)
        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: engines(run) not in ([], [first]), within=30, what="a new engine")
        # The new engine's first tools/list for this host waits for its session to be restored.
        assert "basic__echo" in await tool_names(host)
        result = await host.call_tool("basic__echo", {"text": "still here"})
        assert "still here" in text_of(result)


async def cli(home: Path, env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_sidecar",
        *argv,
        env={**os.environ, **env, "MCP_SIDECAR_HOME": str(home)},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_cli_runs_go_through_the_engine_and_share_its_servers(tmp_path: Path, engine_env: dict[str, str]) -> None:
    home = tmp_path / "home"
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    async with start_sidecar(home, env=engine_env) as editor:
        await editor.request("mcp/activate", {"ids": ["basic.echo"]})
        code, out, err = await cli(home, engine_env, "call", "basic.echo", '{"text": "through the engine"}')
        assert (code, err) == (0, "")
        assert "through the engine" in out
        code, out, _ = await cli(home, engine_env, "status", "--json")
        assert code == 0
        assert '"name": "basic"' in out
        code, _, err = await cli(home, engine_env, "call", "basic.fail", '{"message": "boom"}')
        assert code == 1
        code, _, err = await cli(home, engine_env, "discover", "x", "--limit", "many")
        assert code == 2
        assert "invalid int value" in err
        assert len(engines(run)) == 1
        # The usage error was answered in the hello: three runs attached.
        assert engine_log(run).count("attached (cli, resume=False)") == 3
        assert len(started_pids(counter)) == 1  # the editor's server answered every run


async def test_a_window_opened_after_the_last_one_closed_finds_its_servers_running(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    env = {**engine_env, "MCP_SIDECAR_ENGINE_GRACE": "60", "MCP_SIDECAR_SERVER_IDLE": "60"}
    for _ in range(2):
        async with start_sidecar(home, env=env) as editor:
            await editor.request("mcp/activate", {"ids": ["basic.echo"]})
            called = await editor.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "hi"}})
            assert "hi" in str(called["content"])
    assert len(started_pids(counter)) == 1  # the second window's call went to the idle server


async def test_another_installation_or_version_starts_its_own_engine(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    """Two installs side by side (the second an older version): each front attaches to its own."""
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    other = tmp_path / "other" / "mcp_sidecar"
    shutil.copytree(Path(mcp_sidecar.__file__).parent, other, ignore=shutil.ignore_patterns("__pycache__"))
    init = other / "__init__.py"
    init.write_text(init.read_text().replace(f'"{mcp_sidecar.__version__}"', '"0.0.1"'))
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    older = {**engine_env, "PYTHONPATH": str(other.parent)}
    async with start_sidecar(home, env=engine_env) as current, start_sidecar(home, env=older) as old:
        for client in (current, old):
            status = await client.request("mcp/status")
            assert [row["name"] for row in status["servers"]] == ["basic"]
        assert len(engines(run)) == 2
        sockets = sorted(p.name for p in (run / "mcp-sidecar").glob("*.sock"))
        assert len(sockets) == 2
        assert any(name.startswith("engine-0.0.1-") for name in sockets)
        assert any(name.startswith(f"engine-{mcp_sidecar.__version__}-") for name in sockets)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another uid")
async def test_the_engine_refuses_another_uid_even_with_its_socket_opened_up(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    async with start_sidecar(home, env=engine_env) as editor:
        await editor.request("mcp/status")
        [sock] = (run / "mcp-sidecar").glob("*.sock")
        for opened in (run, run / "mcp-sidecar"):
            opened.chmod(0o755)
        sock.chmod(0o666)  # only the peer check is left between uid nobody and the engine
        hello = '{"v": 1, "kind": "cli", "front": "0123456789abcdef", "cwd": "/", "argv": ["status"], "env": {}}'
        probe = (
            "import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            f"s.connect({str(sock)!r})\n"
            "s.settimeout(20)\n"
            "try:\n"
            f"    s.sendall({hello!r}.encode() + b'\\n')\n"
            "    answer = s.recv(65536)\n"
            "except (ConnectionResetError, BrokenPipeError):\n"
            "    answer = b''\n"
            "sys.exit(0 if answer == b'' else 3)\n"
        )
        proc = await asyncio.create_subprocess_exec(
            "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", probe, cwd="/"
        )
        assert await asyncio.wait_for(proc.wait(), 30) == 0  # closed without a byte of answer
        assert "refused: the engine serves uid" in engine_log(run)
        assert (await editor.request("mcp/status"))["servers"][0]["name"] == "basic"


async def test_a_terminated_engine_closes_its_servers_and_the_window_attaches_to_a_new_one(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    """SIGTERM (a logout, `pkill`): the engine stops accepting, closes every server and exits; the
    window's front starts the next engine, which starts the server again."""
    home = tmp_path / "home"
    counter = tmp_path / "starts"
    write_config(home, {"basic": basic_stdio("--counter-file", str(counter))})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    async with start_sidecar(home, env=engine_env) as client:
        await client.request("mcp/activate", {"ids": ["basic.echo"]})
        [server] = started_pids(counter)
        [first] = engines(run)
        saved = list((run / "mcp-sidecar" / "fronts").glob("*.json"))
        assert len(saved) == 1
        os.kill(first, signal.SIGTERM)
        await wait_until(lambda: not pid_alive(first), what="the engine to exit")
        assert not pid_alive(server)  # closed by the engine, not left behind
        assert "asked to stop: the engine closes its servers and exits" in engine_log(run)
        assert saved[0].exists()  # kept for the next engine: the window's sessions come back

        async def called() -> bool:
            try:
                answer = await client.request("mcp/callTool", {"id": "basic.echo", "arguments": {"text": "back"}})
            except Exception:
                return False
            return "back" in str(answer["content"])

        deadline = asyncio.get_running_loop().time() + 30
        while not await called():
            assert asyncio.get_running_loop().time() < deadline, "no new engine answered"
            await asyncio.sleep(0.1)
        [second] = engines(run)
        assert second != first
        assert len(started_pids(counter)) == 2
        assert [t["id"] for t in (await client.request("mcp/activeTools"))["tools"]] == ["basic.echo"]


async def test_each_window_keeps_its_own_log_file(tmp_path: Path, engine_env: dict[str, str]) -> None:
    """What the engine logs for one window goes to that window's --log-file, not another's."""
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    broken, fine = tmp_path / "broken", tmp_path / "fine"
    broken.mkdir()
    fine.mkdir()
    (broken / ".mcp.json").write_text(json.dumps({"mcpServers": {"bad": {"command": 42}}}), encoding="utf-8")
    async with start_sidecar(home, project=broken, trusted=True, env=engine_env) as a:
        (home / "sidecar.log").rename(home / "a.log")  # the next window's file is a new one
        async with start_sidecar(home, project=fine, trusted=True, env=engine_env) as b:
            await a.request("mcp/activate", {"ids": ["basic.echo"]})
            await b.request("mcp/activate", {"ids": ["basic.echo"]})
            assert len(engines(run)) == 1
    a_log, b_log = (home / "a.log").read_text(), (home / "sidecar.log").read_text()
    assert "configuration invalid: 1 problem(s)" in a_log
    assert "configuration invalid" not in b_log
    assert "configuration invalid" in engine_log(run)  # the engine's own log keeps everything


async def said(client: SidecarClient, tool: str, name: str) -> str:
    """What the server behind `tool` (a `get_env` of the basic fixture) has in its environment as `name`."""
    called = await client.request("mcp/callTool", {"id": tool, "arguments": {"name": name}})
    return "".join(block["text"] for block in called["content"] if block.get("type") == "text")


async def test_each_client_resolves_its_variables_in_its_own_environment_and_shares_only_where_equal(
    tmp_path: Path, engine_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine is started by the first window, with its environment; every other client's `${VAR}`,
    secret commands and inherited PATH are still its own. Clients whose servers would get the same
    share the process; a difference a server never sees (another variable) parts only the servers
    that run a secret command, which may read any of them."""
    home = tmp_path / "home"
    counter, secret_counter = tmp_path / "starts", tmp_path / "secret-starts"
    write_config(
        home,
        {
            "basic": basic_stdio("--counter-file", str(counter), env={"GREETING": "${GREETING}"}),
            "secret": basic_stdio(
                "--counter-file", str(secret_counter), env={"FROM_COMMAND": "!printf '%s' \"$SECRET_SOURCE\""}
            ),
        },
    )
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    shared = {**engine_env, "MCP_SIDECAR_SERVER_IDLE": "120"}
    a_env = {**shared, "GREETING": "hello-a", "SECRET_SOURCE": "cmd-a"}
    b_env = {**shared, "GREETING": "hello-b", "SECRET_SOURCE": "cmd-b"}
    c_env = {**a_env, "UNRELATED_SETTING": "c"}  # a's, and one variable no server is given
    tools = ["basic.get_env", "secret.get_env"]
    async with (
        start_sidecar(home, env=a_env) as a,
        start_sidecar(home, env=b_env) as b,
        start_sidecar(home, env=c_env) as c,
    ):
        for window in (a, b, c):
            await window.request("mcp/activate", {"ids": tools})
        assert [await said(w, "basic.get_env", "GREETING") for w in (a, b, c)] == ["hello-a", "hello-b", "hello-a"]
        # (Values under 8 characters: a longer one the server was given comes back redacted.)
        assert [await said(w, "secret.get_env", "FROM_COMMAND") for w in (a, b, c)] == ["cmd-a", "cmd-b", "cmd-a"]
        # A host's gateway with b's environment: both of b's servers serve it.
        for name, value in b_env.items():
            monkeypatch.setenv(name, value)
        async with gateway(home) as (host, _):
            await host.call_tool("mcp_tools", {"activate": tools})
            assert text_of(await host.call_tool("basic__get_env", {"name": "GREETING"})) == "hello-b"
            assert text_of(await host.call_tool("secret__get_env", {"name": "FROM_COMMAND"})) == "cmd-b"
        # A CLI run whose PATH differs from a's: PATH is what every stdio server inherits.
        path = f"{tmp_path / 'bin'}:{os.environ['PATH']}"
        code, out, err = await cli(home, {**a_env, "PATH": path}, "call", "basic.get_env", '{"name": "PATH"}')
        assert (code, err) == (0, "")
        assert path in out
        assert len(engines(run)) == 1
        # basic: a and c share one (GREETING alike), b and the host another, the CLI run its own.
        assert len(started_pids(counter)) == 3
        # secret: c's extra variable parts it from a (the command could have read it); b and the host share.
        assert len(started_pids(secret_counter)) == 3


async def test_a_sidecar_started_as_a_server_runs_in_its_own_process_and_ends_the_loop(
    tmp_path: Path, engine_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrapper script runs the gateway as a project server (`docs/gateway.md`'s runaway, which no
    command line gives away), its definition even asking for this same engine: the engine starts it
    with the engine off, so the copy runs in its own process with the self-start chain it was given
    (from the client's environment), refuses the definition it came through, and never becomes a
    client of the engine that started it."""
    home, project, run = tmp_path / "home", tmp_path / "project", Path(engine_env["XDG_RUNTIME_DIR"])
    home.mkdir()
    project.mkdir()
    wrapper = project / "gw.sh"
    copy_log = tmp_path / "copy.log"
    wrapper.write_text(
        f'#!/bin/sh\nexec "{SCRIPT}" --log-file "{copy_log}" mcp --project . --trust-project --expose search\n',
        encoding="utf-8",
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    async with process_guard(6) as guard:
        # What names the engine (its homes, its keyring), so that the copy attaches to this one.
        same_engine = {k: os.environ[k] for k in runtime.KEY_ENVIRONMENT if k in os.environ}
        same_engine |= {**engine_env, "MCP_SIDECAR_HOME": str(home), TOKEN_VAR: guard.token}
        servers = {"gw": {"command": str(wrapper), "env": same_engine}, "basic": basic_stdio()}
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        for name, value in same_engine.items():
            monkeypatch.setenv(name, value)
        # `--expose search`: this test is about the chain of copies, not which tools a host lists.
        top = ["mcp", "--project", str(project), "--trust-project", "--expose", "search"]
        params = StdioServerParameters(command=SCRIPT, args=top, env=dict(os.environ), cwd=str(project))
        async with Client(params, read_timeout_seconds=90) as host:
            deadline = asyncio.get_running_loop().time() + 60
            while True:
                # The copy's own `mcp_tools` describes its servers, so it changes as they come up: a call
                # may find it changed (`tool_changed`), or deactivated when the change came first
                # (`tool_not_active`), and is made again after a new activation.
                await host.call_tool("mcp_tools", {"activate": ["gw.mcp_tools"]})
                inner = await host.call_tool("mcp_call", {"id": "gw.mcp_tools", "arguments": {"query": "echo"}})
                if not (
                    inner.is_error and ("[tool_changed]" in text_of(inner) or "[tool_not_active]" in text_of(inner))
                ):
                    break
                assert asyncio.get_running_loop().time() < deadline, "the copy's mcp_tools kept changing"
            assert not inner.is_error, text_of(inner)
            assert not guard.tripped, f"{guard.most} marked processes at once: the chain did not stop"
        assert len(engines(run)) == 1
        # The host's front, the engine, and the one copy in a process of its own (never a front of it).
        kinds = [
            "engine" if " -m mcp_sidecar engine " in f" {line} " else "copy" if str(copy_log) in line else "front"
            for line in guard.seen.values()
        ]
        why = (guard.seen, engine_log(run))
        assert sorted(kinds) == ["copy", "engine", "front"], why
        assert guard.most == 3, why
    assert "server gw: not started: it would start this sidecar itself" in copy_log.read_text(encoding="utf-8")
    assert "attached (mcp" in engine_log(run)
    assert engine_log(run).count("attached (") == 1  # the host's front only: the copy never attached


CANARY = "canary-engine-status-7f3e"


async def test_status_shows_the_engine_its_clients_and_each_servers_sharers(
    tmp_path: Path, engine_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two editors and a host on one engine: `mcp/status` from one lists the three (kinds, workspaces,
    which is asking) and the server they share counts three; `mcp-sidecar status`, a front too, shows
    the engine and counts itself; nothing of a definition's environment is shown."""
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio(env={"STATUS_TOKEN": CANARY}), "alone": basic_stdio(shared=False)})
    first_ws, second_ws, host_ws = (tmp_path / name for name in ("first", "second", "host"))
    for workspace in (first_ws, second_ws, host_ws):
        workspace.mkdir()
    run = Path(engine_env["XDG_RUNTIME_DIR"])
    for name, value in engine_env.items():
        monkeypatch.setenv(name, value)  # the gateway's host starts it with this process's environment
    async with (
        start_sidecar(home, project=first_ws, env=engine_env) as first,
        start_sidecar(home, project=second_ws, env=engine_env) as second,
        gateway(home, project=host_ws) as (host, _),
    ):
        await first.request("mcp/status")  # each loads its configuration: its servers' keys
        await second.request("mcp/status")
        await host.list_tools()
        [pid] = engines(run)

        status = await first.request("mcp/status")

        engine = status["engine"]
        assert (engine["pid"], engine["version"]) == (pid, mcp_sidecar.__version__)
        assert engine["uptimeSeconds"] >= 0
        assert [(c["kind"], c["workspace"], c["thisClient"]) for c in engine["clients"]] == [
            ("lsp", str(first_ws), True),
            ("lsp", str(second_ws), False),
            ("mcp", str(host_ws), False),
        ]
        assert all(set(c) == {"kind", "workspace", "since", "thisClient"} for c in engine["clients"])
        assert {row["name"]: row["sharedBy"] for row in status["servers"]} == {"basic": 3, "alone": 1}
        assert CANARY not in json.dumps(status)
        # The first editor's view followed the others joining: its row came again with the count.
        await wait_until(
            lambda: any(r["name"] == "basic" and r["sharedBy"] == 3 for r in first.notifications["mcp/serverStatus"]),
            what="the first editor's basic row counting three sharers",
        )

        code, out, err = await cli(home, engine_env, "status")
        assert (code, err) == (0, "")
        lines = out.splitlines()
        assert lines[0].split()[-2:] == ["Loaded", "Shared"]
        assert [line.split()[-1] for line in lines[1:3]] == ["4", "1"]  # basic and alone: the run shares basic
        assert f"Engine pid {pid} · mcp-sidecar {mcp_sidecar.__version__} · up " in out
        assert "· 4 clients:" in out
        assert f"  lsp  {first_ws}\n" in out
        assert f"  mcp  {host_ws}\n" in out
        assert out.rstrip().endswith("(this client)")
        assert lines[-1].startswith("  cli  ")
        code, out, _ = await cli(home, engine_env, "status", "--json")
        assert code == 0
        ran = json.loads(out)
        assert ran["engine"]["pid"] == pid
        assert [(c["kind"], c["thisClient"]) for c in ran["engine"]["clients"]] == [
            ("lsp", False),
            ("lsp", False),
            ("mcp", False),
            ("cli", True),
        ]
        assert CANARY not in out

        # The runs are over: the editor sees its three clients again.
        async def clients() -> int:
            return len((await first.request("mcp/status"))["engine"]["clients"])

        deadline = asyncio.get_running_loop().time() + 30
        while await clients() != 3:
            assert asyncio.get_running_loop().time() < deadline, "the CLI runs stayed attached"
            await asyncio.sleep(0.05)


async def test_in_a_process_of_its_own_status_has_no_engine(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio()})
    async with start_sidecar(home, env={"MCP_SIDECAR_ENGINE": "off"}) as editor:
        status = await editor.request("mcp/status")
        assert status["engine"] is None
        assert [row["sharedBy"] for row in status["servers"]] == [1]
    code, out, err = await cli(home, {"MCP_SIDECAR_ENGINE": "off"}, "status")
    assert (code, err) == (0, "")
    assert "Engine" not in out
    assert "Shared" not in out.splitlines()[0]


def answering(asked: list[dict[str, Any]]) -> Callable[[Any], Awaitable[dict[str, Any]]]:
    """An editor's person filling in server-everything's form (the defaults, and a name)."""

    async def answer(params: Any) -> dict[str, Any]:
        asked.append(params)
        fields = params["requestedSchema"]["properties"]
        return {
            "action": "accept",
            "content": {k: v["default"] for k, v in fields.items() if "default" in v} | {"name": "Ada"},
        }

    return answer


@pytest.mark.skipif(not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci` to install server-everything")
async def test_a_shared_servers_question_goes_only_to_the_window_whose_call_it_is(
    tmp_path: Path, engine_env: dict[str, str]
) -> None:
    """Two editors offering the same (so they share the server's one process): each one's form is
    asked of that editor alone; asked while both have a call in flight, it is shown to neither (MCP
    does not say whose it is)."""
    home = tmp_path / "home"
    write_config(home, {"everything": {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}})
    offer: dict[str, Any] = {"mcpCapabilities": {"elicitation": {"form": {}}}}
    asked_a: list[dict[str, Any]] = []
    asked_b: list[dict[str, Any]] = []
    elicit = {"id": "everything.trigger-elicitation-request", "arguments": {}, "activate": True}
    async with (
        start_sidecar(home, env=engine_env, options=offer, answers={"mcp/elicit": answering(asked_a)}) as a,
        start_sidecar(home, env=engine_env, options=offer, answers={"mcp/elicit": answering(asked_b)}) as b,
    ):
        first = await a.request("mcp/callTool", elicit, timeout=90)
        assert "Ada" in str(first["content"]), first
        assert (len(asked_a), len(asked_b)) == (1, 0)
        second = await b.request("mcp/callTool", elicit, timeout=90)
        assert "Ada" in str(second["content"]), second
        assert (len(asked_a), len(asked_b)) == (1, 1)
        status = await a.request("mcp/status")
        assert [row["sharedBy"] for row in status["servers"]] == [2]  # one process for both

        # B's long call is in flight (its progress has begun to come) when A's call asks.
        slow = {"duration": 8, "steps": 8}
        long = {
            "id": "everything.trigger-long-running-operation",
            "arguments": slow,
            "activate": True,
            "workDoneToken": "slow",
        }
        running = asyncio.create_task(b.request("mcp/callTool", long, timeout=90))

        def progressed() -> bool:
            reports: list[Any] = list(b.lsp.progress_reports.get("slow", []))  # the `value`s of `$/progress`
            return running.done() or any(report.kind == "report" for report in reports)

        await wait_until(progressed, what="B's call running")
        assert not running.done(), running.result()
        third = await a.request("mcp/callTool", elicit, timeout=90)
        assert not running.done()  # still both in flight when the question came and went
        assert (len(asked_a), len(asked_b)) == (1, 1), third
        assert "Ada" not in str(third["content"])
        assert (await running)["isError"] is False
