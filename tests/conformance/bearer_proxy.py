"""A port forward that adds the gateway's bearer token, for the conformance suite's server scenarios.

The suite's CLI (0.1.16) connects with a bare URL and cannot send a header, while
`mcp-sidecar mcp --http` refuses every request without its token (401). This forwards
127.0.0.1:<free port> to the gateway, byte for byte except the head of each request:

- `Authorization: Bearer <token>` is added (any Authorization the client sent is dropped);
- a Host or Origin naming the proxy's own address is rewritten to name the gateway's, as a
  client talking to the gateway directly would send. Any other Host or Origin (the suite's
  `evil.example.com`) passes unchanged, so what the suite grades are the gateway's own
  DNS-rebinding checks.

Usage: python bearer_proxy.py GATEWAY_URL TOKEN_FILE
Prints the proxy's URL (the gateway's path on the proxy's address) on stdout, then serves until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024
"""The longest request head (and chunk-size line) read."""


class Forward:
    def __init__(self, gateway: str, token: str) -> None:
        parts = urlsplit(gateway)
        if parts.hostname is None or parts.port is None:
            raise SystemExit(f"not a gateway URL: {gateway}")
        self.upstream = (parts.hostname, parts.port)
        self.path = parts.path
        self.gateway = parts.netloc.encode("ascii")
        self.token = token.encode("ascii")
        self.own = b""

    def head(self, raw: bytes) -> tuple[bytes, int, bool]:
        """The request head to send on, its body length and whether the body is chunked."""
        request_line, *fields = raw[:-4].split(b"\r\n")
        out = [request_line]
        length, chunked = 0, False
        for field in fields:
            name, _, value = field.partition(b":")
            key, value = name.strip().lower(), value.strip()
            if key == b"authorization":
                continue
            if key == b"host" and value == self.own:
                value = self.gateway
            elif key == b"origin" and value == b"http://" + self.own:
                value = b"http://" + self.gateway
            elif key == b"content-length":
                length = int(value)
            elif key == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            out.append(name.strip() + b": " + value)
        out.append(b"Authorization: Bearer " + self.token)
        return b"\r\n".join(out) + b"\r\n\r\n", length, chunked

    async def requests(self, client: asyncio.StreamReader, upstream: asyncio.StreamWriter) -> None:
        while True:
            try:
                raw = await client.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                break
            head, length, chunked = self.head(raw)
            upstream.write(head)
            if chunked:
                await _copy_chunked(client, upstream)
            elif length:
                upstream.write(await client.readexactly(length))
            await upstream.drain()
        with contextlib.suppress(OSError):
            upstream.write_eof()

    async def connection(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_writer.close()
            return
        to_upstream = asyncio.create_task(self.requests(client_reader, up_writer))
        try:
            while chunk := await up_reader.read(65536):
                client_writer.write(chunk)
                await client_writer.drain()
        except ConnectionError:
            pass
        finally:
            to_upstream.cancel()
            for writer in (client_writer, up_writer):
                writer.close()


async def _copy_chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        size_line = await reader.readuntil(b"\r\n")
        writer.write(size_line)
        size = int(size_line.split(b";")[0].strip(), 16)
        if size == 0:
            while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                writer.write(trailer)
            writer.write(b"\r\n")
            return
        writer.write(await reader.readexactly(size + 2))


async def main(forward: Forward) -> None:
    server = await asyncio.start_server(forward.connection, "127.0.0.1", 0, limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    forward.own = f"127.0.0.1:{port}".encode("ascii")
    print(f"http://127.0.0.1:{port}{forward.path}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(Forward(sys.argv[1], Path(sys.argv[2]).read_text(encoding="utf-8").strip())))
