"""Run every benchmark in turn (startup, calls, memory, discovery, results, hub, gateway, secrets); `--quick` passed on.

Each script runs in its own process, one after the other, so they do not compete for the CPU.
Exits non-zero only if a script itself failed (a missed goal is reported, not a failure).
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
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run of every benchmark (seconds each)")
    args = parser.parse_args(argv)
    extra = ["--quick"] if args.quick else []
    failed: list[str] = []
    started = time.monotonic()
    for script in SCRIPTS:
        banner = f"## {script}{' --quick' if args.quick else ''}"
        print(f"\n{banner}\n", flush=True)
        begin = time.monotonic()
        code = subprocess.call([sys.executable, str(HERE / script), *extra], cwd=HERE.parent)
        print(f"\n({script}: exit {code}, {time.monotonic() - begin:.1f} s)", flush=True)
        if code != 0:
            failed.append(script)
    print(f"\nall benchmarks: {time.monotonic() - started:.1f} s; {'failed: ' + ', '.join(failed) if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
