"""One host run, inside a network namespace with only loopback (started by `support.hosts.run`).

    python -m support.hosts.inside RUN_DIR

RUN_DIR/spec.json says which host, the prompt, the script and the gateway's command. This
process brings `lo` up, serves the fake model on it, writes the host's configuration with the
model's port, runs the host to its end (bounded), waits (bounded) for the gateway to exit and
for every other process to end, and writes RUN_DIR/result.json, with the processes still there
(`left_behind`). It is the namespace's first process: orphans become its children (it reaps
them), and when it ends, every process left behind ends with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.hosts.fake_model import Model, serve
from support.hosts.hosts import HOSTS, Setup
from support.hosts.script import from_json
from support.hosts.trace import read_trace


def _exit_logged(trace: Path) -> bool:
    """The gateway's exit, or the wrapper's end (killed by the host, it cannot log the exit)."""
    return any(event.what in ("exit", "wrapper gone") for event in read_trace(trace).events)


async def _gateway_exited(trace: Path, within: float) -> bool:
    """Whether the gateway's exit (or the wrapper's end) was logged within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if _exit_logged(trace):
            return True
        await asyncio.sleep(0.05)
    return False


def _running_gateway(trace: Path) -> int | None:
    """The gateway's process id while it runs, else None."""
    start = next((event for event in read_trace(trace).events if event.what == "start"), None)
    if start is None or not Path(f"/proc/{start.detail['pid']}").exists():
        return None
    return int(start.detail["pid"])


async def _dump_gateway(run_dir: Path) -> None:
    """The stacks of a gateway still running after the host's end, in RUN_DIR/gateway-stack.txt
    (py-spy, from the test extras), so a failed test shows where it hangs."""
    pid = _running_gateway(run_dir / "trace.jsonl")
    spy = Path(sys.executable).parent / "py-spy"
    if pid is None or not spy.exists():
        return
    with (run_dir / "gateway-stack.txt").open("wb") as out:
        dump = await asyncio.create_subprocess_exec(str(spy), "dump", "--pid", str(pid), stdout=out, stderr=out)
        try:
            await asyncio.wait_for(dump.wait(), 30)
        except TimeoutError:
            dump.kill()
            await dump.wait()


def _others() -> list[str]:
    """Every other process of the namespace, as "PID COMMAND LINE"; orphans that have ended are
    reaped on the way (this process is their parent now)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue
        if state == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(entry.name), os.WNOHANG)
            continue
        alive.append(f"{entry.name} {command}")
    return alive


async def _left_behind(within: float) -> list[str]:
    """The processes still running after `within` seconds (fewer as soon as they are gone)."""
    deadline = time.monotonic() + within
    alive = _others()
    while alive and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        alive = _others()
    return alive


async def run(run_dir: Path) -> dict[str, Any]:
    spec = json.loads((run_dir / "spec.json").read_text())
    model = Model(from_json(spec["turns"]), run_dir / "model.jsonl")
    _api, start = HOSTS[spec["host"]]
    home = run_dir / "host-home"
    work = run_dir / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    async with serve(model) as port:
        setup = Setup(home, work, port, spec["gateway"], spec["gateway_env"], spec["prompt"], spec["options"])
        launch = start(setup)
        started = time.time()
        with (run_dir / "host.stdout").open("wb") as out, (run_dir / "host.stderr").open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                *launch.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=work, env=launch.env
            )
            timed_out = False
            try:
                code = await asyncio.wait_for(proc.wait(), spec["timeout"])
            except TimeoutError:
                timed_out = True
                proc.kill()
                code = await proc.wait()
        ended = time.time()
        exited = await _gateway_exited(run_dir / "trace.jsonl", spec["gateway_exit_wait"])
        if not exited:
            await _dump_gateway(run_dir)
        left = await _left_behind(spec["gateway_exit_wait"])
    return {
        "started": started,
        "ended": ended,
        "exit_code": code,
        "timed_out": timed_out,
        "gateway_exited": exited,
        "left_behind": left,
        "port": port,
    }


def main() -> None:
    run_dir = Path(sys.argv[1])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    result = asyncio.run(run(run_dir))
    (run_dir / "result.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
