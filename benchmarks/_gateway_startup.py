"""The gateway's start-up and stop, against a bare SDK `MCPServer` (the floor): part of `gateway.py`.

Start-up: a host (this script, raw newline-delimited JSON-RPC over pipes) launches the process
and sends its opening request at once: `initialize` (2025-11-25) or `server/discover`
(2026-07-28); when that is answered, `tools/list`. Two times from the launch: to the first
answer, and to the `tools/list` answer. The gateway's home configures SERVERS stdio servers (none
is started by these requests); the floor is `_bare_mcpserver.py`, an `MCPServer` with one tool,
which has nothing to configure. Launches alternate between the two.

Stop: a gateway that connected basic.py and called it, stopped as Claude Code stops it
(SIGINT): the time from the signal to the process's exit, its exit code, and whether basic.py is
gone by then.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import BASIC_SERVER, BENCHMARKS, PYTHON, sidecar_env, table, write_config

BARE_SERVER = BENCHMARKS / "_bare_mcpserver.py"
SERVERS = 6
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}
TIMEOUT_S = 60.0


class Host:
    """One launched process, spoken to with newline-delimited JSON-RPC."""

    def __init__(self, proc: asyncio.subprocess.Process, launched: float) -> None:
        self.proc = proc
        self.launched = launched

    @classmethod
    async def launch(cls, argv: list[str], env: dict[str, str]) -> Host:
        launched = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        return cls(proc, launched)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    def cpu_s(self) -> float:
        """The process's own CPU time so far (its threads, not its children), from /proc."""
        stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def answer(self, request_id: int) -> float:
        """Seconds from the launch to the answer of `request_id` (notifications are skipped)."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(TIMEOUT_S):
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    raise RuntimeError("the process ended before answering")
                message = json.loads(line)
                if message.get("id") == request_id:
                    if "error" in message:
                        raise RuntimeError(f"request {request_id}: {message['error']}")
                    return time.perf_counter() - self.launched

    async def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), TIMEOUT_S)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


async def opening(argv: list[str], env: dict[str, str], era: str) -> tuple[float, float, float]:
    """(launch → first answer, launch → `tools/list` answer, the process's CPU time by then), in ms.

    The CPU time does not grow with the load of a shared machine as the wall time does."""
    host = await Host.launch(argv, env)
    try:
        if era == "handshake":
            host.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
            first = await host.answer(1)
            host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            host.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        else:
            host.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}})
            first = await host.answer(1)
            host.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}})
        listed = await host.answer(2)
        cpu = host.cpu_s()
    finally:
        await host.close()
    return first * 1000, listed * 1000, cpu * 1000


def gateway_home(root: Path, servers: int) -> dict[str, str]:
    home = root / "home"
    write_config(
        home,
        {
            f"basic{i}": {"command": PYTHON, "args": [str(BASIC_SERVER), "stdio"], "description": f"Fixture server {i}"}
            for i in range(servers)
        },
    )
    return {**sidecar_env(home), "PYTHONDONTWRITEBYTECODE": "0"}


async def bench_startup(launches: int, servers: int = SERVERS) -> dict[str, Any]:
    gateway = [PYTHON, "-m", "mcp_sidecar", "mcp"]
    bare = [PYTHON, str(BARE_SERVER)]
    found: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    with tempfile.TemporaryDirectory(prefix="gw-start-") as tmp:
        env = gateway_home(Path(tmp), servers)
        for era in ("handshake", "modern"):
            await opening(gateway, env, era)  # the start-up code cache and .pyc files, once
            runs: dict[str, list[tuple[float, float, float]]] = {"gateway": [], "bare MCPServer": []}
            for i in range(launches):
                order = [("gateway", gateway), ("bare MCPServer", bare)]
                for name, argv in order if i % 2 == 0 else reversed(order):
                    runs[name].append(await opening(argv, env, era))
            found[era] = runs
    return {"launches": launches, "servers": servers, "runs": found}


def _ms(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def report_startup(result: dict[str, Any]) -> list[str]:
    rows = []
    medians: dict[tuple[str, str], float] = {}
    for era, runs in result["runs"].items():
        for name, pairs in runs.items():
            first = _ms([p[0] for p in pairs])
            listed = _ms([p[1] for p in pairs])
            medians[(era, name)] = max(first[1], listed[1])
            cpu = statistics.median(p[2] for p in pairs)
            rows.append([era, name, *(f"{v:.0f}" for v in first), *(f"{v:.0f}" for v in listed), f"{cpu:.0f}"])
    print(
        table(
            [
                "era",
                "process",
                "first min",
                "first median",
                "first max",
                "list min",
                "list median",
                "list max",
                "CPU by then (median)",
            ],
            rows,
            title=(
                f"Launch to the first answer and to the first tools/list answer (ms; {result['launches']} launches "
                f"each, alternating; the gateway's home configures {result['servers']} stdio servers, none started)"
            ),
        )
    )
    worst = max(v for (_, name), v in medians.items() if name == "gateway")
    return [
        f"goal: first answer and first tools/list at most 300 ms at the median -> {worst:.0f} ms: "
        + ("MET" if worst <= 300 else "MISSED")
    ]


async def stop_once(root: Path) -> tuple[float, int, bool]:
    """(signal → exit in ms, exit code, the server outlived the gateway)."""
    started = root / "started.txt"
    started.unlink(missing_ok=True)
    home = root / "stop-home"
    basic = {"command": PYTHON, "args": [str(BASIC_SERVER), "stdio", "--counter-file", str(started)]}
    write_config(home, {"basic": basic})
    host = await Host.launch([PYTHON, "-m", "mcp_sidecar", "mcp", "--list-wait", "0"], sidecar_env(home))
    try:
        host.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
        await host.answer(1)
        host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        activate = {"name": "mcp_tools", "arguments": {"activate": ["basic.echo"]}}
        host.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": activate})
        await host.answer(2)
        call = {"name": "mcp_call", "arguments": {"id": "basic.echo", "arguments": {"text": "x"}}}
        host.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        await host.answer(3)
        server = int(started.read_text().split()[0])
        signalled = time.perf_counter()
        host.proc.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(host.proc.wait(), TIMEOUT_S)
        took = (time.perf_counter() - signalled) * 1000
    finally:
        await host.close()
    return took, code, _alive(server)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


async def bench_stop(runs: int) -> list[tuple[float, int, bool]]:
    with tempfile.TemporaryDirectory(prefix="gw-stop-") as tmp:
        return [await stop_once(Path(tmp)) for _ in range(runs)]


def report_stop(results: list[tuple[float, int, bool]]) -> list[str]:
    times = [r[0] for r in results]
    codes = sorted({r[1] for r in results})
    left = sum(r[2] for r in results)
    print(
        table(
            ["runs", "min", "median", "max", "exit codes", "servers left running"],
            [[len(results), *(f"{v:.0f}" for v in _ms(times)), ", ".join(map(str, codes)), left]],
            title="SIGINT to exit, with basic.py connected and called (ms)",
        )
    )
    median = statistics.median(times)
    met = median <= 100 and codes == [0] and left == 0
    return [
        f"goal: SIGINT ends the gateway within 100 ms, exit 0, no server left -> {median:.0f} ms median, "
        f"exit {codes}, {left} left: " + ("MET" if met else "MISSED")
    ]
