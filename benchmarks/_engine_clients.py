"""The servers, the three kinds of client and the process census of engine.py (issue 33).

Not a benchmark itself. Every client connects the same six stdio servers and calls one tool on
each; what it measures is the time from its launch to its first answered tool list and to the
answer of its sixth call:

  * an editor (`attach_editor`): `python -m mcp_sidecar` driven by _common.RawClient; its first
    tool list is `mcp/server/tools` on server-everything (a real server's list: the first thing
    an editor's picker shows), then `mcp/activate` of the six tools and six `mcp/callTool`;
  * a gateway host (`attach_gateway`): `python -m mcp_sidecar mcp --project WORKSPACE` driven by
    the SDK's `Client` (legacy era, listing its tools again on each `list_changed`, as Claude
    Code and Gemini CLI do); its first tool list is `tools/list` (what a host asks first: the
    gateway's `mcp_tools` and the session's native tools, no server needed), then `mcp_tools
    {activate}` of the six tools and six native calls;
  * a REST client of mcp-hub (`attach_rest`): `GET /api/servers` (every server's tools), then
    six `POST /api/servers/tools`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from _common import BASIC_SERVER, BENCHMARKS, PYTHON, ROOT, SIDECAR_ARGV, RawClient, descendants, now, proc_status
from _hub import HttpConnection, Hub, children_of
from _synthetic_server import generate_tools

NPM = BENCHMARKS / "node_modules" / "@modelcontextprotocol"
EVERYTHING_JS = ROOT / "tests" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
SYNTHETIC = BENCHMARKS / "_synthetic_server.py"
SYNTHETIC_SEED, SYNTHETIC_COUNT = 7, 40
LIMIT_S = 120.0
CLOSE_LIMIT_S = 30.0


@dataclass(frozen=True)
class Server:
    name: str
    entry: dict[str, Any]
    """Its `mcpServers` entry (the same for the sidecar and mcp-hub)."""
    tool: str
    arguments: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.name}.{self.tool}"

    @property
    def native(self) -> str:
        return f"{self.name}__{self.tool}"


def node_entry(script: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": "node", "args": [str(script), *args]}
    if env:
        entry["env"] = env
    return entry


def six_servers(workspace: Path, data: Path) -> list[Server]:
    """The six stdio servers: four from npm, two on the Python SDK. server-everything comes first (the
    editors' first tool list is its list, and the call latency is its `echo`)."""
    synthetic_tool = str(generate_tools(SYNTHETIC_SEED, SYNTHETIC_COUNT)[0]["name"])
    thought = {"thought": "One step.", "nextThoughtNeeded": False, "thoughtNumber": 1, "totalThoughts": 1}
    return [
        Server("everything", node_entry(EVERYTHING_JS, "stdio"), "echo", {"message": "hello"}),
        Server(
            "memory",
            node_entry(
                NPM / "server-memory" / "dist" / "index.js", env={"MEMORY_FILE_PATH": str(data / "memory.jsonl")}
            ),
            "read_graph",
            {},
        ),
        Server(
            "filesystem",
            node_entry(NPM / "server-filesystem" / "dist" / "index.js", str(workspace)),
            "list_allowed_directories",
            {},
        ),
        Server(
            "thinking",
            node_entry(
                NPM / "server-sequential-thinking" / "dist" / "index.js", env={"DISABLE_THOUGHT_LOGGING": "true"}
            ),
            "sequentialthinking",
            thought,
        ),
        Server("basic", {"command": PYTHON, "args": [str(BASIC_SERVER), "stdio"]}, "echo", {"text": "hello"}),
        Server(
            "synthetic",
            {
                "command": PYTHON,
                "args": [str(SYNTHETIC), "--seed", str(SYNTHETIC_SEED), "--count", str(SYNTHETIC_COUNT)],
            },
            synthetic_tool,
            {"name": "bench"},
        ),
    ]


def missing_servers() -> list[Path]:
    scripts = [EVERYTHING_JS, *(NPM / name / "dist" / "index.js" for name in ("server-memory", "server-filesystem"))]
    scripts.append(NPM / "server-sequential-thinking" / "dist" / "index.js")
    return [path for path in scripts if not path.is_file()]


@dataclass
class Attached:
    """One client, attached and idle after its six calls."""

    kind: str
    """`editor`, `gateway` or `rest`."""
    pid: int | None
    """Its front process (None for a REST client: it is the hub's)."""
    first_tools_s: float
    calls_s: float
    release: Callable[[], Awaitable[Any]]
    opened_s: float = 0.0
    """From its launch to the answer of its `initialize`."""


# --------------------------------------------------------------------------- an editor


def editor_initialize(workspace: Path) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "rootUri": workspace.as_uri(),
        "capabilities": {},
        "initializationOptions": {"trustedWorkspace": False, "interactive": False},
    }


async def open_editor(env: dict[str, str], workspace: Path) -> RawClient:
    client = await RawClient.start(SIDECAR_ARGV, env=env, cwd=workspace)
    try:
        await client.request("initialize", editor_initialize(workspace), limit_s=LIMIT_S)
        client.notify("initialized", {})
    except BaseException:
        await client.close(CLOSE_LIMIT_S)
        raise
    return client


async def attach_editor(env: dict[str, str], workspace: Path, servers: list[Server]) -> Attached:
    start = now()
    client = await open_editor(env, workspace)
    opened = now() - start
    try:
        listed = await client.request("mcp/server/tools", {"server": servers[0].name}, limit_s=LIMIT_S)
        if not listed["tools"]:
            raise RuntimeError(f"{servers[0].name} listed no tools")
        first = now() - start
        activated = await client.request("mcp/activate", {"ids": [s.id for s in servers]}, limit_s=LIMIT_S)
        if any(row["status"] == "not loaded" for row in activated["results"]):
            raise RuntimeError(f"an editor's activation failed: {activated['results']}")
        for server in servers:
            params = {"id": server.id, "arguments": server.arguments}
            result = await client.request("mcp/callTool", params, limit_s=LIMIT_S)
            if result.get("isError"):
                raise RuntimeError(f"an editor's call of {server.id} failed: {result}")
        calls = now() - start
    except BaseException:
        await client.close(CLOSE_LIMIT_S)
        raise
    return Attached("editor", client.pid, first, calls, lambda: client.close(CLOSE_LIMIT_S), opened)


# --------------------------------------------------------------------------- a gateway host


def _new_child(before: set[int]) -> int:
    """The gateway process the SDK just spawned: this process's new child running mcp_sidecar."""
    for pid in set(children_of(os.getpid())) - before:
        with contextlib.suppress(OSError):
            if b"mcp_sidecar" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
    raise RuntimeError("the gateway's process was not found among this process's children")


@dataclass
class _Host:
    """What a host does with the gateway's notices: lists its tools again on each `list_changed`."""

    client: Any = None
    relisting: set[asyncio.Task[Any]] = field(default_factory=set)

    async def handler(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification) and self.client is not None:
            task = asyncio.ensure_future(self.client.list_tools())
            self.relisting.add(task)
            task.add_done_callback(self.relisting.discard)


async def _host_session(
    env: dict[str, str],
    workspace: Path,
    servers: list[Server],
    devnull: TextIO,
    ready: asyncio.Future[tuple[float, float, float, int]],
    release: asyncio.Event,
) -> None:
    """The whole life of one host, in one task (the SDK's client is entered and left in the same task)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = ["-m", "mcp_sidecar", "mcp", "--project", str(workspace)]
    params = StdioServerParameters(command=PYTHON, args=argv, env=env, cwd=workspace)
    host = _Host()
    before = set(children_of(os.getpid()))
    start = now()
    transport = stdio_client(params, errlog=devnull)
    async with Client(
        transport,  # type: ignore[arg-type]
        message_handler=host.handler,
        read_timeout_seconds=LIMIT_S,
        mode="legacy",
        cache=None,
    ) as client:
        host.client = client
        opened = now() - start
        pid = _new_child(before)
        listed = await client.list_tools()
        if not listed.tools:
            raise RuntimeError("the gateway listed no tools")
        first = now() - start
        activated = await client.call_tool("mcp_tools", {"activate": [s.id for s in servers]})
        if activated.is_error:
            raise RuntimeError(f"a host's activation failed: {activated.content}")
        for server in servers:
            result = await client.call_tool(server.native, server.arguments)
            if result.is_error:
                raise RuntimeError(f"a host's call of {server.native} failed: {result.content}")
        ready.set_result((opened, first, now() - start, pid))
        await release.wait()
        for task in list(host.relisting):
            task.cancel()


async def attach_gateway(env: dict[str, str], workspace: Path, servers: list[Server], devnull: TextIO) -> Attached:
    ready: asyncio.Future[tuple[float, float, float, int]] = asyncio.get_running_loop().create_future()
    release = asyncio.Event()
    session = asyncio.ensure_future(_host_session(env, workspace, servers, devnull, ready, release))
    session.add_done_callback(lambda done: _fail(ready, done))
    opened, first, calls, pid = await asyncio.wait_for(asyncio.shield(ready), LIMIT_S)

    async def close() -> None:
        release.set()
        try:
            await asyncio.wait_for(session, CLOSE_LIMIT_S)
        except TimeoutError:
            session.cancel()

    return Attached("gateway", pid, first, calls, close, opened)


def _fail(ready: asyncio.Future[Any], done: asyncio.Future[Any]) -> None:
    """A host session that ended before its six calls were answered: its error goes to the waiting side."""
    if ready.done():
        return
    error = done.exception() if not done.cancelled() else asyncio.CancelledError()
    ready.set_exception(error or RuntimeError("the host session ended before its calls were answered"))


# --------------------------------------------------------------------------- a REST client of mcp-hub


async def attach_rest(hub: Hub, servers: list[Server], start: float | None = None) -> Attached:
    """`start`: the first client's clock starts when the hub is spawned."""
    begin = now() if start is None else start
    conn = await HttpConnection.open(hub.port)
    try:
        status, answer = await asyncio.wait_for(conn.request("GET", "/api/servers"), LIMIT_S)
        rows = {row["name"]: row for row in answer["servers"]} if status == 200 else {}
        if any(not rows.get(s.name, {}).get("capabilities", {}).get("tools") for s in servers):
            raise RuntimeError(f"mcp-hub answered {status} without every server's tools")
        first = now() - begin
        for server in servers:
            body = {"server_name": server.name, "tool": server.tool, "arguments": server.arguments}
            status, answer = await asyncio.wait_for(conn.request("POST", "/api/servers/tools", body), LIMIT_S)
            if status != 200 or answer["result"].get("isError"):
                raise RuntimeError(f"mcp-hub's call of {server.id}: {status} {answer}")
        calls = now() - begin
    except BaseException:
        await conn.close()
        raise
    return Attached("rest", None, first, calls, conn.close)


# --------------------------------------------------------------------------- the processes


def engines(run_dir: Path) -> list[int]:
    """The engine processes started under this runtime directory (as tests/e2e/test_engine.py finds them)."""
    found = []
    marker = f"XDG_RUNTIME_DIR={run_dir}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp_sidecar" in cmdline and b"engine" in cmdline and marker in environ:
            found.append(int(entry.name))
    return found


def pss_kb(pid: int) -> int:
    """Proportional set size (shared pages divided among their sharers), from /proc/PID/smaps_rollup."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


@dataclass
class Census:
    """Every process of one setup: the product's (fronts, engine or hub) and the servers below them."""

    roles: dict[int, str]
    """pid → `editor`, `gateway`, `engine`, `hub` or `server`."""
    rss_kb: dict[int, int]
    pss_kb: dict[int, int]

    def pids(self, role: str) -> list[int]:
        return [pid for pid, r in self.roles.items() if r == role]

    def rss(self, role: str | None = None) -> int:
        return sum(kb for pid, kb in self.rss_kb.items() if role is None or self.roles[pid] == role)

    def pss(self) -> int:
        return sum(self.pss_kb.values())


def census(product: dict[int, str]) -> Census:
    roles = dict(product)
    for pid in list(product):
        for child in descendants(pid):
            roles.setdefault(child, "server")
    rss = {pid: proc_status(pid).get("VmRSS", 0) for pid in roles}
    alive = {pid: role for pid, role in roles.items() if rss[pid]}
    return Census(alive, {pid: rss[pid] for pid in alive}, {pid: pss_kb(pid) for pid in alive})


async def settled(product: Callable[[], dict[int, str]], quiet_s: float, limit_s: float) -> Census:
    """The census once the total RSS has stayed within 1 % for `quiet_s` (bounded by `limit_s`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    last = census(product())
    stable_since = loop.time()
    while loop.time() < deadline:
        await asyncio.sleep(0.2)
        current = census(product())
        if set(current.roles) != set(last.roles) or abs(current.rss() - last.rss()) > last.rss() / 100:
            stable_since = loop.time()
        elif loop.time() - stable_since >= quiet_s:
            return current
        last = current
    return last
