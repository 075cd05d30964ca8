"""Running a real MCP host once against the gateway and the fake model, with no network but loopback.

`run_host` writes the run's spec, starts `support.hosts.inside` in new network, PID and mount
namespaces (`unshare`, as root), and reads back what happened: every model request (`requests`,
`turns`), every line between host and gateway with its time (`trace`), the host's output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mcp_sidecar.engine.kinds import ENGINE_ENV
from support.expose import searched
from support.hosts import flows
from support.hosts.dialect import Dialect, Offered, Result
from support.hosts.fake_model import DIALECTS
from support.hosts.hosts import HOSTS, NODE_BIN
from support.hosts.script import Turn, to_json
from support.hosts.trace import Trace, read_trace
from support.servers import TESTS_DIR

TEE = Path(__file__).resolve().parent / "rpc_tee.py"
GATEWAY = Path(sys.executable).parent / "mcp-sidecar"
UNSHARE = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"]
GATEWAY_EXIT_WAIT = 10.0
"""How long after the host's exit the run waits for the gateway's exit, then for every other
process to end (each bounded by this), before the namespace ends them."""


@dataclass(frozen=True)
class ModelRequest:
    """One request the host made to the fake model, and what the model answered."""

    t: float
    path: str
    body: Any
    turn: int | None
    answer: Any
    dialect: Dialect

    @property
    def offered(self) -> list[Offered]:
        return self.dialect.offered(self.body) if isinstance(self.body, dict) else []

    @property
    def names(self) -> list[str]:
        return [tool.name for tool in self.offered]

    @property
    def announced(self) -> list[str]:
        """Tools named to the model without being offered (Claude Code's deferred tools)."""
        return self.dialect.announced(self.body) if isinstance(self.body, dict) else []

    @property
    def visible(self) -> list[str]:
        """Every tool name the model can see: offered, or announced (each once)."""
        return list(dict.fromkeys(self.names + self.announced))

    @property
    def context(self) -> str:
        """Every text the model reads but the tools' definitions."""
        return self.dialect.context(self.body) if isinstance(self.body, dict) else ""

    @property
    def results(self) -> list[Result]:
        return self.dialect.results(self.body) if isinstance(self.body, dict) else []

    @property
    def system(self) -> str:
        return self.dialect.system(self.body) if isinstance(self.body, dict) else ""


@dataclass
class HostRun:
    host: str
    exit_code: int
    timed_out: bool
    gateway_exited: bool
    left_behind: list[str]
    started: float
    ended: float
    requests: list[ModelRequest]
    trace: Trace
    stdout: str
    stderr: str
    run_dir: Path

    @property
    def turns(self) -> list[ModelRequest]:
        """The conversation's requests (those that took a turn of the script), in order."""
        return [r for r in self.requests if r.turn is not None]

    def request_after(self, marker: str) -> ModelRequest | None:
        """The first conversation request that carries a tool result whose text holds `marker`:
        the model's first look at that result."""
        return next((r for r in self.turns if any(marker in result.text for result in r.results)), None)

    def result(self, tool_suffix: str) -> Result | None:
        """The first result of a tool whose name ends with `tool_suffix`, as the model read it."""
        return next((res for r in self.turns for res in r.results if res.name.endswith(tool_suffix)), None)

    @property
    def relisted_before_the_activation_answer(self) -> bool:
        """Whether the gateway answered the host's `tools/list` that followed the activation's
        `list_changed` before it answered the activation (so the host had the tool in time)."""
        activation = next((m for m in self.trace.requests("tools/call") if "activate" in json.dumps(m.msg)), None)
        return activation is not None and self.trace.relisted_before_answering(activation)

    @property
    def instructions(self) -> str | None:
        """The `instructions` of the gateway's first successful `server/discover` or `initialize`."""
        for message in self.trace.messages:
            result = message.msg.get("result") if message.direction == "out" and message.msg else None
            if isinstance(result, dict) and "capabilities" in result:
                return str(result.get("instructions", ""))
        return None

    @property
    def gateway_exit(self) -> int | None:
        """The gateway's exit status as the wrapper saw it (negative: the signal that ended it)."""
        event = self.trace.event("exit")
        return int(event.detail["code"]) if event is not None else None

    def report(self) -> str:
        """Everything a failed assertion should show: the model's requests and the MCP trace."""
        lines = [f"{self.host}: exit {self.exit_code}{' (timed out)' if self.timed_out else ''}, dir {self.run_dir}"]
        for r in self.requests:
            mcp = [name for name in r.visible if "sidecar" in name or "mcp" in name]
            lines.append(f"{r.t:.3f} model {r.path} turn={r.turn} mcp tools={mcp} answer={r.answer}")
            lines += [f"    result {res.name}: {res.text[:160]!r} error={res.is_error}" for res in r.results]
        lines.append(self.trace.dump())
        if self.left_behind:
            lines.append("processes left after the host ended: " + "; ".join(self.left_behind))
        stack = self.run_dir / "gateway-stack.txt"
        if stack.exists():
            lines.append(
                "the gateway was still running after the host ended; its stacks:\n" + stack.read_text()[-4000:]
            )
        lines.append("host stderr: " + self.stderr[-3000:])
        return "\n".join(lines)


def gateway_env(sidecar_home: Path) -> dict[str, str]:
    """What the host passes its gateway: the sidecar's home; with the engine (the default) a short
    grace, so the engine the gateway's front started, and its servers, end soon after the host
    (nothing may be left running); the engine's mode when the run sets one."""
    env = {"MCP_SIDECAR_HOME": str(sidecar_home), "MCP_SIDECAR_ENGINE_GRACE": "1"}
    if ENGINE_ENV in os.environ:
        env[ENGINE_ENV] = os.environ[ENGINE_ENV]
    return env


@cache
def can_run_hosts() -> str | None:
    """Why host runs cannot happen here, or None when they can."""
    if not all((NODE_BIN / name).exists() for name in ("claude", "codex", "gemini")):
        return "the hosts are not installed: run ./scripts/setup --test"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare or ip is missing"
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return "cannot make a network namespace here (needs root)"
    return None


def sidecar_config(home: Path, servers: dict[str, Any] | None = None) -> None:
    """The gateway's MCP_SIDECAR_HOME: the `basic` fixture server, unless `servers` says otherwise."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(
        json.dumps({"mcpServers": flows.servers() if servers is None else servers}, indent=2)
    )


def run_host(
    run_dir: Path,
    host: str,
    turns: list[Turn],
    *,
    prompt: str = "Find a tool of my MCP servers that echoes text, load it and echo a sentence with it.",
    gateway_args: tuple[str, ...] = (),
    options: dict[str, Any] | None = None,
    servers: dict[str, Any] | None = None,
    wrapper: tuple[str, ...] = (),
    timeout: float = 150,
) -> HostRun:
    """Run `host` once to its end; the gateway is `mcp-sidecar mcp GATEWAY_ARGS` on its own home,
    behind `rpc_tee.py WRAPPER` (`--stuck`, `--hold-answers S`: see there)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    sidecar_home = run_dir / "sidecar-home"
    sidecar_config(sidecar_home, servers)
    trace_path = run_dir / "trace.jsonl"
    log = run_dir / "gateway.log"
    gateway = [
        sys.executable,
        str(TEE),
        *wrapper,
        str(trace_path),
        "--",
        str(GATEWAY),
        "-v",
        "--log-file",
        str(log),
        "mcp",
    ]
    spec = {
        "host": host,
        "prompt": prompt,
        "turns": to_json(turns),
        "gateway": [*gateway, *searched(gateway_args)],
        "gateway_env": gateway_env(sidecar_home),
        "options": options or {},
        "timeout": timeout,
        "gateway_exit_wait": GATEWAY_EXIT_WAIT,
    }
    (run_dir / "spec.json").write_text(json.dumps(spec, indent=2))
    env = {**os.environ, "PYTHONPATH": str(TESTS_DIR)}
    inside = [*UNSHARE, sys.executable, "-m", "support.hosts.inside", str(run_dir)]
    done = subprocess.run(inside, env=env, capture_output=True, text=True, timeout=timeout + 60, check=False)
    result_path = run_dir / "result.json"
    assert result_path.exists(), f"the run in the namespace failed: exit {done.returncode}\n{done.stderr[-4000:]}"
    return _read_run(run_dir, host, json.loads(result_path.read_text()))


def _read_run(run_dir: Path, host: str, result: dict[str, Any]) -> HostRun:
    dialect = DIALECTS[HOSTS[host][0]]
    requests = []
    model_log = run_dir / "model.jsonl"
    if model_log.exists():
        for line in model_log.read_text().splitlines():
            entry = json.loads(line)
            requests.append(
                ModelRequest(entry["t"], entry["path"], entry["body"], entry["turn"], entry["answer"], dialect)
            )
    return HostRun(
        host=host,
        exit_code=int(result["exit_code"]),
        timed_out=bool(result["timed_out"]),
        gateway_exited=bool(result["gateway_exited"]),
        left_behind=list(result["left_behind"]),
        started=float(result["started"]),
        ended=float(result["ended"]),
        requests=requests,
        trace=read_trace(run_dir / "trace.jsonl"),
        stdout=(run_dir / "host.stdout").read_text(errors="replace"),
        stderr=(run_dir / "host.stderr").read_text(errors="replace"),
        run_dir=run_dir,
    )
