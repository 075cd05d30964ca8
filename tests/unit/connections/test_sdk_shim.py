"""The MCP SDK's private API, as mcp_sidecar.connections.sdk_shim uses it, on the installed SDK.

An SDK release that renames, reshapes or stops calling one of the private names the shim relies on
fails here, by name, before it fails as a capability offered wrongly, a task call refused, an OAuth
login that skips the sidecar's checks or a gateway that locks hosts out. Each part is then driven
through the shim against the SDK's real classes (an in-process server, a hand-driven auth flow, the
session manager's ASGI app), never a mock of them.
"""

from __future__ import annotations

import inspect
import json
import re
import time
import tomllib
from collections.abc import Callable, MutableMapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import _origin_issuer
from mcp.client.session import ClientSession
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp_types import ClientCapabilities
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyUrl

from mcp_sidecar.connections import sdk_shim

ROOT = Path(__file__).resolve().parents[3]
URL = "https://mcp.example.com/mcp"

# -- the pin ---------------------------------------------------------------------------------------


def test_the_pinned_minor_version_is_installed() -> None:
    # pyproject.toml pins mcp to 2.3.x; moving the pin means running this file, then re-reading the shim.
    assert version("mcp").startswith("2.3.")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert [d for d in project["dependencies"] if re.match(r"mcp\b", d)] == ["mcp>=2.3,<2.4"]


# (owner, private method, its parameters, how it runs): every private method the shim overrides or calls.
PRIVATE_METHODS: list[tuple[type, str, list[str], str]] = [
    (Client, "_build_session", ["self", "exit_stack"], "async"),
    (ClientSession, "_build_capabilities", ["self", "version"], "sync"),
    (OAuthClientProvider, "_initialize", ["self"], "async"),
    (OAuthClientProvider, "_expected_issuer", ["self"], "sync"),
    (OAuthClientProvider, "_perform_authorization_code_grant", ["self"], "async"),
    (OAuthClientProvider, "_exchange_token_authorization_code", ["self", "auth_code", "code_verifier"], "async"),
    (OAuthClientProvider, "_refresh_token", ["self"], "async"),
    (OAuthClientProvider, "_handle_refresh_response", ["self", "response"], "async"),
    (OAuthClientProvider, "_add_auth_header", ["self", "request"], "sync"),
    (OAuthClientProvider, "_auth_flow", ["self", "request"], "async generator"),
    (StreamableHTTPSessionManager, "_admit_session", ["self", "requestor"], "sync"),
    (StreamableHTTPSessionManager, "_discard_session", ["self", "session_id", "transport"], "async"),
]


def _kind(function: Callable[..., Any]) -> str:
    if inspect.isasyncgenfunction(function):
        return "async generator"
    return "async" if inspect.iscoroutinefunction(function) else "sync"


@pytest.mark.parametrize(
    ("owner", "name", "parameters", "kind"),
    PRIVATE_METHODS,
    ids=[f"{o.__name__}.{n}" for o, n, _, _ in PRIVATE_METHODS],
)
def test_each_private_method_exists_with_the_expected_shape(
    owner: type, name: str, parameters: list[str], kind: str
) -> None:
    method = getattr(owner, name, None)
    assert method is not None, f"{owner.__name__}.{name} is gone: re-read connections/sdk_shim.py"
    assert list(inspect.signature(method).parameters) == parameters, f"{owner.__name__}.{name} changed its parameters"
    assert _kind(method) == kind, f"{owner.__name__}.{name} is no longer {kind}"


# (the SDK's code, the calls in it that reach the private methods): an override the SDK stops
# calling would be silently dead, so the call sites are pinned too.
CALL_SITES: list[tuple[Callable[..., Any], tuple[str, ...]]] = [
    (Client.__aenter__, ("self._build_session(",)),
    (ClientSession.initialize, ("self._build_capabilities(",)),
    (ClientSession.adopt, ("self._build_capabilities(",)),
    (OAuthClientProvider.async_auth_flow, ("self._auth_flow(request)",)),
    (
        OAuthClientProvider._auth_flow,
        (
            "self._initialize()",
            "self._refresh_token()",
            "self._handle_refresh_response(",
            "self._add_auth_header(request)",
            "self._expected_issuer()",
            "self._perform_authorization()",
        ),
    ),
    (
        OAuthClientProvider._perform_authorization,
        ("self._perform_authorization_code_grant()", "self._exchange_token_authorization_code("),
    ),
    (StreamableHTTPSessionManager._handle_stateful_request, ("self._admit_session(", "self._discard_session(")),
]


@pytest.mark.parametrize(("code", "calls"), CALL_SITES, ids=[c.__qualname__ for c, _ in CALL_SITES])
def test_the_sdk_still_calls_them_where_the_shim_hooks_in(code: Callable[..., Any], calls: tuple[str, ...]) -> None:
    source = inspect.getsource(code)
    assert [call for call in calls if call not in source] == [], f"{code.__qualname__} no longer calls these"


def test_the_private_attributes_exist_with_the_expected_values() -> None:
    send, receive = anyio.create_memory_object_stream[Any](1)
    with send, receive:
        session = ClientSession(receive, send)
        assert list(inspect.signature(vars(session)["_dispatcher"].send_raw_request).parameters)[:3] == [
            "method",
            "params",
            "opts",
        ]
    provider = OAuthClientProvider(URL, OAuthClientMetadata(redirect_uris=[AnyUrl(URL)]), MemoryStorage())
    assert provider._initialized is False
    manager = StreamableHTTPSessionManager(Server("pin"))
    assert manager._server_instances == {}
    assert manager._session_owners == {}
    assert manager._task_group is None
    assert "self._connection = connection" in inspect.getsource(ServerSession.__init__)
    assert _origin_issuer("https://Example.COM:443/mcp") == "https://example.com"


SHIM_CLASSES: list[tuple[type, type]] = [
    (sdk_shim._AnnouncingClient, Client),
    (sdk_shim.OAuthSteps, OAuthClientProvider),
    (sdk_shim.SessionManagerHooks, StreamableHTTPSessionManager),
]


@pytest.mark.parametrize(("shim", "sdk"), SHIM_CLASSES, ids=[s.__name__ for s, _ in SHIM_CLASSES])
def test_the_shims_public_names_are_not_the_sdks(shim: type, sdk: type) -> None:
    """A public name the SDK later gives a member of its own would be overridden (or shadow ours) silently."""
    ours = {name for name in vars(shim) if not name.startswith("_")}
    assert sorted(name for name in ours if hasattr(sdk, name)) == []


# -- the client: capabilities and unvalidated requests, against an in-process server -------------


def _tools(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    tools = {"tools": [{"name": "pin", "inputSchema": {"type": "object"}}]}
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return tools | {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    return tools


def _pinned(capabilities: ClientCapabilities) -> ClientCapabilities:
    return capabilities.model_copy(update={"experimental": {"pinned": {}}})


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_announcing_clients_server_sees_the_adjusted_capabilities(mode: str) -> None:
    seen: list[Any] = []

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
        seen.append(ctx.session.client_capabilities)
        return _tools(ctx)

    server: Server[Any] = Server("pin", on_list_tools=list_tools)
    async with sdk_shim.announcing_client(server, _pinned, mode=mode) as client:
        await client.list_tools()
    assert len(seen) == 1
    assert seen[0].experimental == {"pinned": {}}
    async with Client(server, mode=mode) as plain:
        await plain.list_tools()
    assert seen[1].experimental is None  # what the SDK itself would have announced


async def test_send_unvalidated_returns_the_answer_as_it_came() -> None:
    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
        return _tools(ctx)

    server: Server[Any] = Server("pin", on_list_tools=list_tools)
    async with Client(server, mode="legacy") as client:
        raw = await sdk_shim.send_unvalidated(client.session, "tools/list", {}, {"timeout": 5})
    assert raw == {"tools": [{"name": "pin", "inputSchema": {"type": "object"}}]}  # the wire's dict, not a model


# -- OAuth: the SDK's flow reaches the public steps ------------------------------------------------


class MemoryStorage:
    """The SDK's `TokenStorage` over two attributes."""

    def __init__(self, tokens: OAuthToken | None = None, client: OAuthClientInformationFull | None = None) -> None:
        self.tokens = tokens
        self.client = client

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class RecordedSteps(sdk_shim.OAuthSteps):
    """Each public step notes that the SDK's flow reached it, then does the SDK's own."""

    def __init__(self, storage: MemoryStorage) -> None:
        super().__init__(URL, OAuthClientMetadata(redirect_uris=[AnyUrl(URL)]), storage)
        self.steps: list[str] = []

    async def load_from_storage(self) -> None:
        self.steps.append("load_from_storage")
        await super().load_from_storage()

    async def refresh_token_request(self) -> httpx2.Request:
        self.steps.append("refresh_token_request")
        return await super().refresh_token_request()

    async def handle_refresh_response(self, response: httpx2.Response) -> bool:
        self.steps.append("handle_refresh_response")
        return await super().handle_refresh_response(response)

    def add_auth_header(self, request: httpx2.Request) -> None:
        self.steps.append("add_auth_header")
        super().add_auth_header(request)

    def oauth_flow(self, request: httpx2.Request) -> Any:
        self.steps.append("oauth_flow")
        return super().oauth_flow(request)


def _client() -> OAuthClientInformationFull:
    return OAuthClientInformationFull(client_id="pin", redirect_uris=[AnyUrl(URL)])


async def test_a_valid_stored_token_goes_through_the_public_steps() -> None:
    provider = RecordedSteps(MemoryStorage(OAuthToken(access_token="stored", token_type="Bearer"), _client()))
    request = httpx2.Request("GET", URL)
    flow = provider.async_auth_flow(request)
    sent = await flow.__anext__()
    assert sent is request
    assert sent.headers["Authorization"] == "Bearer stored"
    with pytest.raises(StopAsyncIteration):
        await flow.asend(httpx2.Response(200, request=sent))
    assert provider.steps == ["oauth_flow", "load_from_storage", "add_auth_header"]
    assert provider.loaded_from_storage


async def test_an_expired_token_is_refreshed_through_the_public_steps() -> None:
    expired = OAuthToken(access_token="old", token_type="Bearer", refresh_token="r", expires_in=1)
    provider = RecordedSteps(MemoryStorage(expired, _client()))
    await provider.load_from_storage()
    provider.context.token_expiry_time = time.time() - 60
    request = httpx2.Request("GET", URL)
    flow = provider.async_auth_flow(request)
    refresh = await flow.__anext__()
    assert refresh is not request
    assert b"grant_type=refresh_token" in refresh.content
    fresh = {"access_token": "new", "token_type": "Bearer", "expires_in": 3600}
    sent = await flow.asend(httpx2.Response(200, json=fresh, request=refresh))
    assert sent is request
    assert sent.headers["Authorization"] == "Bearer new"
    with pytest.raises(StopAsyncIteration):
        await flow.asend(httpx2.Response(200, request=sent))
    assert provider.steps[-4:] == ["oauth_flow", "refresh_token_request", "handle_refresh_response", "add_auth_header"]


def test_origin_issuer_is_the_sdks() -> None:
    assert sdk_shim.origin_issuer("https://Example.COM:443/mcp") == "https://example.com"
    assert sdk_shim.origin_issuer("http://127.0.0.1:8080/a/b") == "http://127.0.0.1:8080"


# -- the gateway: the host connection and the session table ----------------------------------------


async def test_the_host_connection_is_one_object_per_connection() -> None:
    seen: list[Any] = []

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
        seen.append(sdk_shim.host_connection(ctx))
        return _tools(ctx)

    server: Server[Any] = Server("pin", on_list_tools=list_tools)
    async with Client(server, mode="legacy") as client:
        await client.list_tools()
        await client.list_tools()
    async with Client(server, mode="legacy") as other:
        await other.list_tools()
    assert len(seen) == 3
    assert seen[0] is seen[1]  # across requests
    assert seen[2] is not seen[0]
    assert isinstance(seen[0].state, dict)
    assert hasattr(seen[0].exit_stack, "callback")
    assert seen[0].session_id is None  # no transport session in process


class OneSession(sdk_shim.SessionManagerHooks):
    """A table of one session that ends the open one for each new one."""

    def __init__(self) -> None:
        super().__init__(Server("pin"), json_response=True, max_sessions=1)
        self.admitting: list[list[str]] = []
        self.discarded: list[str] = []
        self.first_discarded = anyio.Event()

    def before_admission(self) -> None:
        self.admitting.append(self.session_ids())
        for session_id in self.session_ids():
            self.end_session(session_id)

    def session_discarded(self, session_id: str) -> None:
        self.discarded.append(session_id)
        self.first_discarded.set()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pin", "version": "0"}},
}


async def _post(manager: StreamableHTTPSessionManager, body: dict[str, Any], session: str = "") -> tuple[int, str]:
    """One POST through the manager's ASGI entry: (status, the session id it names)."""
    headers = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
    if session:
        headers.append((b"mcp-session-id", session.encode()))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"", "headers": headers}
    pending = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await manager.handle_request(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return int(start["status"]), dict(start.get("headers", [])).get(b"mcp-session-id", b"").decode()


async def test_the_session_table_hooks_see_admission_and_discard() -> None:
    table = OneSession()
    async with table.run():
        status, first = await _post(table, INITIALIZE)
        assert (status, table.session_ids()) == (200, [first])
        status, second = await _post(table, INITIALIZE)  # the SDK alone would answer 503
        assert status == 200
        assert table.session_ids() == [second]
        with anyio.fail_after(5):  # the ended session's discard runs in the background
            await table.first_discarded.wait()
        status, _ = await _post(table, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, first)
        assert status == 404  # an ended session's id is refused
    assert table.admitting == [[], [first]]
    assert table.discarded[0] == first
