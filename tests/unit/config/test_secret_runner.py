"""Secret commands run through /bin/sh with strict limits, and never leave a process behind."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from mcp_sidecar.config.secrets import (
    SecretLookupFailed,
    command_environment,
    fill_secrets,
    run_secret_command,
    time_limit,
)


async def test_stdout_is_trimmed_and_stderr_discarded(tmp_path: Path) -> None:
    value = await run_secret_command("echo '  tok en  '; echo noise >&2", str(tmp_path), 5, os.environ)
    assert value == "tok en"


async def test_runs_in_the_cwd_with_the_clients_environment_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDECAR_SECRET_OWN", "this-process")
    client = {"PATH": os.environ["PATH"], "SIDECAR_SECRET_TEST": "from-the-client"}
    command = 'printf "%s|%s|%s" "$SIDECAR_SECRET_TEST" "${SIDECAR_SECRET_OWN-unset}" "$(pwd)"'
    value = await run_secret_command(command, str(tmp_path), 5, client)
    assert value == f"from-the-client|unset|{tmp_path}"


def test_the_shells_bookkeeping_is_not_passed_on() -> None:
    client = {"PATH": "/usr/bin", "PWD": "/front", "OLDPWD": "/before", "SHLVL": "3", "_": "/usr/bin/env", "T": "t"}
    assert command_environment(client) == {"PATH": "/usr/bin", "T": "t"}


async def test_shell_syntax_is_the_commands_own(tmp_path: Path) -> None:
    value = await run_secret_command(
        "token=$(printf abc) && printf 'Bearer %s' \"$token\"", str(tmp_path), 5, os.environ
    )
    assert value == "Bearer abc"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("printf '  \\n\\t '", "printed nothing"),
        ("true", "printed nothing"),
        ("echo secret-part; exit 3", "exited with status 3"),
        ("kill -9 $$", "was killed by a signal"),
        ("head -c 65537 /dev/zero | tr '\\0' x", "printed more than 64 KiB"),
        ("printf '\\377\\376'", "printed something that is not UTF-8 text"),
    ],
)
async def test_failures_are_described_without_output(tmp_path: Path, command: str, reason: str) -> None:
    with pytest.raises(SecretLookupFailed) as caught:
        await run_secret_command(command, str(tmp_path), 5, os.environ)
    assert caught.value.reason == reason


async def test_exactly_64_kib_is_accepted(tmp_path: Path) -> None:
    value = await run_secret_command("head -c 65536 /dev/zero | tr '\\0' x", str(tmp_path), 5, os.environ)
    assert value == "x" * 65536


async def test_a_missing_cwd_fails_cleanly(tmp_path: Path) -> None:
    with pytest.raises(SecretLookupFailed) as caught:
        await run_secret_command("echo x", str(tmp_path / "missing"), 5, os.environ)
    assert caught.value.reason == "could not be started (check the working directory)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text(encoding="utf-8"))


async def _wait_dead(pid: int, within: float = 5) -> None:
    deadline = time.monotonic() + within
    while _alive(pid):
        assert time.monotonic() < deadline, f"process {pid} is still running"
        await asyncio.sleep(0.02)


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    with pytest.raises(SecretLookupFailed) as caught:
        await run_secret_command(f"sleep 30 & echo $! > {pid_file}; wait", str(tmp_path), 0.5, os.environ)
    assert caught.value.reason == "did not finish within 0.5 s"
    assert time.monotonic() - started < 5
    await _wait_dead(int(pid_file.read_text(encoding="utf-8")))


async def test_cancellation_kills_the_command(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    task = asyncio.create_task(
        run_secret_command(f"sleep 30 & echo $! > {pid_file}; wait", str(tmp_path), 10, os.environ)
    )
    deadline = time.monotonic() + 5
    while not pid_file.exists() or not pid_file.read_text(encoding="utf-8").strip():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _wait_dead(int(pid_file.read_text(encoding="utf-8")))


def test_time_limit_is_ten_seconds_or_a_shorter_timeout() -> None:
    assert time_limit(None) == 10
    assert time_limit(60_000) == 10
    assert time_limit(2_500) == 2.5


async def test_fill_secrets_puts_outputs_in_place_and_masks_them(tmp_path: Path) -> None:
    from mcp_sidecar.config.interpolate import resolve
    from mcp_sidecar.config.validate import parse_server

    config = parse_server(
        "x",
        {"url": "https://x.example/mcp", "headers": {"Authorization": "!printf 'Bearer tok-12345678'", "Plain": "v1"}},
        "global",
    )
    resolved = resolve(config, tmp_path, environ={})
    assert resolved.secret_commands() == {"headers.Authorization": "printf 'Bearer tok-12345678'"}
    filled = await fill_secrets(resolved, str(tmp_path), 5, {})
    assert filled.headers == {"Authorization": "Bearer tok-12345678", "Plain": "v1"}
    assert filled.secret_commands() == {}
    assert {"Bearer tok-12345678", "tok-12345678"} <= filled.secret_values


async def test_fill_secrets_names_the_failing_field_and_stops_the_others(tmp_path: Path) -> None:
    from mcp_sidecar.config.interpolate import resolve
    from mcp_sidecar.config.validate import parse_server

    pid_file = tmp_path / "slow.pid"
    config = parse_server(
        "x",
        {"command": "x", "env": {"SLOW": f"!sleep 30 & echo $! > {pid_file}; wait", "BAD": "!sleep 0.3; exit 7"}},
        "global",
    )
    with pytest.raises(SecretLookupFailed) as caught:
        await fill_secrets(resolve(config, tmp_path, environ={}), str(tmp_path), 5, os.environ)
    assert (caught.value.field_name, caught.value.reason) == ("env.BAD", "exited with status 7")
    await _wait_dead(int(pid_file.read_text(encoding="utf-8")))
