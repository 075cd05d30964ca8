"""Run the real `mcp-sidecar` CLI in a fresh process, as a user does."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_sidecar.engine.kinds import ENGINE_ENV, OFF

CONSOLE_SCRIPT = Path(sys.executable).with_name("mcp-sidecar")

ENGINE_LINE = re.compile(r"Engine pid \d+ · mcp-sidecar \S+ · up \S+(?: \S+)? · \d+ clients?:")
"""The first of the engine's lines under a status matrix (`output/render.py`'s `engine_lines`)."""


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


async def cli(home: Path | str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """`mcp-sidecar ARGS` with MCP_SIDECAR_HOME=home, in `cwd` (default: home), at most 60 s.

    `env` entries are added to the environment (a test keyring's D-Bus address, say).
    """
    command = [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "mcp_sidecar"]
    proc = await asyncio.create_subprocess_exec(
        *command,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {}), "MCP_SIDECAR_HOME": str(home)},
        cwd=cwd or home,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return Run(proc.returncode, out.decode(), err.decode())


def engine_on(env: dict[str, str] | None = None) -> bool:
    """Whether a CLI run with this environment (added to the test's) goes through the engine."""
    value = {**os.environ, **(env or {})}.get(ENGINE_ENV, "")
    return value.strip().lower() not in OFF


def split_engine(text: str) -> tuple[str, list[str]]:
    """A status text's matrix, as a process of its own prints it, and the engine's lines under it (none
    without an engine). The clients they list depend on what else runs at the time."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if ENGINE_LINE.fullmatch(line.rstrip("\n")):
            return "".join(lines[:i]), [rest.rstrip("\n") for rest in lines[i:]]
    return text, []


def check_engine_lines(lines: list[str], env: dict[str, str] | None = None) -> None:
    """With the engine (the default): its line, then its clients, this CLI run among them, marked;
    with it off: none."""
    if not engine_on(env):
        assert lines == []
        return
    assert lines, "no engine lines under the status matrix"
    assert ENGINE_LINE.fullmatch(lines[0])
    assert all(line.startswith(("  lsp  ", "  mcp  ", "  cli  ")) for line in lines[1:])
    [this] = [line for line in lines[1:] if line.endswith(" (this client)")]
    assert this.startswith("  cli  ")


def without_engine(result: dict[str, Any]) -> dict[str, Any]:
    """A `status --json` result without what differs between runs on one engine: `engine` (its uptime,
    its clients) and each row's `sharedBy` (how many clients use the server at that moment)."""
    rows = [{k: v for k, v in row.items() if k != "sharedBy"} for row in result.get("servers", [])]
    return {key: value for key, value in result.items() if key != "engine"} | {"servers": rows}


def plain_status(text: str) -> str:
    """A status text as a process of its own prints it: without the engine's lines under the matrix
    and without its `Shared` column (how many clients share each server, which depends on what else
    is attached to the engine at the time)."""
    matrix, engine = split_engine(text)
    if engine and not text.endswith("\n"):
        matrix = matrix.removesuffix("\n")  # the line break before the engine's lines (an editor's text)
    lines = matrix.split("\n")
    if not lines or not lines[0].endswith("  Shared"):
        return matrix
    column = len(lines[0]) - len("Shared")
    out = [lines[0][: column - 2]]
    for line in lines[1:]:
        if len(line) > column and line[column - 2 : column] == "  " and line[column:].strip().isdigit():
            line = line[:column].rstrip()
        out.append(line)
    return "\n".join(out)
