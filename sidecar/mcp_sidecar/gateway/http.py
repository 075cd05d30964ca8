"""`mcp-sidecar mcp --http 127.0.0.1:PORT`: the gateway over Streamable HTTP, on loopback only.

The SDK's Streamable HTTP app serves both protocol eras under uvicorn, on the event loop of the
Sidecar app. Every request passes two checks before it reaches the MCP transport:

- a bearer token made at each start (`Authorization: Bearer TOKEN`, compared in constant time;
  401 without it), shown once: on the one line printed to stderr at start, or only in the
  0600 file `--token-file` names. Never logged: it stays out of every log record and diagnostic;
- the SDK's DNS-rebinding protection: the Host header must name the address actually bound
  (`127.0.0.1:PORT`, `[::1]:PORT` or `localhost:PORT`; else 421) and an Origin header, when
  sent, that same origin over http (else 403).

Each `Mcp-Session-Id` is one host, as a stdio connection is: its activations last until the
host ends the session (DELETE), the session is idle for a day (a minute when it never called
anything), it makes room for a new host in a full table (`http_sessions.py`), or the gateway stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from mcp_sidecar import fs
from mcp_sidecar.gateway.http_guard import ACCEPT_BATCH, ConnectionGuard, ConnectionLimits
from mcp_sidecar.gateway.http_sessions import SessionLimits, SessionTable
from mcp_sidecar.gateway.options import Address

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from mcp_sidecar.gateway.face import Gateway

log = logging.getLogger(__name__)

PATH = "/mcp"
SHUTDOWN_WAIT_S = 3
"""How long a stop waits for requests in flight before cancelling them."""
EXIT_FAILED = 1


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def security_settings(bound: Address) -> TransportSecuritySettings:
    """Host and Origin must name the bound address itself (a rebound DNS name never does)."""
    authorities = [_authority(bound.bind_host, bound.port), f"localhost:{bound.port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=authorities,
        allowed_origins=[f"http://{a}" for a in authorities],
    )


class BearerToken:
    """ASGI middleware: every HTTP request carries `Authorization: Bearer <token>`, or gets 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token.encode("ascii")

    def allowed(self, header: bytes | None) -> bool:
        scheme, _, given = (header or b"").strip().partition(b" ")
        # compare_digest takes as long for any wrong token of one length; the scheme is public.
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
            if not self.allowed(header):
                refusal = Response(
                    "A bearer token is required: the one mcp-sidecar printed at start (or wrote to --token-file).",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="mcp-sidecar"'},
                )
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)


def listen(address: Address) -> socket.socket:
    """The listening socket, bound now so that port 0 names its real port before anything is printed."""
    family = socket.AF_INET6 if address.bind_host == "::1" else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address.bind_host, address.port))
        sock.listen(ACCEPT_BATCH)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def write_token(path: Path, token: str) -> None:
    """The token alone (and a newline) in a new 0600 file, replacing `path` whole (never through a link)."""
    fs.atomic_write(path, token + "\n", 0o600)


def remove_token(path: Path, token: str) -> None:
    """At exit the token is worthless: remove its file, unless someone else's token replaced it."""
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8").strip() == token:
            path.unlink()


class HttpServer(uvicorn.Server):
    """uvicorn's server without its own signal handling (see `_stop_on_signals`)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn raises a caught signal again once it has stopped, which would end the
        # process (or raise KeyboardInterrupt) before the sidecar shut its servers down.
        yield


@contextlib.contextmanager
def _stop_on_signals(server: HttpServer) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        # `handle_exit` also tells sse-starlette to end the open event streams (it patches it).
        loop.add_signal_handler(sig, server.handle_exit, sig, None)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def streamable_http_app(gateway: Gateway, bound: Address, limits: SessionLimits | None = None) -> Starlette:
    """The SDK's Streamable HTTP app at `PATH` (what `Server.streamable_http_app` builds), with the
    gateway's session table in place of the SDK's session manager."""
    table = SessionTable(gateway.server, security_settings(bound), limits)
    gateway.server.middleware.append(table.mark_used)
    return Starlette(routes=[Route(PATH, endpoint=_Endpoint(table))], lifespan=lambda app: table.run())


class _Endpoint:
    """The route's ASGI app (an object, not a function: Starlette serves every method to it)."""

    def __init__(self, table: SessionTable) -> None:
        self._table = table

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._table.handle_request(scope, receive, send)


def http_server(
    gateway: Gateway,
    bound: Address,
    token: str,
    sessions: SessionLimits | None = None,
    connections: ConnectionLimits | None = None,
) -> HttpServer:
    """The uvicorn server of the gateway's Streamable HTTP app on `bound`, behind the token check;
    connections that have not shown the token are few and brief (`http_guard.py`)."""
    checked = BearerToken(streamable_http_app(gateway, bound, sessions), token)
    config = uvicorn.Config(
        checked,
        http=ConnectionGuard(checked.allowed, connections).protocol(),
        backlog=ACCEPT_BATCH,
        log_config=None,
        access_log=False,
        lifespan="on",
        server_header=False,
        timeout_graceful_shutdown=SHUTDOWN_WAIT_S,
    )
    return HttpServer(config)


async def serve(gateway: Gateway, address: Address, token_file: Path | None) -> int:
    """Serve until SIGTERM or SIGINT; 0 after a clean stop, 1 when it could not start."""
    try:
        sock = listen(address)
    except OSError as exc:
        print(f"mcp-sidecar: cannot listen on {_authority(address.bind_host, address.port)}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    bound = Address(address.bind_host, sock.getsockname()[1])
    url = f"http://{_authority(bound.host, bound.port)}{PATH}"
    token = secrets.token_urlsafe(32)
    if token_file is not None:
        try:
            write_token(token_file, token)
        except OSError as exc:
            sock.close()
            print(f"mcp-sidecar: cannot write the token file {token_file}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_FAILED
    where = f"<the token in {token_file}>" if token_file is not None else token
    line = f"mcp-sidecar: MCP over HTTP at {url} (send the header: Authorization: Bearer {where})"
    try:
        server = http_server(gateway, bound, token)
        with _stop_on_signals(server):  # before the line: whoever reads it may stop the gateway at once
            print(line, file=sys.stderr, flush=True)
            log.info("gateway: serving Streamable HTTP at %s", url)
            await server.serve(sockets=[sock])
    finally:
        sock.close()
        if token_file is not None:
            remove_token(token_file, token)
    log.info("gateway: HTTP stopped")
    return 0 if server.started else EXIT_FAILED
