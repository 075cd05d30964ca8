"""A bare SDK client process: the memory baseline of `benchmarks/gateway.py` and `vs_mcp_hub.py`.

    python _bare_client.py [--mode auto|legacy] [--calls N] [--sessions S]
                           [--concurrent C --rounds R] -- COMMAND [ARG...]

Connects S `mcp.Client` sessions (default 1) over stdio, each to its own server process started
as COMMAND, lists each one's tools, calls `echo {ARGUMENT: "hello"}` N times in turn over the
sessions, then R rounds of C calls at once (none by default), then writes `ready` on stdout and
waits until stdin closes (or sends a line) while the benchmark reads its /proc status. Nothing
else is imported.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="bare SDK client for the gateway benchmark")
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--argument", default="text", help="the name of echo's argument (server-everything: message)")
    parser.add_argument("--concurrent", type=int, default=0, help="calls sent at once per round")
    parser.add_argument("--rounds", type=int, default=0, help="rounds of --concurrent calls")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("the server's command is required after --")
    if args.sessions < 1:
        parser.error("--sessions must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def echo(client: Any) -> None:
        result = await client.call_tool("echo", {args.argument: "hello"})
        if result.is_error:
            raise RuntimeError("echo failed")

    async def run(devnull: TextIO) -> None:
        params = StdioServerParameters(command=args.command[0], args=args.command[1:], env=dict(os.environ))
        async with contextlib.AsyncExitStack() as stack:
            clients = []
            for _ in range(args.sessions):
                client = Client(
                    stdio_client(params, errlog=devnull),  # type: ignore[arg-type]
                    mode=args.mode,
                    cache=None,
                    read_timeout_seconds=60,
                )
                clients.append(await stack.enter_async_context(client))
            for client in clients:
                await client.list_tools()
            for i in range(args.calls):
                await echo(clients[i % len(clients)])
            for _ in range(args.rounds):
                await asyncio.gather(*(echo(clients[j % len(clients)]) for j in range(args.concurrent)))
            sys.stdout.write("ready\n")
            sys.stdout.flush()
            await stdin_line()

    with open(os.devnull, "w") as devnull:  # the servers' stderr
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
