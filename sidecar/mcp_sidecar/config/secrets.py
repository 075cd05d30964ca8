"""Secret commands: a leading `!` in a `headers` or stdio `env` value runs the rest through
`/bin/sh` when the server connects.

The command runs in the server's working directory with the client's environment
(`command_environment`: the front's, in the engine; this process's in-process), its
stderr discarded and its stdout trimmed. Empty output, a nonzero exit, more than 64 KiB of
output or more than 10 s (or a shorter `timeoutMs`) fail the lookup. The command runs in
its own process group, which is killed when the lookup is cancelled (a reconnect, a
shutdown) or times out, so no helper outlives it. Failures are described in our words:
never the command's output, which may hold part of a secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import sys
from collections.abc import Mapping

from mcp_sidecar.config.interpolate import ResolvedServer, SecretCommand

MAX_OUTPUT_BYTES = 64 * 1024
MAX_SECONDS = 10.0
SHELL = "/bin/sh"
SHELL_SET = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})
"""Variables a shell keeps for itself (where it is, how deep, its last word): the command's shell
sets them again, so they are not passed, and two clients that differ only there run a command alike."""


def command_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """What a secret command runs with: the client's whole environment (a helper such as `op`, `pass`
    or `gh` reads its own variables), but the shell's bookkeeping."""
    return {key: value for key, value in environ.items() if key not in SHELL_SET}


class SecretLookupFailed(Exception):
    """`reason` is ours and safe to show; it never contains command output."""

    def __init__(self, reason: str, field_name: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.field_name = field_name


async def fill_secrets(
    resolved: ResolvedServer, cwd: str, timeout_s: float, environ: Mapping[str, str]
) -> ResolvedServer:
    """Run every secret command of one connection attempt at once (in the client's `environ`) and put
    the outputs in place.

    The first failure cancels (and kills) the others. The outputs join the values masked in
    the server's captured log and in what it answers: whole, and word by word (the token of
    `Bearer <token>`).
    """
    commands = resolved.secret_commands()
    outputs: dict[str, str] = {}

    async def lookup(field_name: str, command: str) -> None:
        try:
            outputs[field_name] = await run_secret_command(command, cwd, timeout_s, environ)
        except SecretLookupFailed as exc:
            raise SecretLookupFailed(exc.reason, field_name) from None

    try:
        async with asyncio.TaskGroup() as group:
            for field_name, command in commands.items():
                group.create_task(lookup(field_name, command))
    except BaseExceptionGroup as exc:
        first = exc.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None

    def filled(group: str, values: dict[str, str | SecretCommand]) -> dict[str, str | SecretCommand]:
        return {k: outputs.get(f"{group}.{k}", v) for k, v in values.items()}

    found = {v for v in outputs.values() if len(v) >= 4}
    found |= {word for v in outputs.values() for word in v.split() if len(word) >= 8}
    return dataclasses.replace(
        resolved,
        env=filled("env", resolved.env),
        headers=filled("headers", resolved.headers),
        secret_values=resolved.secret_values | found,
        passed_secrets=resolved.passed_secrets | found,
    )


def time_limit(timeout_ms: int | None) -> float:
    """10 s, or the server's `timeoutMs` when shorter."""
    if timeout_ms is None:
        return MAX_SECONDS
    return min(MAX_SECONDS, timeout_ms / 1000)


async def run_secret_command(command: str, cwd: str | None, timeout_s: float, environ: Mapping[str, str]) -> str:
    """The command's trimmed stdout, or SecretLookupFailed; it runs with `command_environment(environ)`."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            SHELL,
            "-c",
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            env=command_environment(environ),
            start_new_session=True,  # its own process group, so everything it starts can be killed
        )
    )
    try:
        proc = await asyncio.shield(starting)
    except OSError:
        raise SecretLookupFailed("could not be started (check the working directory)") from None
    except asyncio.CancelledError:
        # Cancelled while starting: the command may already run (and start others); kill them all.
        with contextlib.suppress(BaseException):
            await _kill_group(await starting)
        raise
    succeeded = False
    try:
        try:
            async with asyncio.timeout(timeout_s):
                output = await _read_bounded(proc)
                code = await proc.wait()
        except TimeoutError:
            raise SecretLookupFailed(f"did not finish within {_seconds(timeout_s)}") from None
        if output is None:
            raise SecretLookupFailed(f"printed more than {MAX_OUTPUT_BYTES // 1024} KiB")
        if code != 0:
            raise SecretLookupFailed(f"exited with status {code}" if code > 0 else "was killed by a signal")
        try:
            text = output.decode("utf-8")
        except UnicodeDecodeError:
            raise SecretLookupFailed("printed something that is not UTF-8 text") from None
        text = text.strip()
        if not text:
            raise SecretLookupFailed("printed nothing")
        succeeded = True
        return text
    finally:
        if not succeeded:
            await _kill_group(proc)


async def _read_bounded(proc: asyncio.subprocess.Process) -> bytes | None:
    """All of stdout, or None as soon as it exceeds the limit."""
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await proc.stdout.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_OUTPUT_BYTES:
            return None
        chunks.append(chunk)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """After a failure, timeout or cancellation: kill the command's whole group and reap the shell.

    A command that succeeded keeps anything it started in the background (an agent a helper
    like `op` may leave running on purpose).
    """
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    # Shielded: a cancelled caller must still reap the child, or it stays a zombie.
    with contextlib.suppress(BaseException):
        await asyncio.shield(proc.wait())


def _seconds(value: float) -> str:
    return f"{value:g} s"
