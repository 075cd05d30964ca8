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
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_sidecar
from support.gateway import gateway, text_of, tool_names
from support.servers import basic_stdio, started_pids
from support.sidecar import diagnostic_of, start_sidecar, wait_until, write_config

pytestmark = pytest.mark.asyncio


@pytest.fixture
def engine_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    run = Path(tempfile.mkdtemp(prefix="rt-"))  # pytest's paths are too long for a socket's name
    yield {"MCP_SIDECAR_ENGINE": "on", "XDG_RUNTIME_DIR": str(run), "MCP_SIDECAR_ENGINE_GRACE": "2"}
    for pid in engines(run):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(run)


def engines(run_dir: Path) -> list[int]:
    """The engine processes started under this runtime directory."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp_sidecar" in cmdline and b"engine" in cmdline and f"XDG_RUNTIME_DIR={run_dir}".encode() in environ:
            found.append(int(entry.name))
    return found


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
