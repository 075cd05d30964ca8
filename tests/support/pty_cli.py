"""Run the real `mcp-sidecar` CLI on a pseudo-terminal, as a person at a terminal does.

stdin and stderr are the terminal (the slave side of a pty, made the process's controlling
terminal, so Ctrl-C typed there is SIGINT from the line discipline, not a signal sent by
the test); stdout is a pipe, so the result can be read apart from the questions.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from support.cli import CONSOLE_SCRIPT, Run

_CONTROLLING_TTY = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); os.execv(sys.argv[1], sys.argv[1:])"
)
"""Run in the child's new session: make the pty on fd 0 its controlling terminal, then exec the CLI."""


class Terminal:
    """The person's side of the pty: what the CLI wrote there so far, and typing into it."""

    def __init__(self, proc: asyncio.subprocess.Process, master: int) -> None:
        self.proc = proc
        self.master = master
        self.screen = ""
        """Everything written to the terminal so far (the CLI's questions and the echo of what was typed)."""
        self._seen = 0
        self._grew = asyncio.Event()
        self._closed = False
        asyncio.get_running_loop().add_reader(master, self._readable)

    def _readable(self) -> None:
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            chunk = b""  # EIO: every process let go of the terminal
        if not chunk:
            self._closed = True
            asyncio.get_running_loop().remove_reader(self.master)
        self.screen += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
        self._grew.set()

    async def expect(self, text: str, timeout: float = 60) -> str:
        """Wait until `text` appears after what the last `expect` matched; returns the screen up to it."""

        async def appeared() -> str:
            while (at := self.screen.find(text, self._seen)) < 0:
                if self._closed:
                    raise AssertionError(f"the terminal closed before {text!r}; it shows:\n{self.screen}")
                self._grew.clear()
                await self._grew.wait()
            shown, self._seen = self.screen[self._seen : at + len(text)], at + len(text)
            return shown

        try:
            return await asyncio.wait_for(appeared(), timeout)
        except TimeoutError:
            raise AssertionError(f"waited {timeout} s for {text!r}; the terminal shows:\n{self.screen}") from None

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def press(self, key: bytes) -> None:
        """A control key as the terminal sends it: b"\\x03" Ctrl-C, b"\\x04" Ctrl-D."""
        os.write(self.master, key)

    async def finish(self, timeout: float = 60) -> Run:
        """Wait for the CLI to exit: its status, stdout, and the whole terminal as stderr."""
        assert self.proc.stdout is not None
        try:
            out = await asyncio.wait_for(self.proc.stdout.read(), timeout)
            code = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            message = f"the CLI did not exit within {timeout} s; the terminal shows:\n{self.screen}"
            raise AssertionError(message) from None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drained(), 5)
        return Run(code, out.decode(), self.screen)

    async def _drained(self) -> None:
        while not self._closed:
            self._grew.clear()
            await self._grew.wait()

    def close(self) -> None:
        if not self._closed:
            asyncio.get_running_loop().remove_reader(self.master)
        os.close(self.master)
        if self.proc.returncode is None:
            self.proc.kill()


@contextlib.asynccontextmanager
async def on_terminal(home: Path, *args: str) -> AsyncIterator[Terminal]:
    """`mcp-sidecar ARGS` with MCP_SIDECAR_HOME=home in `home`, its stdin and stderr a terminal."""
    command = [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "mcp_sidecar"]
    master, slave = os.openpty()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _CONTROLLING_TTY,
            *command,
            *args,
            stdin=slave,
            stdout=asyncio.subprocess.PIPE,
            stderr=slave,
            start_new_session=True,
            env={**os.environ, "MCP_SIDECAR_HOME": str(home), "TERM": "dumb"},
            cwd=home,
        )
    finally:
        os.close(slave)
    terminal = Terminal(proc, master)
    try:
        yield terminal
    finally:
        terminal.close()
        await proc.wait()
