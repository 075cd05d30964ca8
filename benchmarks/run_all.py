"""Run every benchmark in turn (startup, calls, memory, discovery, results, hub, gateway, secrets, engine).

`--quick` is passed on to each.

Each script runs in its own process, one after the other, so they do not compete for the CPU;
`--jobs N` runs N at once, for a smoke run whose figures are not read (CI's), each script's output
printed whole when it ends.
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
from concurrent.futures import ThreadPoolExecutor
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


class Ran:
    def __init__(self, script: str) -> None:
        self.script = script
        self.code = 0
        self.lines: list[str] = []
        self.seconds = 0.0

    @property
    def summaries(self) -> list[str]:
        return [f"{self.script}: {line.strip()}" for line in self.lines if line.startswith("summary:")]


def run_script(script: str, extra: list[str], echo: bool) -> Ran:
    """Run one script, echoing its output as it comes when `echo`."""
    ran = Ran(script)
    begin = time.monotonic()
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
            ran.lines.append(line)
    ran.code = proc.returncode
    ran.seconds = time.monotonic() - begin
    return ran


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run of every benchmark (seconds each)")
    parser.add_argument("--summary-only", action="store_true", help="print only the summary lines and exit codes")
    parser.add_argument("--jobs", type=int, default=1, help="scripts run at once (default 1: one after the other)")
    args = parser.parse_args(argv)
    extra = ["--quick"] if args.quick else []
    echo = not args.summary_only
    gap = "" if args.summary_only else "\n"
    failed: list[str] = []
    summaries: list[str] = []
    started = time.monotonic()

    def report(ran: Ran) -> None:
        summaries.extend(ran.summaries)
        print(f"{gap}({ran.script}: exit {ran.code}, {ran.seconds:.1f} s)", flush=True)
        if ran.code != 0:
            failed.append(ran.script)

    def title(script: str) -> None:
        if echo:
            print(f"\n## {script}{' --quick' if args.quick else ''}\n", flush=True)

    if args.jobs <= 1:
        for script in SCRIPTS:
            title(script)
            report(run_script(script, extra, echo))
    else:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            runs = [pool.submit(run_script, script, extra, False) for script in SCRIPTS]
            for script, future in zip(SCRIPTS, runs, strict=True):
                ran = future.result()  # in their order, each whole
                title(script)
                if echo:
                    print("".join(ran.lines), end="", flush=True)
                report(ran)
    print("\n## summary (printed, not asserted)\n")
    print("\n".join(summaries) if summaries else "no summary lines")
    print(f"\nall benchmarks: {time.monotonic() - started:.1f} s; {'failed: ' + ', '.join(failed) if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
