"""A bare SDK client process: the memory baseline of `benchmarks/gateway.py`.

    python _bare_client.py [--mode auto|legacy] [--calls N] -- COMMAND [ARG...]

Connects an `mcp.Client` over stdio to the server COMMAND, lists its tools, calls `echo
{"text": "hello"}` N times, then writes `ready` on stdout and waits until stdin closes (or
sends a line) while the benchmark reads its /proc status. Nothing else is imported.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import TextIO


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="bare SDK client for the gateway benchmark")
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("the server's command is required after --")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run(devnull: TextIO) -> None:
        params = StdioServerParameters(command=args.command[0], args=args.command[1:], env=dict(os.environ))
        async with Client(
            stdio_client(params, errlog=devnull),  # type: ignore[arg-type]
            mode=args.mode,
            cache=None,
            read_timeout_seconds=60,
        ) as client:
            await client.list_tools()
            for _ in range(args.calls):
                result = await client.call_tool("echo", {"text": "hello"})
                if result.is_error:
                    raise RuntimeError("echo failed")
            sys.stdout.write("ready\n")
            sys.stdout.flush()
            await stdin_line()

    with open(os.devnull, "w") as devnull:  # the server's stderr
        asyncio.run(run(devnull))


async def stdin_line() -> None:
    """Wait for a line or the end of stdin, without a thread."""
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        await reader.readline()
    finally:
        transport.close()


if __name__ == "__main__":
    main()
