"""Profile the sidecar's slowest path, a cold start to the first tool list, with py-spy.

    .venv/bin/python benchmarks/profile_first_tools.py [--servers N] [--calls N] [--rate HZ] [--keep PATH]

Starts `py-spy record --idle --threads --format raw -- python -m mcp_sidecar` with a temp
MCP_SIDECAR_HOME naming N copies of tests/fixtures/servers/basic.py (stdio), and drives it like
vs_mcp_hub.py does: `initialize` + `initialized`, `mcp/server/tools` for every server at once,
then (with --calls) `mcp/activate` of every echo and N sequential `mcp/callTool`s; then shutdown.
py-spy samples every thread of the sidecar, idle or not, so the samples add up to wall time per
thread. The script prints:
  * the client-observed timeline (initialize answered, first tool list, calls);
  * samples per thread and per activity (imports at start, the SDK import, JSON-RPC handling,
    the MCP client, waiting in the event loop, ...), in seconds of wall time;
  * the heaviest modules imported (cumulative) and the hottest functions outside imports and
    waiting (self time).
Not a benchmark (no baseline, no goal); py-spy needs ptrace, which root has here.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from _common import (
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    basic_server_entry,
    machine_line,
    now,
    sidecar_env,
    table,
    write_config,
)

# The first rule that matches a stack (outermost frame first) names its activity.
ACTIVITIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("SDK import (load_sdk thread)", re.compile(r"_import_sdk \(")),
    ("imports (other)", re.compile(r"_find_and_load \(")),
    ("spawning a server process", re.compile(r"(_execute_child|open_process|_fork_exec|posix_spawn)")),
    ("MCP client (SDK) and connection", re.compile(r"(mcp/|mcp_types/|connections/|anyio/)")),
    ("JSON-RPC handling (pygls, rpc_io, handlers)", re.compile(r"(pygls/|rpc_io\.py|handlers/|lsprotocol/|cattrs/)")),
    ("services and catalogs", re.compile(r"(services/|catalog/|output/|config/)")),
)
WAITING = "waiting (idle event loop, thread pool, child watcher, locks)"
PIPE_WRITES = "pipe write() syscalls (incl. time descheduled while the woken reader runs)"
NOT_HOT = ("imports (other)", "SDK import (load_sdk thread)", WAITING)
# Leaf frames of a thread that is blocked, not working (py-spy --idle samples them too).
IDLE = re.compile(r"(^|\.)(select|poll|_worker|_do_waitpid|wait|acquire|sleep|_wait_for_tstate_lock) \(")
PIPE_WRITE = re.compile(r"(_UnixWritePipeTransport\.write|StdoutWriter\.write) \(")
LINE = re.compile(r"^(?P<stack>.*) (?P<count>\d+)$")
MODULE_FRAME = re.compile(r"<module> \((?P<path>[^:]+):\d+\)")


def parse(path: Path) -> list[tuple[str, list[str], int]]:
    """(thread name, frames outermost first, samples) per collapsed stack."""
    stacks = []
    for line in path.read_text().splitlines():
        match = LINE.match(line)
        if not match:
            continue
        frames = match["stack"].split(";")
        thread = frames[0].split(": ", 1)[-1] if frames[0].startswith("thread") else "?"
        stacks.append((thread, frames[1:], int(match["count"])))
    return stacks


def activity(frames: list[str]) -> str:
    if not frames:
        return "no Python frame (interpreter start-up and exit)"
    leaf = frames[-1]
    if IDLE.search(leaf):
        return WAITING
    if PIPE_WRITE.search(leaf):
        return PIPE_WRITES
    joined = ";".join(frames)
    for name, pattern in ACTIVITIES:
        if pattern.search(joined):
            return name
    return "other"


def module_name(path: str) -> str:
    for marker in ("site-packages/", "/sidecar/", "python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return path.removesuffix("/__init__.py").removesuffix(".py").replace("/", ".")


def report(stacks: list[tuple[str, list[str], int]], rate: int, top: int) -> None:
    per_thread: dict[str, Counter[str]] = defaultdict(Counter)
    for thread, frames, count in stacks:
        per_thread[thread][activity(frames)] += count
    rows = []
    for thread, counts in sorted(per_thread.items(), key=lambda item: -sum(item[1].values())):
        total = sum(counts.values())
        for name, count in counts.most_common():
            rows.append([thread, name, count, count / rate, f"{100 * count / total:.0f}%"])
    print(table(["thread", "activity", "samples", "seconds", "share"], rows, "Where the wall time goes, per thread"))

    # Cumulative time per imported module: a stack counts once for every distinct module it is
    # importing (the outermost import is the one the sidecar asked for).
    imports: Counter[str] = Counter()
    for _, frames, count in stacks:
        for name in dict.fromkeys(module_name(m["path"]) for f in frames if (m := MODULE_FRAME.search(f))):
            imports[name] += count
    print()
    rows = [[name, count, count / rate] for name, count in imports.most_common(top)]
    print(table(["module (cumulative, nested imports included)", "samples", "seconds"], rows, "Heaviest imports"))

    hot: Counter[str] = Counter()
    for _, frames, count in stacks:
        if frames and activity(frames) not in NOT_HOT:
            hot[frames[-1]] += count
    print()
    rows = [[frame, count, count / rate] for frame, count in hot.most_common(top)]
    print(table(["function (self time, outside imports and waiting)", "samples", "seconds"], rows, "Hottest functions"))


async def drive(argv: list[str], servers: int, calls: int) -> list[list[object]]:
    names = [f"basic{i:02d}" for i in range(1, servers + 1)]
    timeline: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-bench-") as tmp:
        home = Path(tmp)
        write_config(home, {name: basic_server_entry("auto", timeout_ms=120_000) for name in names})
        start = now()
        client = await RawClient.start(argv, env=sidecar_env(home), cwd=ROOT)
        try:
            await client.initialize(initialized=True)
            timeline.append(["initialize answered", (now() - start) * 1000])
            listings = await asyncio.gather(
                *(client.request("mcp/server/tools", {"server": n}, limit_s=180) for n in names)
            )
            if any(not listing["tools"] for listing in listings):
                raise RuntimeError("a server listed no tools")
            timeline.append([f"tool lists of {servers} server(s) answered", (now() - start) * 1000])
            if calls:
                await client.request("mcp/activate", {"ids": [f"{n}.echo" for n in names]})
                begin = now()
                for i in range(calls):
                    await client.request(
                        "mcp/callTool", {"id": f"{names[i % servers]}.echo", "arguments": {"text": "x"}}
                    )
                timeline.append([f"{calls} calls, ms per call", (now() - begin) * 1000 / calls])
        finally:
            await client.close(limit_s=60)  # py-spy writes its file when the sidecar exits
    return timeline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--servers", type=int, default=1, help="stdio servers (default 1)")
    parser.add_argument(
        "--calls", type=int, default=0, help="mcp/callTool round trips after the tool lists (default 0)"
    )
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second (default 250)")
    parser.add_argument("--top", type=int, default=15, help="rows in the import and function tables (default 15)")
    parser.add_argument("--keep", type=Path, help="also keep py-spy's collapsed stacks in this file")
    args = parser.parse_args(argv)
    py_spy = shutil.which("py-spy", path=str(Path(PYTHON).parent)) or shutil.which("py-spy")
    if py_spy is None:
        print("SKIPPED: py-spy not found; it is in the test extras (`scripts/setup --test`)")
        return 0
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="mcp-sidecar-profile-") as tmp:
        out = Path(tmp) / "stacks.txt"
        command = [py_spy, "record", "--idle", "--threads", "--rate", str(args.rate), "--format", "raw"]
        command += ["--output", str(out), "--nonblocking", "--", *SIDECAR_ARGV]
        timeline = asyncio.run(drive(command, args.servers, args.calls))
        print(f"py-spy at {args.rate} Hz on python -m mcp_sidecar; {args.servers} basic.py server(s)\n")
        print(table(["moment (client-observed, from spawn)", "ms"], timeline, "Timeline"))
        print()
        if not out.exists():
            print("py-spy wrote no profile (no ptrace permission?)")
            return 1
        if args.keep:
            shutil.copyfile(out, args.keep)
        report(parse(out), args.rate, args.top)
    print()
    print(machine_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
