"""Run the real `mcp-sidecar` CLI in a fresh process, as a user does."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONSOLE_SCRIPT = Path(sys.executable).with_name("mcp-sidecar")


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
