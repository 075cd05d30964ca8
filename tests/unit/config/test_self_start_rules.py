"""mcp-sidecar recognised in a definition however it is spelled, and refused exactly when it would
start itself (`config/self_start.py`); the chain a sidecar was started with stops a cycle one level down."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mcp_sidecar.config import self_start
from mcp_sidecar.config.self_start import CHAIN_ENV, MAX_NESTING, chain_key, invocation, refusal
from mcp_sidecar.config.validate import parse_server
from mcp_sidecar.connections.launch import chain_environment, resolve_server
from mcp_sidecar.protocol.errors import SidecarError

GATEWAY = ("mcp", "--project", ".", "--trust-project")

SPELLINGS = [
    ("mcp-sidecar", [*GATEWAY]),
    ("/home/me/.venv/bin/mcp-sidecar", [*GATEWAY]),
    ("MCP-SIDECAR.EXE", [*GATEWAY]),
    ("python3", ["-m", "mcp_sidecar", *GATEWAY]),
    ("/usr/bin/python3.11", ["-I", "-u", "-X", "utf8", "-m", "mcp_sidecar", *GATEWAY]),
    ("python", ["-Im", "mcp_sidecar", *GATEWAY]),
    ("python", ["-c", "from mcp_sidecar.cli import main; main()", *GATEWAY]),
    ("python", ["/home/me/.venv/bin/mcp-sidecar", *GATEWAY]),
    ("python", ["/src/sidecar/mcp_sidecar/__main__.py", *GATEWAY]),
    ("npx", ["-y", "mcp-sidecar@latest", *GATEWAY]),
    ("npx", ["--package=mcp-sidecar", "whatever", *GATEWAY]),
    ("npm", ["exec", "--", "mcp-sidecar", *GATEWAY]),
    ("bunx", ["@someone/mcp-sidecar", *GATEWAY]),
    ("uvx", ["mcp-sidecar==1.0", *GATEWAY]),
    ("uvx", ["--from", "mcp-sidecar[extra]", "mcp-sidecar", *GATEWAY]),
    ("uv", ["tool", "run", "mcp-sidecar", *GATEWAY]),
    ("uv", ["run", "--with", "x", "--", "python", "-m", "mcp_sidecar", *GATEWAY]),
    ("pipx", ["run", "--spec", "mcp-sidecar", "mcp-sidecar", *GATEWAY]),
    ("poetry", ["run", "mcp-sidecar", *GATEWAY]),
    ("env", ["-u", "X", "A=1", "nice", "-n", "5", "timeout", "-s", "KILL", "30", "mcp-sidecar", *GATEWAY]),
    ("env", ["-S", "mcp-sidecar mcp --project . --trust-project"]),
    ("nohup", ["setsid", "stdbuf", "-o", "0", "mcp-sidecar", *GATEWAY]),
    ("bash", ["-lc", "cd . && exec mcp-sidecar mcp --project . --trust-project"]),
    ("sh", ["-c", "echo start >&2; X=1 mcp-sidecar mcp --trust --project=."]),
    ("/bin/zsh", ["-e", "-c", "exec python3 -m mcp_sidecar mcp --project . --trust-project"]),
]


@pytest.mark.parametrize(("command", "args"), SPELLINGS)
def test_every_spelling_of_the_gateway_is_recognised(command: str, args: list[str], tmp_path: Path) -> None:
    found = invocation(command, args, str(tmp_path), {})
    assert found is not None
    assert (found.mode, found.project, found.trusts_project) == ("serving", ".", True)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("python3", ["-I", "/x/site-packages/mcp_sidecar/demo/__main__.py"]),  # the bundled demo server
        ("python3", ["-m", "mcp_sidecar.demo"]),
        ("python3", ["server.py"]),
        ("python3", ["-"]),
        ("node", ["dist/index.js"]),
        ("npx", ["-y", "@modelcontextprotocol/server-everything"]),
        ("npm", ["install", "mcp-sidecar"]),
        ("uv", ["sync"]),
        ("mcp-sidecar", ["--version"]),
        ("mcp-sidecar", ["-v", "mcp", "--help"]),
        ("sh", ["./run-server.sh"]),
        ("sh", ["-c", "echo 'mcp-sidecar mcp'"]),
        ("bash", ["-c", "unbalanced 'quote"]),
    ],
)
def test_other_programs_are_not_taken_for_the_sidecar(command: str, args: list[str], tmp_path: Path) -> None:
    found = invocation(command, args, str(tmp_path), {})
    assert found is None or found.mode == "other"


def test_modes_and_options_are_read_as_the_cli_reads_them(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    editor = invocation("mcp-sidecar", [], cwd, {})
    assert editor is not None
    assert editor.mode == "editor"
    assert invocation("mcp-sidecar", ["serve"], cwd, {}).mode == "editor"  # type: ignore[union-attr]
    call = invocation("mcp-sidecar", ["--project", "/p", "call", "gw.x"], cwd, {})
    assert call is not None
    assert (call.mode, call.project, call.trusts_project) == ("serving", "/p", False)
    other = invocation("mcp-sidecar", ["conformance-client", "http://127.0.0.1:1/mcp"], cwd, {})
    assert other is not None
    assert other.mode == "other"
    moved = invocation("env", ["-C", "sub", "MCP_SIDECAR_HOME=/h", "mcp-sidecar", "mcp"], cwd, {})
    assert moved is not None
    assert moved.cwd == os.path.join(cwd, "sub")
    assert moved.env == {"MCP_SIDECAR_HOME": "/h"}


def test_a_renamed_copy_of_the_console_script_is_recognised_and_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    script = tmp_path / "gw"
    script.write_text(f"#!{sys.executable}\nfrom mcp_sidecar.cli import main\nmain()\n", encoding="utf-8")
    script.chmod(0o755)
    found = invocation(str(script), ["mcp"], str(tmp_path), {})
    assert found is not None
    assert found.mode == "serving"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert invocation(str(fifo), ["mcp"], str(tmp_path), {}) is None  # would block a plain open()


def gateway_found(cwd: Path, *args: str) -> self_start.Invocation:
    found = invocation("mcp-sidecar", ["mcp", *args], str(cwd), {})
    assert found is not None
    return found


def test_a_project_gateway_is_refused_for_its_own_project_only(tmp_path: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    (project / "link").symlink_to(project)
    env: dict[str, str] = {}
    for args in (("--project", ".", "--trust-project"), ("--trust-project",), ("--project", "link", "--trust")):
        why = refusal("project", gateway_found(project, *args), project, env)
        assert why is not None, args
        assert "reads this same configuration" in why
    # Another project's gateway, or one that does not trust this project, starts other servers.
    assert refusal("project", gateway_found(project, "--project", str(other), "--trust-project"), project, env) is None
    assert refusal("project", gateway_found(project, "--project", "."), project, env) is None


def test_a_global_gateway_is_refused_unless_it_reads_another_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    same = refusal("global", gateway_found(tmp_path, "--project", "/elsewhere"), None, {"MCP_SIDECAR_HOME": str(home)})
    assert same is not None
    elsewhere = {"MCP_SIDECAR_HOME": str(tmp_path / "another")}
    assert refusal("global", gateway_found(tmp_path), None, elsewhere) is None
    assert refusal("global", invocation("mcp-sidecar", [], str(tmp_path), {}), None, elsewhere) is not None  # type: ignore[arg-type]


def test_the_chain_refuses_the_definition_it_came_through_and_any_past_the_depth() -> None:
    key = chain_key({"command": "./gw.sh"}, "/p")
    assert key == chain_key({"command": "./gw.sh"}, "/p")
    assert key != chain_key({"command": "./gw.sh"}, "/q")
    assert self_start.chain_refusal(("0" * 16, key), key) is not None
    assert self_start.chain_refusal(("0" * 16,), key) is None
    deep = tuple(f"{i:016x}" for i in range(MAX_NESTING))
    assert self_start.chain_refusal(deep, key) is not None
    # A garbled chain still counts its entries; the marker cannot be reset by damaging it.
    assert self_start.inherited_chain({CHAIN_ENV: "zz,0123456789abcdef,"}) == ("?", "0123456789abcdef")


async def test_resolving_refuses_before_anything_runs_and_passes_the_chain_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    definition = {"command": "./gw.sh", "env": {"TOKEN": f"!touch {marker} && echo ran"}}
    server = parse_server("gw", definition, "project")
    key = chain_key(definition, str(tmp_path))
    # The chain is the client's (a front started as a server carries it), never this process's.
    monkeypatch.setenv(CHAIN_ENV, "1" * 16)
    client = {"PATH": os.environ["PATH"], CHAIN_ENV: f"{'1' * 16},{key}"}
    with pytest.raises(SidecarError) as info:
        await resolve_server(server, tmp_path, client, "connect")
    diag = info.value.diagnostic
    assert (diag.code, diag.server, diag.operation) == ("server_starts_itself", "gw", "connect")
    assert "through this same definition" in diag.message
    assert not marker.exists()  # its secret command never ran
    monkeypatch.setenv(CHAIN_ENV, f"{'1' * 16},{key}")
    assert (await resolve_server(server, tmp_path, {"PATH": os.environ["PATH"]}, "connect")).command == "./gw.sh"
    assert marker.exists()
    plain = parse_server("p", {"command": "node", "args": ["s.js"]}, "global")
    client = {CHAIN_ENV: "2" * 16}
    resolved = await resolve_server(plain, tmp_path, client, "connect")
    passed = chain_environment(plain, resolved, client)[CHAIN_ENV].split(",")
    assert passed == ["2" * 16, chain_key(plain.raw, str(tmp_path))]
