"""MCP Apps in the person's browser, for clients without a webview (Neovim): a loopback page per app.

`mcp/app/open {server, uri, toolInput?, toolResult?}` reads the app with `mcp/app/resource`'s checks
and serves it on 127.0.0.1, on a port the system chooses, under a path holding an unguessable token
(256 bits): `http://127.0.0.1:<port>/<token>/` is the host page (`output/app_page.py`), which holds
the app in a sandboxed frame (`<token>/app`) and bridges its messages; its `tools/call` comes back
here (`POST <token>/call`), and the sidecar asks the client (`mcp/app/confirmCall`) before making
the call as `mcp/app/callTool` does.

Every answer carries a Content Security Policy (the app's built from the `csp` it declared) and
`no-store`. Refused: a request whose `Host` is not the page's address (DNS rebinding), whose token
is missing or wrong (compared in constant time with each open page's), a call from another origin
(the sandboxed app's own requests have the origin `null`) or not JSON. The listener is bound to
loopback only, from the client's first page to its end (`close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_sidecar import __version__
from mcp_sidecar.events import AppCallAsked, NoAnswerer
from mcp_sidecar.output import app_page
from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError

if TYPE_CHECKING:
    from mcp_sidecar.events import EventHub
    from mcp_sidecar.protocol.results import AppOpenResult, CallToolResult
    from mcp_sidecar.services.apps import Apps

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 1024 * 1024
MAX_WAITING_CALLS = 16
"""An app's calls that may wait for the person's answer or their result at once; past it, refused
(429): a flooding app neither queues questions without end nor holds the client's sockets."""
READ_TIMEOUT_S = 30.0
"""How long a request may take to arrive whole."""
CONFIRM_TIMEOUT_S = 300.0
"""How long a call waits for the person's answer in the editor."""
_PATH = re.compile(r"^/([A-Za-z0-9_-]{1,128})/(app|call)?$")
_REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 405: "Method Not Allowed", 413: "Payload Too Large"}
_REASONS |= {415: "Unsupported Media Type", 421: "Misdirected Request", 429: "Too Many Requests"}
_REASONS |= {431: "Request Header Fields Too Large"}


@dataclass(frozen=True)
class Page:
    server: str
    uri: str
    html: str
    ui: dict[str, Any] | None
    data: dict[str, Any]
    """What the host page gives the app: the tool's input and result."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    csp: str = "default-src 'none'; frame-ancestors 'none'"


class BadRequest(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _plain(status: int, text: str) -> Response:
    return Response(status, text.encode("utf-8"))


def _json(value: Any) -> Response:
    return Response(200, json.dumps(value).encode("utf-8"), "application/json")


def _error(message: str, code: int = -32603) -> Response:
    return _json({"error": {"code": code, "message": message}})


async def read_request(reader: asyncio.StreamReader) -> Request:
    """One HTTP/1.1 request: its line, headers (lower-cased names) and a body of `Content-Length` bytes."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise BadRequest(431) from None
    lines = head.decode("latin-1").split("\r\n")
    words = lines[0].split(" ")
    if len(words) != 3 or not words[2].startswith("HTTP/1."):
        raise BadRequest(400)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon:
            raise BadRequest(400)
        headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length", "0")
    if not length.isdigit():
        raise BadRequest(400)
    if int(length) > MAX_BODY_BYTES:
        raise BadRequest(413)
    body = await reader.readexactly(int(length))
    return Request(words[0], words[1], headers, body)


def encode(response: Response) -> bytes:
    head = [
        f"HTTP/1.1 {response.status} {_REASONS.get(response.status, 'Error')}",
        f"Content-Type: {response.content_type}",
        f"Content-Length: {len(response.body)}",
        f"Content-Security-Policy: {response.csp}",
        "Cache-Control: no-store",
        "X-Content-Type-Options: nosniff",
        "Referrer-Policy: no-referrer",
        "Cross-Origin-Resource-Policy: same-origin",
        "Connection: close",
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body


class AppPages:
    """One client's apps open in the person's browser, and the loopback listener that serves them."""

    def __init__(self, apps: Apps, hub: EventHub) -> None:
        self._apps = apps
        self._hub = hub
        self._pages: dict[str, Page] = {}
        self._waiting = 0
        self._listener: asyncio.Server | None = None
        self._authority = ""

    async def open(
        self, server: str, uri: str, tool_input: dict[str, Any] | None, tool_result: dict[str, Any] | None
    ) -> AppOpenResult:
        app = await self._apps.resource(server, uri)
        if self._listener is None:
            listener = await asyncio.start_server(self._serve, LOOPBACK, 0, limit=MAX_HEAD_BYTES)
            if self._listener is None:
                self._listener = listener
                self._authority = f"{LOOPBACK}:{listener.sockets[0].getsockname()[1]}"
            else:  # another page's open started one meanwhile
                listener.close()
        token = secrets.token_urlsafe(32)
        data: dict[str, Any] = {"version": __version__}
        if tool_input is not None:
            data["toolInput"] = tool_input
        if tool_result is not None:
            data["toolResult"] = tool_result
        self._pages[token] = Page(server, uri, app["html"], app.get("ui"), data)
        log.info("app page: %s %s opened on %s", server, uri, self._authority)
        return {"server": server, "uri": uri, "url": f"http://{self._authority}/{token}/"}

    def close(self) -> None:
        """The client's end: every page is forgotten and the listener stops."""
        self._pages.clear()
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def _page(self, token: str) -> Page | None:
        """The page of `token`, compared with every open page's in constant time."""
        found: Page | None = None
        for known, page in list(self._pages.items()):
            if hmac.compare_digest(known.encode("ascii"), token.encode("ascii")):
                found = page
        return found

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                request = await asyncio.wait_for(read_request(reader), READ_TIMEOUT_S)
            except BadRequest as exc:
                response = _plain(exc.status, "Refused.")
            else:
                response = await self._route(request)
            writer.write(encode(response))
            await writer.drain()
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass  # a client that went away or never finished its request gets nothing
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _route(self, request: Request) -> Response:
        if request.headers.get("host") != self._authority:
            return _plain(421, "This page is served to 127.0.0.1 only.")
        match = _PATH.match(request.path)
        page = self._page(match.group(1)) if match else None
        if match is None or page is None:
            return _plain(403, "Forbidden.")
        part = match.group(2)
        if part == "call":
            if request.method != "POST":
                return _plain(405, "POST only.")
            return await self._call(page, request)
        if request.method != "GET":
            return _plain(405, "GET only.")
        if part == "app":
            return Response(200, page.html.encode("utf-8"), "text/html; charset=utf-8", app_page.app_csp(page.ui))
        nonce = secrets.token_urlsafe(18)
        title = f"{page.server}: {page.uri}"
        document = app_page.host_page(nonce, title, page.data)
        return Response(200, document.encode("utf-8"), "text/html; charset=utf-8", app_page.host_csp(nonce))

    async def _call(self, page: Page, request: Request) -> Response:
        """The app's `tools/call`, from its host page only, made once the client allowed it."""
        if request.headers.get("origin") != f"http://{self._authority}":
            return _plain(403, "Calls come from the app's page only.")
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _plain(415, "JSON only.")
        try:
            asked = json.loads(request.body)
        except (UnicodeDecodeError, ValueError):
            return _plain(400, "Not JSON.")
        name = asked.get("name") if isinstance(asked, dict) else None
        arguments = asked.get("arguments", {}) if isinstance(asked, dict) else None
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return _error("tools/call takes {name: string, arguments?: object}.", -32602)
        if self._waiting >= MAX_WAITING_CALLS:
            log.info("app page: %s: more than %d calls waiting; refused", page.server, MAX_WAITING_CALLS)
            return _plain(429, "Too many calls waiting.")
        params = {"server": page.server, "uri": page.uri, "name": name, "arguments": arguments}
        self._waiting += 1
        try:
            if not await self._allowed(page.server, params):
                return _error(f"The call of {one_line(name)!r} was not allowed.")
            try:
                result = await self._apps.call_tool(page.server, page.uri, name, arguments)
            except SidecarError as exc:
                return _error(one_line(exc.diagnostic.render()))
        finally:
            self._waiting -= 1
        return _json({"result": mcp_result(result)})

    async def _allowed(self, server: str, params: dict[str, Any]) -> bool:
        """The client's answer to `mcp/app/confirmCall`: only an explicit `{allow: true}` allows."""
        try:
            answer = await self._hub.ask(AppCallAsked(server, params), CONFIRM_TIMEOUT_S)
        except NoAnswerer:
            log.info("app page: no client answers %s: %s refused", methods.APP_CONFIRM_CALL, params["name"])
            return False
        except TimeoutError:
            return False
        except Exception:  # the client failed the request: as good as no
            log.info("app page: the client did not answer %s", methods.APP_CONFIRM_CALL, exc_info=True)
            return False
        return isinstance(answer, dict) and answer.get("allow") is True


def mcp_result(result: CallToolResult) -> dict[str, Any]:
    """The MCP `CallToolResult` an app expects, from the shaped one (its limits applied)."""
    out: dict[str, Any] = {"content": result["content"], "isError": result["isError"]}
    if "structuredContent" in result:
        out["structuredContent"] = result["structuredContent"]
    return out
