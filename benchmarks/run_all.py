"""Run every benchmark in turn (startup, calls, memory, discovery, results, hub, gateway, secrets, engine).

`--quick` is passed on to each.

Each script runs in its own process, one after the other, so they do not compete for the CPU.
Exits non-zero only if a script itself failed (a missed goal is reported, not a failure). The
`summary:` lines the scripts print (vs_mcp_hub.py: echo p50 and throughput against the direct
client and mcp-hub) are repeated at the end, so that a regression shows in CI's log;
`--summary-only` prints only those and each script's exit status.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = (
    "startup.py",
    "call_latency.py",
    "memory.py",
    "discover_latency.py",
    "discover_coldstart.py",
    "retrieval_quality.py",
    "large_result.py",
    "vs_mcp_hub.py",
    "gateway.py",
    "call_throughput.py",
    "redaction.py",
    "engine.py",
)


def run_script(script: str, extra: list[str], echo: bool) -> tuple[int, list[str]]:
    """Run one script, echoing its output when `echo`; its exit code and its `summary:` lines."""
    summaries: list[str] = []
    with subprocess.Popen(
        [sys.executable, str(HERE / script), *extra],
        cwd=HERE.parent,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if echo:
                print(line, end="", flush=True)
            if line.startswith("summary:"):
                summaries.append(f"{script}: {line.strip()}")
    return proc.returncode, summaries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run of every benchmark (seconds each)")
    parser.add_argument("--summary-only", action="store_true", help="print only the summary lines and exit codes")
    args = parser.parse_args(argv)
    extra = ["--quick"] if args.quick else []
    echo = not args.summary_only
    failed: list[str] = []
    summaries: list[str] = []
    started = time.monotonic()
    for script in SCRIPTS:
        if echo:
            print(f"\n## {script}{' --quick' if args.quick else ''}\n", flush=True)
        begin = time.monotonic()
        code, found = run_script(script, extra, echo)
        summaries += found
        gap = "" if args.summary_only else "\n"
        print(f"{gap}({script}: exit {code}, {time.monotonic() - begin:.1f} s)", flush=True)
        if code != 0:
            failed.append(script)
    print("\n## summary (printed, not asserted)\n")
    print("\n".join(summaries) if summaries else "no summary lines")
    print(f"\nall benchmarks: {time.monotonic() - started:.1f} s; {'failed: ' + ', '.join(failed) if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
